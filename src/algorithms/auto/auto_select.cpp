// auto: the algorithm that chooses the algorithm. It runs one algorithm of
// the product line, which the registry hands it (candidates.hpp), and
// forwards every frame to that "current" one, while it keeps a few figures
// of the workload (live objects, the share moving, the churn, whether every
// box has one size, whether the world is a plane); a rule over those
// figures (auto_policy.hpp) names the algorithm that suits them, and once
// the same name has held for a few frames, auto switches to it. The output
// is the current algorithm's, so it is exactly every other algorithm's.
//
// Switching without a spike: a recomputing algorithm (unisize, box-pruning,
// dual-axis) finds every pair again each frame, so it takes over at once,
// its first frame costing one of its ordinary frames. A tracking one (sap,
// multi-sap) must first hold every object: it is built beside the current
// one over kHandoverFrames frames, each frame getting the frame's changes
// to the objects it holds and a slice of the others as additions, and
// reporting into a private pair manager whose pairs are dropped. Once it
// holds every live object, it knows every pair the broad phase's pair
// manager holds, and replaces the current one. A handover costs about one
// insertion of the world, so a tracking choice must hold longer
// (kTrackingHoldFrames) than a recomputing one (kHoldFrames).
//
// Invariants after update(): flags_ marks exactly the live slots, live_
// counts them, odd_ and inexact_ (while sizes_known_) and raised_ count the live boxes off the
// reference size, not exact translates of the reference box, and off the plane; the next algorithm, while built, holds
// exactly the live objects marked kJoined, with their current boxes, and the scan has not passed any live object it
// does not hold.
//
// The one forced switch: when unisize runs and a box of another size comes,
// the frame goes to sap built from every live box at once (a spike, the
// price of a world that stops being one size). Cost besides the current
// algorithm's: O(changes) per frame, and O(n / kHandoverFrames) during a
// handover. Method and measurements: docs/algorithms/auto.md.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <new>
#include <string>

#include "algorithms/auto/auto_policy.hpp"
#include "algorithms/builtin.hpp"
#include "detail/frame_boxes.hpp"
#include "detail/reserve.hpp"
#include "detail/settings.hpp"

namespace sapling::detail {
namespace {

// The weight of a new frame in the averages of the shares.
constexpr double kNewWeight = 0.5;

bool flat_box(const Box3& b) { return b.min[2] == b.max[2]; }

// The size of the reference box (the first box added to an empty world,
// unisize's own reference), and the two tests of a box against it, both
// branch-free in float (they run for every moved box, every frame):
// - same_size(): the same extents per axis up to a relative 2^-12 and the
//   rounding of the box's coordinates (2^-20 of their magnitude), so that
//   boxes moved by float arithmetic keep their size;
// - exact_translate(): exactly [min, min + size] in float, size the
//   reference's extents rounded to float: unisize's own test for running
//   its sweep on the boxes themselves (sapling/unisize.hpp). Boxes of one
//   size only up to rounding (moved by adding a step to min and max, built
//   as centre +- half extent, in units whose coordinates round) take its
//   other path, 1.5-2x as long (docs/algorithms/auto.md).
// A heuristic for the rule, not the rule unisize enforces: unisize checks
// what it is given, and auto hands the world to sap when it refuses.
struct SizeReference {
  std::array<float, 3> extent{}, slack{};

