// unisize: the bi-dimensional sweep and prune for boxes of one size of
// Capannini and Larsson, "Output Sensitive Collision Detection for Unisize
// Boxes" (SIGRAD 2016), Algorithm 1 (section 3; section 7 for 3D), with the
// paper's names: Sort(P) a stable LSD radix sort of an axis' endpoints, lows
// before highs on equal keys; R the rank array, R[p] and R[p + n] the
// positions of p's low and high in the sorted first axis; S the set of
// active ranks while the second axis is swept, a succinct 64-ary bit tree
// (bit_tree.hpp) whose range query reads only the words that hold values.
//
// Invariants:
// - Claim 1: all intervals have one length, so none contains another in the
//   sorted order, and b overlaps a on the first axis iff exactly one of b's
//   ranks lies strictly between a's: every active rank in a's range is a
//   collision, reported once (lines 7-10), and leaves S at p's high (line 12);
// - one size: the first box added while none is live fixes the size, and
//   every box must match it (the tolerance rule: sapling/unisize.hpp); then
//   highs come in the order of lows, so sorting the lows sorts the highs;
// - S holds the strip's active ranks, but for a few objects already gone,
//   told apart in the query by their high.
//
// Beyond the paper (each explained where it is done): the x-sorted boxes
// are cut into strips of 16k boxes, each swept with local ranks in cache,
// strips in parallel with their pairs in strip order (the same on any thread
// count); S without the paper's linked list; no unpredictable branches in
// the hot loops; persistence by PairManager::assign of each frame's pairs.
// In 3D the two sweep axes are those along which the boxes spread most and
// the third is tested per candidate (skipped when all boxes overlap on it).
//
// Cost per frame: O(n) radix sorts and merges, O(n log64 n) updates of S,
// O((n + |C|) log64 n) range queries for |C| pairs (in practice O(1) per
// pair), log64 n being three with 16k-box strips. That bound holds in 2D and
// flat 3D worlds; elsewhere the third-axis test adds candidates. Fewer than
// 2^31 - 1 live boxes. The sweep alone is the public UnisizePruner
// (sapling/unisize.hpp), defined at the end of this file.
//
// Choose it for many boxes of one size with many overlaps (crowds,
// particles, tiles; flat worlds above all): its time stays flat while the
// candidates of one-axis sweeps multiply. box-pruning for sparse scenes and
// mixed sizes, dual-axis for flat worlds of any sizes.
// The full method, the size rule, measurements and what was tried:
// docs/algorithms/unisize.md.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "algorithms/builtin.hpp"
#include "algorithms/unisize/bit_tree.hpp"
#include "detail/axis_sampler.hpp"
#include "detail/radix_sort.hpp"
#include "detail/scratch_pool.hpp"
#include "detail/settings.hpp"
#include "detail/slot_map.hpp"
#include "detail/task_plan.hpp"
#include "sapling/float_key.hpp"
#include "sapling/task_system.hpp"
#include "sapling/unisize.hpp"

namespace sapling::detail {
namespace {

using Extent = std::array<float, 3>;

bool finite(const Box3& b) {
  for (int k = 0; k < 3; ++k) {
    if (!std::isfinite(b.min[k]) || !std::isfinite(b.max[k])) return false;
  }
  return true;
}

// The exact case of the size rule, max == min + size on every axis in float
// arithmetic (then a box is its own enlargement [min, min + size]), and
// finite coordinates, every condition evaluated (no branch per axis): a
// finite max equal to min + size (size finite) implies a finite min.
bool fits_finite(const Box3& b, const Extent& size) {
  int good = 1;
  for (int k = 0; k < 3; ++k) {
    good &= int(b.max[k] == b.min[k] + size[k]) & int(std::fabs(b.max[k]) <= std::numeric_limits<float>::max());
  }
  return good != 0;
}

// The size rule's reference, fixed by the first box: per axis its size
// fl(max - min) (the difference rounded to the nearest float) and its slack,
// 2^-10 size + 2^-16 of the first box's largest coordinate magnitude.
struct Reference {
  Extent size{};
  std::array<double, 3> slack{};
};

constexpr double kRelativeSlack = 0x1p-10;   // of the size
constexpr double kMagnitudeSlack = 0x1p-16;  // of a box's largest |coordinate|: 128..256 ulps

double magnitude(const Box3& b, int k) { return std::max(std::fabs(double(b.min[k])), std::fabs(double(b.max[k]))); }

// The reference of a first box with finite coordinates, or false if its
// size overflows a float.
bool make_reference(const Box3& first, Reference& out) {
  for (int k = 0; k < 3; ++k) {
    const float size = first.max[k] - first.min[k];
    if (!std::isfinite(size)) return false;
    out.size[k] = size == 0 ? 0.0f : size;  // not -0
    out.slack[k] = kRelativeSlack * size + kMagnitudeSlack * magnitude(first, k);
  }
  return true;
}

// The size rule: on every axis |(max - min) - size| <= slack + 2^-16 M, M
// the box's largest |coordinate| on that axis, evaluated in double (where
// max - min is exact unless the two differ by more than 2^29 in magnitude).
// A box that fits_finite() is within (|max - min - size| <= ulp(max) / 2).
// False for infinite coordinates; finite() tells them apart.
bool within(const Box3& b, const Reference& r) {
  for (int k = 0; k < 3; ++k) {
    const double extent = double(b.max[k]) - double(b.min[k]);
    if (!(std::fabs(extent - r.size[k]) <= r.slack[k] + kMagnitudeSlack * magnitude(b, k))) return false;
  }
  return true;
}

// Widens r's slack just enough that within(b, r) holds.
void widen_to_take(const Box3& b, Reference& r) {
  for (int k = 0; k < 3; ++k) {
    const double off = std::fabs((double(b.max[k]) - double(b.min[k])) - r.size[k]) - kMagnitudeSlack * magnitude(b, k);
    if (off > r.slack[k]) r.slack[k] = std::nextafter(off, std::numeric_limits<double>::infinity());
  }
}

// Refusals name the box by its index in `boxes` and, if `ids` is not
// empty, its id.
Status refusal(Operation op, std::span<const Id> ids, std::size_t i, const char* why) {
  return Status::unsupported(op, ids.empty() ? 0 : ids[i], i, why);
}

// Makes `ref` from a first box, or refuses it (infinite, or a size that
// overflows a float).
Status refuse_first(Operation op, std::span<const Id> ids, std::span<const Box3> first, Reference& ref) {
  if (!finite(first[0]))
    return refusal(op, ids, 0, "unisize: coordinates must be finite (an infinite box has no size)");
  if (!make_reference(first[0], ref))
    return refusal(op, ids, 0, "unisize: the size max - min of the first box overflows a float");
  return {};
}

// The first box that breaks the size rule, named; the common case (the size
// exactly) in one test per box without a branch per axis.
Status refuse_size(Operation op, std::span<const Id> ids, std::span<const Box3> boxes, const Reference& ref) {
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (fits_finite(boxes[i], ref.size)) continue;
    if (!finite(boxes[i]))
      return refusal(op, ids, i, "unisize: coordinates must be finite (an infinite box has no size)");
    if (!within(boxes[i], ref)) {
      return refusal(op, ids, i,
                     "unisize: every box must have the size of the first up to rounding (|max - min - "
                     "size| <= 2^-10 size + 2^-16 (|coordinates| of the box + of the first) on each axis)");
    }
  }
  return {};
}

// The least float e >= max - min (the real difference), so that
// min + e >= max in float arithmetic too (rounding is monotone): the box
// lies in [min, min + e]. round_sum() (box.hpp) rounds the difference
// exactly.
float enclosing_extent(float min, float max) { return round_sum(max, -double(min), true); }

// The key of max (of the box, or of its enlargement) from the key of min:
// min + S in float.
inline std::uint32_t high_key(std::uint32_t low_key, float size) { return float_key(key_float(low_key) + size); }

// Radix sorts of 32-bit keys: 11-bit digits (the counts of a pass fit in L1).
constexpr detail::RadixDigits kDigits{11, 3};
using RadixCounts = std::array<std::uint32_t, kDigits.counts()>;

// The three roles of the axes: x is ranked (the paper's first axis), y is
// swept (its second axis), t is tested per candidate unless flat.
using Axes = detail::AxisRoles;

// Algorithm 1 over the live boxes, one frame. Objects are named by slot.
//
// The ranks of the whole frame would spread S, R and the rank-to-object map
// over tens of megabytes, and every range query would miss the cache
// (measured: 200 ms of a 2^20-box frame went to those misses). So the boxes,
// sorted along x, are cut into strips of consecutive boxes, and
// Algorithm 1 runs on each strip with ranks local to it, its arrays in
// cache. A strip also holds the boxes before it that reach its first low
// ("straddlers"; with one size they are consecutive too), and reports a pair
// only if one of its boxes is its own: a pair belongs to the strip of its
// later box in x order, which holds the earlier one as well.
class UnisizeSweep {
 public:
  // What run() knows of its boxes: every box is exactly [min, min + size]
  // (kExact), or every box is within the size rule (kWithin), or nothing
  // (kCheck: the rule is checked too).
  enum class Input { kExact, kWithin, kCheck };