  explicit SizeReference(const Box3& box = {}) {
    for (int k = 0; k < 3; ++k) {
      extent[k] = box.max[k] - box.min[k];
      slack[k] = 0x1p-12f * extent[k];
    }
  }
  // The tests over the first kAxes axes: in a plane (a flat reference)
  // z is exact for every flat box, and a raised one is flagged anyway.
  template <int kAxes = 3>
  bool same_size(const Box3& b) const noexcept {
    int same = 1;
    for (int k = 0; k < kAxes; ++k) {
      const float magnitude = std::max(std::abs(b.min[k]), std::abs(b.max[k]));
      same &= int(std::abs((b.max[k] - b.min[k]) - extent[k]) <= slack[k] + 0x1p-20f * magnitude);
    }
    return same != 0;
  }
  template <int kAxes = 3>
  bool exact_translate(const Box3& b) const noexcept {
    int exact = 1;
    for (int k = 0; k < kAxes; ++k) exact &= int(b.max[k] == b.min[k] + extent[k]);
    return exact != 0;
  }
  bool flat() const noexcept { return extent[2] == 0; }
};

class Auto final : public Algorithm {
 public:
  Auto(const Options& options, Candidates candidates)
      : candidates_(std::move(candidates)), tasks_(options), inner_options_(options) {
    inner_options_.tasks = tasks_.get();  // one pool for the current algorithm and the next
    inner_options_.settings.clear();
  }

  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override {
    ++frame_;
    const Reported reported = step(ops, ids, pairs);
    if (runs_.empty() || runs_.back().name != current_name_) runs_.push_back(Run{current_name_, 0});
    ++runs_.back().frames;
    return reported;
  }

  // A switch made at once reports every pair.
  Reported step(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
    const std::size_t live_before = live_;
    const bool first = current_ == nullptr || live_before == 0;
    age_ = first ? 0 : age_ + 1;
    record(ops, live_before);
    const Workload w = workload(ops, live_before, first, pairs.size());

    // A box unisize would refuse: sap takes the whole world now.
    if (current_ != nullptr && !takes(ops)) {
      switch_at_once("sap", "a box of another size came: sap takes boxes of any size", ops, ids, pairs);
      return Reported::kEveryPair;
    }
    const Choice choice = choose(w, current_name_, candidates_);
    if (current_ == nullptr || (first && choice.name != current_name_)) {
      switch_at_once(choice.name, choice.reason, ops, ids, pairs);
      return Reported::kEveryPair;
    }
    if (decide(choice) && candidates_.recomputes(choice.name)) {
      switch_at_once(choice.name, choice.reason, ops, ids, pairs);
      return Reported::kEveryPair;
    }
    const Reported reported = current_->update(ops, ids, pairs);
    if (next_ != nullptr) hand_over(ops, ids);
    return reported;
  }

  bool query(const Box3& box, std::vector<Slot>& out) const override {
    return current_ != nullptr && current_->query(box, out);
  }
  bool ray_cast(const Ray3& ray, RayVisitor visit) const override {
    return current_ != nullptr && current_->ray_cast(ray, visit);
  }

  void reserve(std::size_t objects) override {
    if (objects > flags_.size()) flags_.reserve(objects);
    if (current_ != nullptr) current_->reserve(objects);
  }

  std::size_t memory_bytes() const override {
    std::size_t bytes = flags_.capacity() + changes_.memory_bytes() + moved_in_.capacity() * sizeof(Slot) +
                        boxes_in_.capacity() * sizeof(Box3) + sink_.memory_bytes();
    if (current_ != nullptr) bytes += current_->memory_bytes();
    if (next_ != nullptr) bytes += next_->memory_bytes();
    return bytes;
  }

  bool validate() const override {
    std::size_t live = 0, odd = 0, inexact = 0, raised = 0;
    for (const std::uint8_t f : flags_) {
      live += (f & kLive) != 0;
      odd += (f & kLive) != 0 && (f & kOdd) != 0;
      inexact += (f & kLive) != 0 && (f & kInexact) != 0;
      raised += (f & kLive) != 0 && (f & kRaised) != 0;
    }
    if (live != live_ || (sizes_known_ && (odd != odd_ || inexact != inexact_)) || raised != raised_) return false;
    if (current_ != nullptr && !current_->validate()) return false;
    return next_ == nullptr || next_->validate();
  }

  void debug_draw(DebugDraw& draw, std::span<const Id> ids) const override {
    if (current_ != nullptr) current_->debug_draw(draw, ids);
    draw.text("algorithm", current_name_);
    draw.text("reason", reason_);
    if (next_ != nullptr) draw.text("next", next_name_);
    draw.count("switches", switches_);
    draw.count("handed over", handed_over_);
    draw.text("runs", runs_text());
    draw.text("handovers", handovers_text());
  }