  // Reports every overlapping pair of the boxes of `live` once, as
  // report(name, name): names[slot], or the slot if `names` is empty. With
  // kCheck, first checks the size rule while it reads the boxes, and
  // reports nothing and returns false if a box breaks it.
  //
  // When every box fits ref.size exactly (known, or tested while the boxes
  // are read), the sweep runs on the boxes with S = ref.size (exact()
  // says so afterwards). Otherwise it runs on
  // enlarged boxes [min, min + S], S per axis the largest enclosing_extent()
  // of the boxes, which contain the real ones and keep max a non-decreasing
  // function of min (all the sweep needs): their pairs are candidates,
  // tested on the real boxes before they are reported.
  template <class Report>
  bool run(std::span<const Box3> boxes, std::span<const Slot> live, std::span<const Id> names, const Reference& ref,
           Input input, Report&& report) {
    const auto n = static_cast<std::uint32_t>(live.size());
    const bool check = input == Input::kCheck;
    if (n < 2) {
      exact_ = n == 0 || input == Input::kExact || fits_finite(boxes[live[0]], ref.size);
      return n == 0 || !check || (finite(boxes[live[0]]) && within(boxes[live[0]], ref));
    }
    const Extent& size = ref.size;
    const Axes axes = choose_axes(boxes, live, size);

    // Each box as a member (its lows' keys on x and y, its low on t), then
    // line 1, Ix <- Sort(Px), for the lows (strips are runs of it), and the
    // highs' keys on x and y from the lows' (the size rule), once for every
    // member rather than once per strip and per merge step.
    members_.resize(n);
    x_high_.resize(n);
    tags_.resize(n);
    float t_lo = std::numeric_limits<float>::infinity(), t_hi = -t_lo;
    bool good = true;
    for (std::uint32_t i = 0; i < n; ++i) {
      const Slot s = live[i];
      const Box3& b = boxes[s];
      if (input != Input::kExact) good &= fits_finite(b, size);  // all conditions evaluated, no branch per box
      members_[i] =
          Member{float_key(b.min[axes.x]), float_key(b.min[axes.y]), names.empty() ? s : names[s], b.min[axes.t]};
      t_lo = std::min(t_lo, b.min[axes.t]);
      t_hi = std::max(t_hi, b.min[axes.t]);
    }
    exact_ = good;
    Extent sweep_size = size;
    if (!exact_) {
      if (!enclosing_size(boxes, live, ref, check, sweep_size)) return false;
      for (std::uint32_t i = 0; i < n; ++i) members_[i].name = i;  // by index in `live` until sorted
    }
    size_x_ = sweep_size[axes.x];
    size_y_ = sweep_size[axes.y];
    size_t_ = sweep_size[axes.t];
    RadixCounts counts;
    detail::radix_sort(
        members_, member_scratch_, [](const Member& m) { return m.x_key; }, kDigits, counts.data());
    if (!exact_) {
      // The real boxes by member, for the test of candidates, which the
      // sweep names by member meanwhile.
      // Gathered in x order from boxes in slot order, which are scattered
      // over the world: a cache miss each, asked for kAhead members ahead
      // so that the misses overlap (a million squares: 48 -> 21 ms).
      constexpr std::uint32_t kAhead = 16;
      candidates_.resize(n);
      for (std::uint32_t i = 0; i < n; ++i) {
        if (i + kAhead < n) __builtin_prefetch(&boxes[live[members_[i + kAhead].name]]);
        const Slot s = live[members_[i].name];
        candidates_[i] = Candidate{boxes[s], names.empty() ? s : names[s]};
        members_[i].name = i;
      }
    }
    for (std::uint32_t i = 0; i < n; ++i) {
      x_high_[i] = high_key(members_[i].x_key, size_x_);
      tags_[i] = (std::uint64_t{high_key(members_[i].y_key, size_y_)} << 32) | members_[i].name;
    }
    // Every pair overlaps on t iff the highest low is not above the lowest high.
    const bool flat = t_hi <= t_lo + size_t_;

    // The strips, then buffers and S sized once for the largest (the same
    // depth of S for every strip: one instantiation of the sweep).
    strips_.clear();
    std::uint32_t first = 0, largest = 0;
    for (std::uint32_t own = 0, end = 0; own < n; own = end) {
      const std::uint32_t cut = members_[own].x_key;
      while (x_high_[first] < cut) ++first;
      end = n - own > strip_members_ ? own + strip_members_ : n;
      strips_.push_back(Strip{first, own, end});
      largest = std::max(largest, end - first);
    }
    largest_ = largest;
    // S's depth as a template argument, one sweep compiled per depth (64^6 > 2^32).
    const int levels = BitTree::levels_for(2 * largest);
    [&]<int... L>(std::integer_sequence<int, L...>) {
      (void)(((levels <= L + 1 || L == 5) && (sweep<L + 1>(flat, report), true)) || ...);
    }
    (std::make_integer_sequence<int, 6>{});
    return true;
  }

  /// Strips run in parallel on `tasks` (null: on the calling thread).
  void set_tasks(TaskSystem* tasks) { tasks_ = tasks; }
  /// Own boxes per strip (tests: many strips and straddlers in small inputs).
  void set_strip_members(std::uint32_t members) { strip_members_ = std::max<std::uint32_t>(1, members); }

  /// Whether the last run() found every box exactly [min, min + size].
  bool exact() const { return exact_; }

  bool validate() const {
    bool valid = true;
    arrays_.for_each([&](const StripArrays& w) { valid = valid && w.tree.validate(); });
    return valid;
  }

  std::size_t memory_bytes() const {
    std::size_t bytes = (members_.capacity() + member_scratch_.capacity()) * sizeof(Member) +
                        x_high_.capacity() * sizeof(std::uint32_t) + tags_.capacity() * sizeof(std::uint64_t) +
                        strips_.capacity() * sizeof(Strip) + plan_.memory_bytes() +
                        candidates_.capacity() * sizeof(Candidate);
    for (const PairBuffer& buffer : task_pairs_) bytes += buffer.pairs.capacity() * sizeof(std::uint64_t);
    arrays_.for_each([&](const StripArrays& w) { bytes += w.memory_bytes(); });
    return bytes;
  }

 private:
  // Own boxes per strip (and its straddlers besides): 2 * 16k ranks, S of
  // three levels, the strip's arrays about 1 MB. Measured against smaller
  // strips: docs/algorithms/unisize.md, "Tuning".
  static constexpr std::uint32_t kStripMembers = 16384;
  std::uint32_t strip_members_ = kStripMembers;  // tests make it small
  struct Strip {
    std::uint32_t first, own, end;  // members [first, end), its own from `own`
  };
  struct Member {
    std::uint32_t x_key, y_key;  // keys of the lows
    std::uint32_t name;          // what pairs report: an id, or the slot
    float t_min;                 // the low on the third axis
  };
  // An object as the sweep sees it, in y order.
  struct SweepItem {
    std::uint32_t low, high;      // keys of its low and high on y
    std::uint32_t r_low, r_high;  // R[p], R[p + n]
    std::uint32_t name;
    std::uint32_t own;  // 1 if the strip's own, 0 for a straddler
  };
  static constexpr std::uint32_t kFoundBuffer = 1024;
  // Parallel sweeps: a task takes consecutive strips of about one strip's
  // members, and there are at most kMaxTasks.
  static constexpr std::uint32_t kMaxTasks = 256;
  // A task's pairs, (slot << 32 | slot), when tasks run in parallel.
  struct PairBuffer {
    std::vector<std::uint64_t> pairs;
    void operator()(Slot p, Slot q) { pairs.push_back((std::uint64_t{p} << 32) | q); }
    void clear() { pairs.clear(); }
  };

  // What Algorithm 1 needs for one strip at a time: one set per task
  // running (ScratchPool).
  struct StripArrays {
    std::vector<std::uint32_t> x_low;               // the strip's keys of the lows on x, and a sentinel
    std::vector<std::uint32_t> ranks;               // R: R[p] at 2p, R[p + n] at 2p + 1, by local object
    std::vector<std::uint64_t> rank_info;           // by local rank: (own << 32 | name)
    std::vector<float> rank_t;                      // by local rank: the object's low on t (3D only)
    std::vector<std::uint32_t> rank_high;           // by local rank: the key of the object's high on y
    std::vector<std::uint64_t> y_items, y_scratch;  // the strip's lows on y: (key << 32 | local)
    std::vector<SweepItem> sweep_items;             // the strip's objects in y order
    std::vector<std::uint64_t> found;               // pairs found, (slot << 32 | slot), reported in batches
    BitTree tree;                                   // S

    // Sizes the arrays for strips of up to `largest` members.
    void fit(std::uint32_t largest) {
      if (ranks.size() < std::size_t{2} * largest) {
        ranks.resize(std::size_t{2} * largest);
        rank_info.resize(std::size_t{2} * largest);
        x_low.resize(std::size_t{largest} + 1);
        rank_t.resize(std::size_t{2} * largest);
        rank_high.resize(std::size_t{2} * largest);
        y_items.resize(largest);
        y_scratch.resize(largest);
        sweep_items.resize(largest);
      }
      found.resize(kFoundBuffer + std::size_t{2} * largest);  // a full buffer and a query over all of S
      if (tree.universe() != 2 * largest) tree.reset(2 * largest);
    }

    std::size_t memory_bytes() const {
      return (x_low.capacity() + ranks.capacity() + rank_t.capacity() + rank_high.capacity()) * sizeof(std::uint32_t) +
             (rank_info.capacity() + y_items.capacity() + y_scratch.capacity() + found.capacity()) *
                 sizeof(std::uint64_t) +
             sweep_items.capacity() * sizeof(SweepItem) + tree.memory_bytes();
    }
  };