 private:
  // What auto keeps per slot, one byte: whether it is live, whether its
  // box is off the reference size, not an exact translate of the reference
  // box, or off the plane, whether the next
  // algorithm holds it (during a handover), and whether this frame moved
  // or added it (during a switch or a handover frame only).
  static constexpr std::uint8_t kLive = 1, kOdd = 2, kRaised = 4, kJoined = 8, kInexact = 32;

  // The frame's operations into flags_ and the counts of live, odd and
  // raised boxes; the size reference is the first box added to an empty
  // world (unisize's own rule, so that "one size" means what it takes).
  // Sizes matter only in a plane (one size in a plane is unisize's world):
  // while some box is raised off it they are not followed, and once none
  // is, every live box is measured again (sizes_known_).
  void record(const FrameOps& ops, std::size_t live_before) {
    if (live_before == 0 && !ops.added.empty()) reference_ = SizeReference(ops.added_boxes[0]);
    if (live_before == 0) sizes_known_ = true;
    if (raised_ > 0) sizes_known_ = false;
    for (const Slot s : ops.removed) {
      std::uint8_t& f = flags_[s];
      odd_ -= (f & kOdd) != 0;
      inexact_ -= (f & kInexact) != 0;
      raised_ -= (f & kRaised) != 0;
      f &= kJoined;  // not live
    }
    set_shapes(ops.moved, ops.moved_boxes);
    std::size_t slots = flags_.size();
    for (const Slot s : ops.added) slots = std::max(slots, std::size_t{s} + 1);
    if (slots > flags_.size()) {
      reserve_geometric(flags_, slots);
      flags_.resize(slots, 0);
    }
    for (const Slot s : ops.added) flags_[s] = kLive;
    set_shapes(ops.added, ops.added_boxes);
    live_ = live_before - ops.removed.size() + ops.added.size();
    if (!sizes_known_ && raised_ == 0) measure_sizes(ops);
  }

  // Live boxes' raised, odd and inexact flags, and the counts, for their
  // new boxes. It runs for every moved box of every frame: the reference
  // and the counts are kept in locals (a store to flags_, a byte, could
  // alias the members, and would reload them every box).
  void set_shapes(std::span<const Slot> slots, std::span<const Box3> boxes) {
    if (!sizes_known_) {
      set_shapes_of<0, false>(slots, boxes);
    } else if (!reference_.flat()) {
      set_shapes_of<3, false>(slots, boxes);
    } else if (inexact_ == 0) {
      set_shapes_of<2, true>(slots, boxes);
    } else {
      set_shapes_of<2, false>(slots, boxes);
    }
  }
  // kAxes: the axes whose sizes are followed (0: none, sizes unknown).
  // kExactWorld: every box an exact translate so far, so that a box off it
  // is rare and worth a branch (the size test skipped for the others); in
  // a rounded world whether a box is exact is a coin toss, and both tests
  // run branch-free.
  template <int kAxes, bool kExactWorld>
  void set_shapes_of(std::span<const Slot> slots, std::span<const Box3> boxes) {
    constexpr std::uint8_t kShape = kAxes > 0 ? (kRaised | kOdd | kInexact) : kRaised;
    const SizeReference reference = reference_;
    std::uint8_t* const flags = flags_.data();
    // The three counts move together, as 21-bit fields of one word: what
    // the new boxes have and what the old ones had, a chunk at a time.
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    for (std::size_t first = 0; first < slots.size(); first += kChunk) {
      const std::size_t last = std::min(slots.size(), first + kChunk);
      std::uint64_t now = 0, before = 0;
      for (std::size_t k = first; k < last; ++k) {
        const Box3& box = boxes[k];
        int shape = int(!flat_box(box)) * kRaised;
        if constexpr (kAxes > 0) {
          const int off = int(!reference.exact_translate<kAxes>(box));
          if constexpr (kExactWorld) {
            if (off != 0) [[unlikely]] {
              shape |= kInexact | int(!reference.same_size<kAxes>(box)) * kOdd;
            }
          } else {
            shape |= off * kInexact | (off & int(!reference.same_size<kAxes>(box))) * kOdd;
          }
        }
        std::uint8_t& f = flags[slots[k]];
        now += kShapeCounts[shape];
        before += kShapeCounts[f & kShape];
        f = static_cast<std::uint8_t>((f & ~kShape) | shape);
      }
      const auto field = [](std::uint64_t counts, int k) { return std::size_t{(counts >> (21 * k)) & 0x1fffff}; };
      raised_ += field(now, 0) - field(before, 0);
      odd_ += field(now, 1) - field(before, 1);
      inexact_ += field(now, 2) - field(before, 2);
    }
  }
  // The shape bits of a flag byte as counts, 21 bits each: raised, odd, inexact.
  static constexpr std::array<std::uint64_t, 64> kShapeCounts = [] {
    std::array<std::uint64_t, 64> counts{};
    for (std::size_t f = 0; f < counts.size(); ++f) {
      counts[f] = ((f & kRaised) != 0 ? 1u : 0u) | ((f & kOdd) != 0 ? std::uint64_t{1} << 21 : 0) |
                  ((f & kInexact) != 0 ? std::uint64_t{1} << 42 : 0);
    }
    return counts;
  }();