  // Lines 2-3, R[Ix[i]] <- i, for local objects [0, n): the highs come in
  // the lows' order (see the file comment), so the 2n sorted endpoints are a
  // merge of two sorted runs, lows first on equal keys. Each step's choice
  // is a coin toss, so the merge is branch-free, and it runs as two
  // independent merges of equal length (split at merge-path diagonals by
  // binary search), interleaved, so that one step's loads need not wait for
  // the previous step's. Writes R (ranks_: R[p] at 2p, R[p + n] at 2p + 1)
  // and, by rank, what a range query needs of the object: 1 << 32 if it is
  // the strip's own | its name.
  struct Way {
    std::uint32_t a, b;  // lows and highs taken
  };
  // The merge-path split: where the first d endpoints end on each run.
  static Way split(const std::uint32_t* xl, const std::uint32_t* xh, std::uint32_t n, std::uint32_t d) {
    std::uint32_t lo = d > n ? d - n : 0, hi = std::min(d, n);
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;  // low mid before high d - 1 - mid?
      if (xl[mid] <= xh[d - 1 - mid]) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return {lo, d - lo};
  }
  // One step, with masks rather than conditions (the compiler would
  // branch). xl[n] is a sentinel above every high, so a run of lows that
  // is exhausted is never taken; b < n holds before every step (the last
  // high comes last).
  static inline void merge_step(Way& w, const std::uint32_t* xl, const std::uint32_t* xh, const std::uint64_t* tags,
                                std::uint32_t own_from, std::uint32_t* ranks, std::uint64_t* info,
                                std::uint32_t* high) {
    const std::uint32_t a = w.a, b = w.b;
    const std::uint32_t take_low = static_cast<std::uint32_t>(xl[a] <= xh[b]);
    const std::uint32_t mask = 0u - take_low;
    const std::uint32_t p = (a & mask) | (b & ~mask);
    ranks[2 * p + 1 - take_low] = a + b;
    info[a + b] = (std::uint64_t{p >= own_from} << 32) | static_cast<std::uint32_t>(tags[p]);
    high[a + b] = static_cast<std::uint32_t>(tags[p] >> 32);
    w.a = a + take_low;
    w.b = b + 1 - take_low;
  }
  static void rank(StripArrays& w, const Member* m, const std::uint32_t* xh, const std::uint64_t* tags, std::uint32_t n,
                   std::uint32_t own_from) {
    std::uint32_t* const ranks = w.ranks.data();
    std::uint64_t* const info = w.rank_info.data();
    std::uint32_t* const high = w.rank_high.data();
    std::uint32_t* const xl = w.x_low.data();
    for (std::uint32_t p = 0; p < n; ++p) xl[p] = m[p].x_key;
    xl[n] = ~std::uint32_t{0};  // above the key of every finite float
    const std::uint32_t total = 2 * n, length = total / 2;
    Way w0 = split(xl, xh, n, 0), w1 = split(xl, xh, n, length);
    for (std::uint32_t k = 0; k < length; ++k) {
      merge_step(w0, xl, xh, tags, own_from, ranks, info, high);
      merge_step(w1, xl, xh, tags, own_from, ranks, info, high);
    }
  }

  // Algorithm 1 on every strip, in tasks of consecutive strips of about
  // strip_members_ own members each; pairs in strip order (task_plan.hpp).
  template <int L, class Report>
  void sweep(bool flat, Report& report) {
    const auto strips = static_cast<std::uint32_t>(strips_.size());
    plan_.split(
        strips, members_.size(), [&](std::uint32_t s) { return strips_[s].own; }, strip_members_, kMaxTasks);
    detail::run_ordered(
        tasks_, plan_.size(), task_pairs_, report,
        [&](std::size_t t, auto& sink) {
          StripArrays& w = arrays_.take();
          w.fit(largest_);
          for (std::uint32_t s = plan_.first(t); s < plan_.end(t); ++s) sweep_strip<L>(flat, w, strips_[s], sink);
          arrays_.give(w);
        },
        [](std::span<const PairBuffer> buffers, Report& to) {
          for (const PairBuffer& buffer : buffers) {
            for (const std::uint64_t pair : buffer.pairs) to(static_cast<Slot>(pair >> 32), static_cast<Slot>(pair));
          }
        });
  }

  template <int L, class Report>
  void sweep_strip(bool flat, StripArrays& w, const Strip& st, Report& report) const {
    if (exact_) {
      if (flat) {
        strip<false, L>(w, st.first, st.own, st.end, report);
      } else {
        strip<true, L>(w, st.first, st.own, st.end, report);
      }
      return;
    }
    // Pairs of enlarged boxes, named by member: reported if the real boxes
    // overlap (on every axis: t too, even where the enlarged boxes are flat).
    auto tested = [this, &report](std::uint32_t p, std::uint32_t q) {
      const Candidate& a = candidates_[p];
      const Candidate& b = candidates_[q];
      if (overlaps(a.box, b.box)) report(a.name, b.name);
    };
    if (flat) {
      strip<false, L>(w, st.first, st.own, st.end, tested);
    } else {
      strip<true, L>(w, st.first, st.own, st.end, tested);
    }
  }