  // Every live box's size measured again (a world that came back to a plane).
  void measure_sizes(const FrameOps& ops) {
    const ChangesMarked marked(*this, ops);
    odd_ = inexact_ = 0;
    for (Slot s = 0; s < flags_.size(); ++s) {
      std::uint8_t& f = flags_[s];
      const bool live = (f & kLive) != 0;
      const bool inexact = live && !reference_.exact_translate(current_box(s, ops));
      const bool odd = inexact && !reference_.same_size(current_box(s, ops));
      f = static_cast<std::uint8_t>((f & ~(kOdd | kInexact)) | (odd ? kOdd : 0) | (inexact ? kInexact : 0));
      odd_ += odd;
      inexact_ += inexact;
    }
    sizes_known_ = true;
  }

  // Where this frame's moved and added boxes are (current_box()), marked
  // for a frame that hands objects to another algorithm, and unmarked.
  void mark_changes(const FrameOps& ops) {
    changes_.begin(ops.moved_boxes, ops.added_boxes);
    changes_.mark_all(ops.moved, ops.added, flags_.size());
  }
  void unmark_changes(const FrameOps& ops) { changes_.unmark(ops.moved, ops.added); }
  // The frame's changes marked for the scope's current_box() calls.
  struct ChangesMarked {
    ChangesMarked(Auto& owner, const FrameOps& frame) : self(owner), ops(frame) { self.mark_changes(ops); }
    ~ChangesMarked() { self.unmark_changes(ops); }
    ChangesMarked(const ChangesMarked&) = delete;
    ChangesMarked& operator=(const ChangesMarked&) = delete;
    Auto& self;
    const FrameOps& ops;
  };

  Workload workload(const FrameOps& ops, std::size_t live_before, bool first, std::size_t pairs_before) {
    Workload w;
    w.live = live_;
    if (live_before > 0) w.pairs_per_box = static_cast<double>(pairs_before) / static_cast<double>(live_before);
    w.first_frame = first;
    w.new_world = age_ == 1;
    w.one_size = live_ > 0 && sizes_known_ && odd_ == 0;
    w.exact_size = w.one_size && inexact_ == 0;
    w.flat = live_ > 0 && raised_ == 0;
    if (live_before > 0) {
      const double before = static_cast<double>(live_before);
      const double moved = static_cast<double>(ops.moved.size()) / before;
      const double churn = static_cast<double>(ops.added.size() + ops.removed.size()) / before;
      // The first frame with a world before it sets the averages.
      const double keep = seen_motion_ ? 1 - kNewWeight : 0.0;
      moved_share_ = (1 - keep) * moved + keep * moved_share_;
      churn_share_ = (1 - keep) * churn + keep * churn_share_;
      seen_motion_ = true;
      w.mass_insertion = ops.added.size() >= live_before;
    }
    w.moved_share = moved_share_;
    w.churn_share = churn_share_;
    return w;
  }

  // Whether the current algorithm takes the frame's boxes (only unisize
  // may refuse some); asked the way the BroadPhase asks it, batch by batch.
  bool takes(const FrameOps& ops) const {
    if (current_name_ != "unisize") return true;
    const FrameOps before_moves{ops.removed, {}, {}, {}, {}, ops.boxes, ops.filter};
    if (!current_->accepts(Operation::kMove, {}, ops.moved_boxes, before_moves)) return false;
    const FrameOps before_adds{ops.removed, ops.moved, ops.moved_boxes, {}, {}, ops.boxes, ops.filter};
    return static_cast<bool>(current_->accepts(Operation::kAdd, {}, ops.added_boxes, before_adds));
  }

  // Hysteresis: true when `choice` is to be switched to at once. A choice
  // other than the algorithm running (or being handed the world) must hold
  // kHoldFrames frames (kTrackingHoldFrames for a tracking one), unless
  // urgent. Then a tracking algorithm starts being handed the world,
  // replacing an earlier handover; the running one, chosen again, drops it.
  bool decide(const Choice& choice) {
    if (choice.name == current_name_ && next_ == nullptr) {
      reason_ = choice.reason;  // the rule's latest word on the running one
      wanted_ = {};
      return false;
    }
    if (next_ != nullptr && choice.name == next_name_) {  // its handover is under way
      wanted_ = {};
      return false;
    }
    if (choice.name != wanted_) {
      wanted_ = choice.name;
      wanted_frames_ = 0;
    }
    if (++wanted_frames_ < hold_frames(choice.name, candidates_) && !choice.urgent) return false;
    wanted_ = {};
    if (choice.name == current_name_) {
      reason_ = choice.reason;
      next_.reset();
      return false;
    }
    if (candidates_.recomputes(choice.name)) return true;
    start_handover(choice);
    return false;
  }

  std::unique_ptr<Algorithm> make(std::string_view name) const {
    const Candidate* candidate = candidates_.find(name);
    return candidate != nullptr ? candidate->make(inner_options_) : nullptr;
  }

  // The frame goes to a new algorithm `name`, given every live object (as
  // of the frame's end) as an addition, into the broad phase's pairs: a
  // recomputing one replaces the pair set itself; a tracking one reports
  // only additions, so the pair set is first emptied.
  void switch_at_once(std::string_view name, std::string_view reason, const FrameOps& ops, std::span<const Id> ids,
                      PairManager& pairs) {
    std::unique_ptr<Algorithm> fresh = make(name);
    if (fresh == nullptr) throw std::bad_alloc();  // a built-in factory fails only for want of memory
    // Every live object came this frame (a world filled from empty), or
    // moved in it (a world where everything moves): the frame's own
    // additions or moves are the whole world, with no copy of it.
    const bool all_new = ops.removed.empty() && ops.moved.empty() && live_ == ops.added.size();
    const bool all_moved = ops.removed.empty() && ops.added.empty() && live_ == ops.moved.size();
    moved_in_.clear();
    boxes_in_.clear();
    if (!all_new && !all_moved) {
      const ChangesMarked marked(*this, ops);
      moved_in_.reserve(live_);
      boxes_in_.reserve(live_);
      for (Slot s = 0; s < flags_.size(); ++s) {
        if ((flags_[s] & kLive) == 0) continue;
        moved_in_.push_back(s);
        boxes_in_.push_back(current_box(s, ops));
      }
    }
    const FrameOps world = all_new ? ops
                           : all_moved
                               ? FrameOps{{}, {}, {}, ops.moved, ops.moved_boxes, ops.boxes, ops.filter, ops.store}
                               : FrameOps{{}, {}, {}, moved_in_, boxes_in_, ops.boxes, ops.filter, ops.store};
    if (name == "unisize" &&
        !fresh->accepts(Operation::kAdd, {}, world.added_boxes, FrameOps{{}, {}, {}, {}, {}, {}, {}})) {
      fresh = make("sap");  // the reference rule differs from unisize's on this world: sap takes it
      name = "sap";
      reason = "boxes of nearly one size that unisize refuses: sap takes boxes of any size";
      if (fresh == nullptr) throw std::bad_alloc();
    }
    if (!candidates_.recomputes(name)) pairs.remove_all();
    // The old structures go before the new one is built, so that it can
    // take their memory (a million boxes' switch from sap to unisize: 533
    // against 139 ms for unisize's own first step). A frame that fails for
    // want of memory has the BroadPhase rebuild the algorithm anyway.
    const bool switching = current_ != nullptr;
    // Box pruning's buffers pass on where both run it (sap to box-pruning,
    // a world that starts to move whole): in memory already, where fresh
    // pages cost that frame's pruning 40-55 ms at half a million boxes.
    if (switching) {
      BoxPruner* const room = held_pruner(*current_);
      BoxPruner* const pruner = held_pruner(*fresh);
      if (room != nullptr && pruner != nullptr) pruner->take_room(std::move(*room));
    }
    current_.reset();
    next_.reset();
    const Clock::time_point start = Clock::now();
    fresh->reserve(flags_.size());  // every live slot is below it
    fresh->update(world, ids, pairs);
    if (switching) {
      ++switches_;
      log_switch(current_name_, name, 1, Clock::now() - start);
    }
    current_ = std::move(fresh);
    current_name_ = name;
    reason_ = reason;
    // The world's copy is not kept (switches are rare; a frame's moves
    // during a handover take far less).
    std::vector<Slot>().swap(moved_in_);
    std::vector<Box3>().swap(boxes_in_);
  }