  // S for the enlarged boxes: per axis the largest enclosing_extent() of the
  // boxes of `live`. With `check`, false if a box is not finite or not
  // within the size rule.
  static bool enclosing_size(std::span<const Box3> boxes, std::span<const Slot> live, const Reference& ref, bool check,
                             Extent& out) {
    out = Extent{};
    for (const Slot s : live) {
      const Box3& b = boxes[s];
      if (check && !(finite(b) && within(b, ref))) return false;
      for (int k = 0; k < 3; ++k) out[k] = std::max(out[k], enclosing_extent(b.min[k], b.max[k]));
    }
    return true;
  }

  // Algorithm 1 on members [first, end), reporting the pairs with a box in
  // [own, end). Local object p is member first + p. S has L levels.
  template <bool kTestT, int L, class Report>
  void strip(StripArrays& w, std::uint32_t first, std::uint32_t own, std::uint32_t end, Report& report) const {
    const Member* m = members_.data() + first;
    const std::uint32_t n = end - first, own_from = own - first;
    std::uint32_t* const ranks = w.ranks.data();
    const std::uint64_t* const info = w.rank_info.data();
    const std::uint64_t* const tags = tags_.data() + first;
    rank(w, m, x_high_.data() + first, tags, n, own_from);

    // Line 4: Iy <- Sort(Py), the lows only (the highs come in their order).
    for (std::uint32_t p = 0; p < n; ++p) w.y_items[p] = (std::uint64_t{m[p].y_key} << 32) | p;
    RadixCounts digit_counts;
    const std::uint64_t* const y_sorted = detail::radix_sort(
        w.y_items.data(), w.y_scratch.data(), n, [](std::uint64_t x) { return key_of(x); }, kDigits,
        digit_counts.data());
    // What the sweep needs of each object, gathered in y order so that the
    // sweep reads it sequentially (these loads do not wait on one another).
    SweepItem* const items = w.sweep_items.data();
    for (std::uint32_t a = 0; a < n; ++a) {
      const std::uint32_t p = local_of(y_sorted[a]);
      // The tag from the strip's slice of tags_ (4 bytes of 8 per object, in
      // L1) rather than from R's entry in rank_info_ (twice as large).
      items[a] = SweepItem{
          key_of(y_sorted[a]), static_cast<std::uint32_t>(tags[p] >> 32), ranks[2 * p],
          ranks[2 * p + 1],    static_cast<std::uint32_t>(tags[p]),       static_cast<std::uint32_t>(p >= own_from)};
    }
    float* const rank_t = w.rank_t.data();
    const std::uint32_t* const rank_high = w.rank_high.data();
    if constexpr (kTestT) {
      for (std::uint32_t p = 0; p < n; ++p) rank_t[ranks[2 * p]] = rank_t[ranks[2 * p + 1]] = m[p].t_min;
    }

    // Lines 5-12: sweep the lows on y.
    w.tree.clear();
    BitTree::Fixed<L> tree(w.tree);
    std::uint64_t* const found = w.found.data();
    std::uint32_t count = 0;    // pairs in found
    std::uint32_t expired = 0;  // items[0, expired) have left S
    for (std::uint32_t a = 0; a < n; ++a) {
      const SweepItem it = items[a];
      // Line 12 for every object whose high on y is below p's low. Highs
      // come in the order of lows, so objects leave S in the order they
      // came, about one per object: one leaves here without a branch, and
      // every 64 objects the rest catch up. The few left over meanwhile are
      // told apart in the query by their high.
      {
        const SweepItem& e = items[expired];
        const bool gone = e.high < it.low;
        tree.erase_if(e.r_low, gone);
        tree.erase_if(e.r_high, gone);
        expired += static_cast<std::uint32_t>(gone);
      }
      if ((a & 63) == 63) {
        while (items[expired].high < it.low) {
          tree.erase_if(items[expired].r_low, true);
          tree.erase_if(items[expired].r_high, true);
          ++expired;
        }
      }
      // Lines 9-10: every value of S strictly between R[p] and R[p + n]:
      // the range's words of level 0 that level 1 marks as not empty.
      const std::uint64_t p_word = std::uint64_t{it.name} << 32;
      const float p_lo = kTestT ? rank_t[it.r_low] : 0.0f;
      const auto report_pair = [&](std::uint32_t v) {
        const std::uint64_t i = info[v];
        // Not gone (high below p's low), and not both straddlers.
        std::uint64_t counts = static_cast<std::uint64_t>(rank_high[v] >= it.low) & (((i >> 32) | it.own) & 1);
        if constexpr (kTestT) {
          const float q_lo = rank_t[v];
          counts &= static_cast<std::uint64_t>(q_lo <= p_lo + size_t_ && p_lo <= q_lo + size_t_);
        }
        found[count] = p_word | static_cast<std::uint32_t>(i);
        count += static_cast<std::uint32_t>(counts);
      };
      if (it.r_low + 1 < it.r_high) tree.for_each(it.r_low + 1, it.r_high - 1, report_pair);
      if (count >= kFoundBuffer) {
        flush(w, count, report);
        count = 0;
      }
      // Lines 7-8.
      tree.insert(it.r_low);
      tree.insert(it.r_high);
    }
    flush(w, count, report);
  }