  // The box of a live object as of the frame's end.
  const Box3& current_box(Slot s, const FrameOps& ops) const {
    const Box3* now = changes_.changed_box(s);
    return now != nullptr ? *now : ops.boxes[s];
  }

  void start_handover(const Choice& choice) {
    next_ = make(choice.name);
    if (next_ == nullptr) throw std::bad_alloc();
    next_name_ = choice.name;
    next_reason_ = choice.reason;
    for (std::uint8_t& f : flags_) f &= static_cast<std::uint8_t>(~kJoined);
    scan_ = 0;
    scan_end_ = static_cast<Slot>(flags_.size());
    slice_ = std::max(kMinSlice, (live_ + kHandoverFrames - 1) / kHandoverFrames);
  }

  // One frame of the handover: the next algorithm gets the frame's
  // operations on the objects it holds, the frame's new objects, and a
  // slice of the live objects it does not hold yet; its pairs go to the
  // sink and are dropped. Once the scan has passed every slot, it holds
  // the world and becomes the current algorithm.
  void hand_over(const FrameOps& ops, std::span<const Id> ids) {
    removed_in_.clear();
    moved_in_.clear();
    boxes_in_.clear();
    added_in_.clear();
    added_boxes_in_.clear();
    for (const Slot s : ops.removed) {
      if ((flags_[s] & kJoined) != 0) removed_in_.push_back(s);
    }
    for (std::size_t k = 0; k < ops.moved.size(); ++k) {
      if ((flags_[ops.moved[k]] & kJoined) == 0) continue;
      moved_in_.push_back(ops.moved[k]);
      boxes_in_.push_back(ops.moved_boxes[k]);
    }
    for (std::size_t k = 0; k < ops.added.size(); ++k) {
      flags_[ops.added[k]] |= kJoined;
      added_in_.push_back(ops.added[k]);
      added_boxes_in_.push_back(ops.added_boxes[k]);
    }
    std::size_t taken = 0;
    const ChangesMarked marked(*this, ops);
    for (; scan_ < scan_end_ && taken < slice_; ++scan_) {
      std::uint8_t& f = flags_[scan_];
      if ((f & kLive) == 0 || (f & kJoined) != 0) continue;
      f |= kJoined;
      added_in_.push_back(scan_);
      added_boxes_in_.push_back(current_box(scan_, ops));
      ++taken;
    }
    handed_over_ += taken;
    const Clock::time_point start = Clock::now();
    next_->update(
        FrameOps{removed_in_, moved_in_, boxes_in_, added_in_, added_boxes_in_, ops.boxes, ops.filter, ops.store}, ids,
        sink_);
    sink_.abandon_frame();
    handover_time_ += Clock::now() - start;
    ++handover_frames_;
    if (scan_ < scan_end_) return;
    log_switch(current_name_, next_name_, handover_frames_, handover_time_);
    current_ = std::move(next_);
    current_name_ = next_name_;
    reason_ = next_reason_;
    ++switches_;
  }