  // Reports the first `count` pairs of w.found.
  template <class Report>
  static void flush(const StripArrays& w, std::uint32_t count, Report& report) {
    for (std::uint32_t k = 0; k < count; ++k) {
      report(static_cast<std::uint32_t>(w.found[k] >> 32), static_cast<std::uint32_t>(w.found[k]));
    }
  }

  static std::uint32_t key_of(std::uint64_t item) { return static_cast<std::uint32_t>(item >> 32); }
  static std::uint32_t local_of(std::uint64_t item) { return static_cast<std::uint32_t>(item); }

  // Picks t as the axis along which the boxes spread least in units of
  // their size (most pairs overlap on it), x and y as the other two, x the
  // wider. From the lows of a sample of at most 4096 boxes (finite, or the
  // sweep reports nothing).
  static Axes choose_axes(std::span<const Box3> boxes, std::span<const Slot> live, const Extent& size) {
    detail::AxisSample sample;
    detail::add_sample<detail::SamplePoint::kMin, detail::kFiniteInput>(
        sample, live.size(), detail::sample_stride(live.size(), 4096),
        [&](std::size_t i) -> const Box3& { return boxes[live[i]]; });
    return detail::axis_roles(sample, {size[0], size[1], size[2]});
  }

  float size_x_ = 0, size_y_ = 0, size_t_ = 0;  // S on each axis
  bool exact_ = true;                           // every box is [min, min + S]: no candidate test
  struct Candidate {
    Box3 box;
    std::uint32_t name;
  };
  std::vector<Candidate> candidates_;             // by member, when not exact_: the real box and its name
  std::vector<Member> members_, member_scratch_;  // live boxes, sorted by x low
  std::vector<std::uint32_t> x_high_;             // by member: key of the high on x
  std::vector<std::uint64_t> tags_;               // by member: key of the high on y << 32 | slot
  std::vector<Strip> strips_;
  std::uint32_t largest_ = 0;           // members of the largest strip
  detail::TaskPlan plan_;               // the sweep's tasks of consecutive strips
  std::vector<PairBuffer> task_pairs_;  // by task: its pairs (parallel sweeps)
  ScratchPool<StripArrays> arrays_;
  TaskSystem* tasks_ = nullptr;
};

class Unisize final : public Algorithm {
 public:
  Unisize(const Options& options, std::uint32_t strip_members) : tasks_(options) {
    sweep_.set_tasks(tasks_.get());
    if (strip_members != 0) sweep_.set_strip_members(strip_members);
  }

  Status accepts(Operation op, std::span<const Id> ids, std::span<const Box3> boxes,
                 const FrameOps& staged) const override {
    // The size: the live boxes', else (none live) the first box added this
    // frame fixes it. Nothing is recorded here: update() fixes the size
    // from the frame's first added box, so a refused batch leaves nothing.
    if (boxes.empty()) return {};
    Reference ref = ref_;
    if (!any_live_) {
      const bool staged_first = !staged.added_boxes.empty();
      if (Status refusal = refuse_first(op, ids, staged_first ? staged.added_boxes.first(1) : boxes.first(1), ref);
          !refusal)
        return refusal;
    }
    return refuse_size(op, ids, boxes, ref);
  }

  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override {
    // A frame that adds to an empty set fixes the size from its first box
    // (accepts() checked that the rest are within the rule).
    // A frame that refills the set with boxes an earlier reference took (the
    // broad phase rebuilding after a failed frame, or renumbering slots) may
    // hold some outside the new first box's rule: the slack widens to take
    // them, so that the rule keeps holding every live box (the sweep reads
    // only the size; the slack is the rule's alone).
    if (!any_live_ && !ops.added.empty()) {
      make_reference(ops.added_boxes[0], ref_);
      for (const Box3& b : ops.added_boxes) widen_to_take(b, ref_);
    }
    // Whether every live box is exactly [min, min + size], so that the sweep
    // need not test it: they were, and the boxes moved and added are (tested
    // on the boxes as they are copied, without a branch).
    int exact = static_cast<int>(exact_live_ || !any_live_);
    for (const Slot s : ops.removed) live_.erase(s);
    for (std::size_t k = 0; k < ops.moved.size(); ++k) {
      exact &= static_cast<int>(fits_finite(ops.moved_boxes[k], ref_.size));
      boxes_[ops.moved[k]] = ops.moved_boxes[k];
    }
    for (std::size_t k = 0; k < ops.added.size(); ++k) {
      exact &= static_cast<int>(fits_finite(ops.added_boxes[k], ref_.size));
      insert(ops.added[k], ops.added_boxes[k]);
    }

    frame_pairs_.clear();
    const auto input = exact != 0 ? UnisizeSweep::Input::kExact : UnisizeSweep::Input::kWithin;
    if (!ops.filter.active()) {
      sweep_.run(boxes_, live_.slots(), ids, ref_, input, [&](Id a, Id b) {
        const Id swap = (a ^ b) & (Id{0} - static_cast<Id>(b < a));  // make_pair without a branch on the order
        frame_pairs_.push_back(Pair{a ^ swap, b ^ swap});
      });
    } else {  // by slot, for the filters
      sweep_.run(boxes_, live_.slots(), {}, ref_, input, [&](Slot a, Slot b) {
        if (ops.filter.accepts(a, b)) frame_pairs_.push_back(make_pair(ids[a], ids[b]));
      });
    }
    pairs.assign(frame_pairs_);  // sorted and diffed in bulk; frame_pairs_ gets the old set's storage
    exact_live_ = sweep_.exact();
    any_live_ = !live_.empty();  // last: a frame that fails leaves accepts() as it was
    return Reported::kEveryPair;
  }

  void reserve(std::size_t objects) override {
    reserve_geometric(boxes_, objects);
    live_.reserve_slots(objects);
    live_.reserve(objects);
  }

  std::size_t memory_bytes() const override {
    return boxes_.capacity() * sizeof(Box3) + live_.memory_bytes() + frame_pairs_.capacity() * sizeof(Pair) +
           sweep_.memory_bytes();
  }

  // Invariants after update():
  // - live_ lists each live slot once (SlotMap::valid());
  // - when a box is live, every live box has finite coordinates and is
  //   within the size rule, and is exactly [min, min + size] if
  //   exact_live_;
  // - the sweep's S is a valid tree with its list in order.
  bool validate() const override {
    if (!live_.valid()) return false;
    for (const Slot s : live_.slots()) {
      if (s >= boxes_.size() || !finite(boxes_[s]) || !within(boxes_[s], ref_)) return false;
      if (exact_live_ && !fits_finite(boxes_[s], ref_.size)) return false;
    }
    return sweep_.validate();
  }

 private:
  void insert(Slot s, const Box3& box) {
    if (s >= boxes_.size()) boxes_.resize(s + 1);
    boxes_[s] = box;
    live_.insert(s);
  }

  std::vector<Box3> boxes_;  // by slot
  detail::SlotMap<> live_;   // the live slots
  Reference ref_;            // the size rule of the live boxes
  bool exact_live_ = true;   // every live box is exactly [min, min + size]
  bool any_live_ = false;    // a box was live after the last update() (what accepts() goes by)
  OptionTasks tasks_;
  UnisizeSweep sweep_;
  std::vector<Pair> frame_pairs_;  // the frame's pairs as ids, handed to PairManager::assign
};

}  // namespace

std::unique_ptr<Algorithm> make_unisize(const Options& options) {
  no_settings(options);
  return std::make_unique<Unisize>(options, 0);
}

std::unique_ptr<Algorithm> make_unisize_with_strips(const Options& options, std::uint32_t strip_members) {
  return std::make_unique<Unisize>(options, strip_members);
}

}  // namespace sapling::detail

namespace sapling {

// The one-shot sweep: the persistent algorithm's UnisizeSweep over every box.
struct UnisizePruner::Impl {
  detail::UnisizeSweep sweep;
  std::vector<Slot> all;  // 0..n-1
};

UnisizePruner::UnisizePruner(TaskSystem* tasks) : impl_(new Impl) { impl_->sweep.set_tasks(tasks); }
UnisizePruner::~UnisizePruner() { delete impl_; }
UnisizePruner::UnisizePruner(UnisizePruner&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}
UnisizePruner& UnisizePruner::operator=(UnisizePruner&& other) noexcept {
  std::swap(impl_, other.impl_);
  return *this;
}

Status UnisizePruner::complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) {
  // One-shot refusals name the box by its index (no ids here: id() is 0).
  if (boxes.empty()) return {};
  detail::Reference ref;
  if (Status refusal = detail::refuse_first(Operation::kNone, {}, boxes.first(1), ref); !refusal) return refusal;
  const auto n = static_cast<Slot>(boxes.size());
  if (impl_->all.size() != n) {
    impl_->all.resize(n);
    for (Slot s = 0; s < n; ++s) impl_->all[s] = s;
  }
  // The input rule is checked while the sweep reads the boxes; if a box
  // breaks it, nothing is reported and the first offender is named.
  const bool fit =
      impl_->sweep.run(boxes, impl_->all, {}, ref, detail::UnisizeSweep::Input::kCheck, [&out](Slot p, Slot q) {
        const Slot swap = (p ^ q) & (Slot{0} - static_cast<Slot>(q < p));  // no branch on the order
        out.push_back(IndexPair{p ^ swap, q ^ swap});
      });
  return fit ? Status{} : detail::refuse_size(Operation::kNone, {}, boxes, ref);
}

}  // namespace sapling