  // What `sapling run` shows of the switches: the algorithms run, with
  // their frames, and each switch with the extra work it cost (the new
  // algorithm's frames while it was being built: a switch at once takes
  // one, a handover several). Wall-clock time, for the user's eyes only:
  // no choice depends on it.
  using Clock = std::chrono::steady_clock;
  struct Run {
    std::string name;
    std::uint64_t frames = 0;
  };
  struct Switch {
    std::string from, to;
    std::uint32_t frame = 0, frames = 0;  // the frame it completed in, the frames it took
    double ms = 0;
  };
  static constexpr std::size_t kShownSwitches = 8;

  void log_switch(std::string_view from, std::string_view to, std::uint32_t frames, Clock::duration time) {
    const double ms = std::chrono::duration<double, std::milli>(time).count();
    if (switch_log_.size() == kShownSwitches) switch_log_.erase(switch_log_.begin());
    switch_log_.push_back(Switch{std::string(from), std::string(to), frame_ - 1, frames, ms});
    handover_time_ = {};
    handover_frames_ = 0;
  }

  std::string runs_text() const {
    std::string text;
    for (const Run& r : runs_) {
      if (!text.empty()) text += ", then ";
      text += r.name + " " + std::to_string(r.frames) + (r.frames == 1 ? " frame" : " frames");
    }
    return text;
  }

  std::string handovers_text() const {
    std::string text;
    if (switches_ > switch_log_.size()) text = std::to_string(switches_ - switch_log_.size()) + " earlier; ";
    for (const Switch& s : switch_log_) {
      if (&s != &switch_log_.front()) text += "; ";
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.2f", s.ms);
      text += s.from + " -> " + s.to + " at frame " + std::to_string(s.frame) +
              (s.frames == 1 ? " at once, " : " over " + std::to_string(s.frames) + " frames, ") + ms + " ms";
    }
    return text;
  }

  Candidates candidates_;  // the product line, from the registry
  OptionTasks tasks_;
  Options inner_options_;  // the user's, on auto's task system, without settings

  std::unique_ptr<Algorithm> current_;  // reports to the broad phase's pairs
  std::string current_name_, reason_;
  std::unique_ptr<Algorithm> next_;  // being handed the world; reports to sink_
  std::string next_name_, next_reason_;
  PairManager sink_;

  std::vector<std::uint8_t> flags_;  // by slot: kLive, kOdd, kInexact, kRaised, kJoined
  FrameBoxes changes_;               // where the frame's moved and added boxes are, while marked
  std::size_t live_ = 0, odd_ = 0, inexact_ = 0, raised_ = 0;
  bool sizes_known_ = true;  // kOdd, kInexact and their counts follow the sizes (while no box is raised)
  SizeReference reference_;
  double moved_share_ = 0, churn_share_ = 0;  // averages over recent frames
  bool seen_motion_ = false;                  // the averages hold a frame
  std::uint32_t frame_ = 0;
  std::uint32_t age_ = 0;  // frames since the world was last empty

  std::string_view wanted_;  // the choice holding, not yet switched to (a literal of auto_policy.hpp)
  int wanted_frames_ = 0;

  Slot scan_ = 0, scan_end_ = 0;
  std::size_t slice_ = 0;
  std::uint64_t switches_ = 0, handed_over_ = 0;
  std::vector<Run> runs_;
  std::vector<Switch> switch_log_;  // the last kShownSwitches
  Clock::duration handover_time_{};
  std::uint32_t handover_frames_ = 0;

  // Scratch: the operations handed to an inner algorithm.
  std::vector<Slot> removed_in_, moved_in_, added_in_;
  std::vector<Box3> boxes_in_, added_boxes_in_;
};

}  // namespace

std::unique_ptr<Algorithm> make_auto(const Options& options, Candidates candidates) {
  no_settings(options);
  return std::make_unique<Auto>(options, std::move(candidates));
}

}  // namespace sapling::detail
