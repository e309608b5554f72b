// libFuzzer target: random sequences of add / move / remove / set_filter /
// update calls, valid and invalid (NaN, min > max, unknown, duplicate and
// repeated ids, mismatched span sizes), with collision filters and static
// objects (version 2 of the contract), driven through every registered
// algorithm and "brute" in lockstep, against a model written here from the
// contract (docs/trace-format.md, include/sapling/broad_phase.hpp) whose
// pairs, region queries and rays come from the shared test oracle
// (tests/oracle.hpp); and region queries and ray casts between frames.
//
// It traps when an algorithm's Status differs from brute's, when brute's
// Status is not what the model expects, when a refused call changed anything
// (the model applies accepted calls only, so any leftover shows up at the
// next update), or when a delta, the pair set, size() or contains() differs
// from the model. Each algorithm runs beside a twin that is given only the
// calls the first accepted, never a refused one: their statuses, deltas and
// pairs() (order included) must stay identical. So a refusal that leaves a
// trace shows even in an algorithm restricted by design (unisize), which
// leaves the comparison with the model at its first refusal of input brute
// takes but keeps being compared with its twin. In 2D, some batches go in
// as Box3 with any z: off the plane they must be refused (kOffPlane).
//
// A run may have a pair budget (Options::max_pairs, the same for all): the
// model refuses a frame that would leave more pairs, and so must every
// broad phase, dropping the frame's operations. An update may also run with
// the n-th allocation failing (a global operator new armed for that call):
// if update() throws std::bad_alloc, the broad phase must answer pairs(),
// size(), contains(), queries and rays as before the call, and the retried
// update() must report the frame exactly.
//
// Coordinates come from a small grid so ties are common, plus ±0, ±inf,
// ±FLT_MAX, denormals and NaN; ids from a small table with 0 and 2^32-1, so
// reuse, duplicates and repeats are common.
//
// Build and run (from the repository root):
//   clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -Iinclude -Isrc -Itests fuzz/ops_fuzz.cpp
//       src/core/*.cpp src/algorithms/*.cpp src/trace/*.cpp -o /tmp/opsf
//   /tmp/opsf -max_total_time=30
#include <algorithm>
#include <array>
#include <atomic>
#include <cfloat>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "counting_allocator.hpp"  // tests/: update() with its n-th allocation failing
#include "oracle.hpp"              // tests/: pairs, queries and rays by brute force
#include "sapling/broad_phase.hpp"
#include "sapling/ray.hpp"
#include "sapling/registry.hpp"

namespace {

using sapling::Box2;
using sapling::Box3;
using sapling::BoxCheck;
using sapling::BoxFault;
using sapling::BroadPhase;
using sapling::Filter;
using sapling::Id;
using sapling::Motion;
using sapling::Operation;
using sapling::Pair;
using sapling::Ray3;
using sapling::RayHit;
using sapling::Status;
using sapling::StatusCode;

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kDenorm = std::numeric_limits<float>::denorm_min();

// Special coordinates; the grid -2, -1.5, ..., 5.5 covers the rest.
constexpr std::array<float, 16> kSpecials = {-0.0f,   0.0f,     kInf, -kInf, FLT_MAX, -FLT_MAX, kDenorm, -kDenorm,
                                             FLT_MIN, -FLT_MIN, kNan, 1e30f, -1e30f,  1e-30f,   kNan,    -0.0f};

// Ids: a small range so they collide, and the ends of the 32-bit range.
constexpr std::array<Id, 32> kIds = {0,  1,  2,  3,  4,           5,           6,           7,           8,    9,   10,
                                     11, 12, 13, 14, 15,          16,          17,          18,          19,   20,  21,
                                     22, 23, 24, 25, 4294967295u, 4294967294u, 2147483648u, 2147483647u, 1000, 1001};

constexpr int kMaxSteps = 500;

// Filters: the default, and categories and masks that let some pairs through.
constexpr std::array<Filter, 8> kFilters = {Filter{},     Filter{1, 1}, Filter{2, 0xffffffffu}, Filter{2, 0xfffffffdu},
                                            Filter{4, 1}, Filter{1, 0}, Filter{0xffffffffu, 2}, Filter{6, 6}};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "ops_fuzz: %s\n", what.c_str());
  std::fflush(stderr);
  __builtin_trap();
}

std::string show(Pair p) { return "{" + std::to_string(p.a) + "," + std::to_string(p.b) + "}"; }

std::string show(const std::vector<Pair>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < 8; ++i) s += " " + show(v[i]);
  return s + (v.size() > 8 ? " ..." : "");
}

class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  bool done() const { return pos_ >= size_; }
  std::uint8_t next() { return pos_ < size_ ? data_[pos_++] : 0; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

float coordinate(std::uint8_t b) {
  if (b < 176) return static_cast<float>(b % 16) * 0.5f - 2.0f;
  return kSpecials[b % kSpecials.size()];
}

// The contract's box check, written independently: first fault, axis by
// axis, over the axes the call carries (Box2: two); then, for a Box3 given
// to a 2D broad phase, z must be [0, 0].
BoxCheck first_fault(const Box3& b, int axes, bool off_plane_refused) {
  for (int k = 0; k < axes; ++k) {
    const auto axis = static_cast<std::uint8_t>(k);
    if (b.min[k] != b.min[k]) return {BoxFault::kNanMin, axis};
    if (b.max[k] != b.max[k]) return {BoxFault::kNanMax, axis};
    if (b.min[k] > b.max[k]) return {BoxFault::kMinGreaterMax, axis};
  }
  if (off_plane_refused && !(b.min[2] == 0.0f && b.max[2] == 0.0f)) return {BoxFault::kOffPlane, 2};
  return {};
}

// What the library should do, from the contract alone: which calls it
// refuses, here; what an accepted frame leaves (pairs, queries, rays), by
// the shared oracle (tests/oracle.hpp).
class Model {
 public:
  explicit Model(int dims) : live_(dims) {}

  struct Expect {
    bool ok = true;
    std::size_t index = 0;
    std::vector<StatusCode> codes;  // acceptable codes for the element at `index`
    BoxCheck check;                 // if kInvalidBox
  };

  // `as_box3`: the boxes go in as Box3 (in 2D, with any z). For kSetFilter,
  // `filters` stands where the boxes do; for kAdd it is empty or one per id.
  Expect expect(Operation op, std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters,
                int dims, bool as_box3) const {
    Expect e;
    const std::size_t given = op == Operation::kSetFilter ? filters.size() : boxes.size();
    if (op != Operation::kRemove && ids.size() != given) {
      e.ok = false;
      e.index = ids.size();
      e.codes = {StatusCode::kSizeMismatch};
      return e;
    }
    if (op == Operation::kAdd && !filters.empty() && filters.size() != ids.size()) {
      e.ok = false;
      e.index = 0;
      e.codes = {StatusCode::kInvalidArgument};
      return e;
    }
    std::set<Id> batch;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Id id = ids[i];
      std::vector<StatusCode> codes;
      BoxCheck check;
      if (op == Operation::kAdd || op == Operation::kMove) {
        check = as_box3 ? first_fault(boxes[i], 3, dims == 2) : first_fault(boxes[i], dims, false);
        if (!check) codes.push_back(StatusCode::kInvalidBox);
      }
      const bool live = live_.contains(id);
      const bool pending = added_.count(id) != 0 || (op == Operation::kAdd && batch.count(id) != 0);
      const bool touched =
          added_.count(id) || moved_.count(id) || removed_.count(id) || refiltered_.count(id) || batch.count(id);
      if (touched) codes.push_back(StatusCode::kRepeatedId);
      if (op == Operation::kAdd) {
        if (live || pending) codes.push_back(StatusCode::kDuplicateId);
      } else if (!live) {
        codes.push_back(StatusCode::kUnknownId);
      }
      if (!codes.empty()) {
        e.ok = false;
        e.index = i;
        e.codes = codes;
        e.check = check;
        return e;
      }
      batch.insert(id);
    }
    return e;
  }

  void apply(Operation op, std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters,
             bool is_static) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (op == Operation::kAdd) {
        added_[ids[i]] = sapling::oracle::Object{boxes[i], filters.empty() ? Filter{} : filters[i],
                                                 is_static ? Motion::kStatic : Motion::kDynamic};
      }
      if (op == Operation::kMove) moved_[ids[i]] = boxes[i];
      if (op == Operation::kRemove) removed_.insert(ids[i]);
      if (op == Operation::kSetFilter) refiltered_[ids[i]] = filters[i];
    }
  }

  // Ends the frame; returns the expected created and deleted lists, or
  // false (nothing changed, the frame's operations dropped) when the frame
  // would leave more pairs than `budget` (0: no budget).
  bool update(std::size_t budget, std::vector<Pair>& created, std::vector<Pair>& deleted) {
    sapling::oracle::World live = live_;
    for (const Id id : removed_) live.remove(id);
    for (const auto& [id, box] : moved_) live.move(id, box);
    for (const auto& [id, o] : added_) live.add(id, o.box, o.filter, o.motion);
    for (const auto& [id, filter] : refiltered_) live.set_filter(id, filter);
    added_.clear();
    moved_.clear();
    removed_.clear();
    refiltered_.clear();
    std::vector<Pair> now = live.pairs();
    created.clear();
    deleted.clear();
    if (budget != 0 && now.size() > budget) return false;
    created = sapling::oracle::minus(now, pairs_);
    deleted = sapling::oracle::minus(pairs_, now);
    pairs_ = std::move(now);
    live_ = std::move(live);
    return true;
  }

  const std::vector<Pair>& pairs() const { return pairs_; }
  // The live objects as of the last accepted update(): queries and rays.
  const sapling::oracle::World& live() const { return live_; }

 private:
  sapling::oracle::World live_;
  std::map<Id, sapling::oracle::Object> added_;
  std::map<Id, Box3> moved_;
  std::map<Id, Filter> refiltered_;
  std::set<Id> removed_;
  std::vector<Pair> pairs_;  // sorted
};

// One algorithm: an instance given every call, and its twin given only the
// calls the first accepted.
struct Runner {
  std::string name;
  std::unique_ptr<BroadPhase> first, twin;
  bool off_model = false;  // refused input brute takes (unsupported): compared with its twin only
  // The first instance recovered from a failed update() (its algorithm
  // rebuilt from the live boxes): pairs() holds the twin's pairs, in an
  // order of its own (the contract fixes the order for the same calls only).
  bool recovered = false;
  // Recovered, it then took a box its twin refuses as unsupported: unisize's
  // size rule follows a world's first box, which a rebuild may change (its
  // slack only widens, to keep every box it had). No longer compared with
  // the twin; still with the model.
  bool twin_apart = false;
};

// An add with `filters` or `is_static` goes through the filtered add();
// without, through the plain one.
Status call(BroadPhase& bp, int dims, bool as_box3, Operation op, std::span<const Id> ids, std::span<const Box3> boxes,
            std::span<const Filter> filters, bool is_static) {
  if (op == Operation::kRemove) return bp.remove(ids);
  if (op == Operation::kSetFilter) return bp.set_filter(ids, filters);
  const Motion motion = is_static ? Motion::kStatic : Motion::kDynamic;
  const bool plain = filters.empty() && !is_static;
  if (dims == 3 || as_box3) {
    if (op == Operation::kMove) return bp.move(ids, boxes);
    return plain ? bp.add(ids, boxes) : bp.add(ids, boxes, filters, motion);
  }
  std::vector<Box2> flat;
  for (const Box3& b : boxes) flat.push_back(Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}});
  const std::span<const Box2> boxes2(flat);
  if (op == Operation::kMove) return bp.move(ids, boxes2);
  return plain ? bp.add(ids, boxes2) : bp.add(ids, boxes2, filters, motion);
}

bool same_status(const Status& a, const Status& b) {
  return a.code() == b.code() && a.operation() == b.operation() && a.id() == b.id() && a.index() == b.index() &&
         a.box_check().fault == b.box_check().fault && a.box_check().axis == b.box_check().axis;
}

std::vector<Pair> copy(std::span<const Pair> s) { return {s.begin(), s.end()}; }

void check_sorted(const std::string& who, const std::vector<Pair>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!(v[i].a < v[i].b)) fail(who + ": pair with a >= b " + show(v[i]));
    if (i > 0 && !(v[i - 1] < v[i])) fail(who + ": not strictly sorted at " + show(v[i]));
  }
}

// What a user may ask between frames, for the comparison after a failed
// update(): pairs(), size(), contains() of the ids in play, a region query
// and a ray over everything.
struct Answers {
  std::vector<Pair> pairs;
  std::size_t size = 0;
  std::vector<bool> contained;
  std::vector<Id> queried;
  std::vector<RayHit> hits;
  bool operator==(const Answers&) const = default;
};

template <class Ids>
Answers ask(const BroadPhase& bp, const Ids& ids) {
  Answers a;
  a.pairs = copy(bp.pairs());
  std::sort(a.pairs.begin(), a.pairs.end());  // the same pairs; a failed frame may leave them in another order
  a.size = bp.size();
  for (const Id id : ids) a.contained.push_back(bp.contains(id));
  const float z = bp.options().dims == 2 ? 0.0f : kInf;
  if (!bp.query(Box3{{-kInf, -kInf, -z}, {kInf, kInf, z}}, a.queried)) fail("a query of everything refused");
  if (!bp.ray_cast(Ray3{{-3, 0.25f, 0}, {1, 0.125f, 0}, kInf}, a.hits)) fail("a ray refused");
  return a;
}

// update() with the n-th allocation failing: null if it threw bad_alloc
// (after checking that the broad phase answers as before the call), else
// the frame it reported.
template <class Ids>
const sapling::FrameDelta* update_failing_at(const std::string& who, BroadPhase& bp, long n, const Ids& ids) {
  const Answers before = ask(bp, ids);
  const sapling::FrameDelta* frame = nullptr;
  sapling::testing_allocator::fail_allocation_after(n);
  try {
    frame = &bp.update();
  } catch (const std::bad_alloc&) {
  }
  sapling::testing_allocator::never_fail();
  if (frame != nullptr) return frame;
  if (!(ask(bp, ids) == before)) fail(who + ": after a failed update() the answers changed");
  if (!bp.validate()) fail(who + ": validate() failed after a failed update()");
  return nullptr;
}

void run(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  const std::uint8_t setup = in.next();
  const int dims = (setup & 1) ? 2 : 3;
  // A pair budget in half the runs: 1 to 12 pairs, near what the worlds hold.
  const std::size_t budget = (setup & 2) != 0 ? 1 + (setup >> 3) % 12 : 0;
  const sapling::Options options{.dims = dims, .max_pairs = budget};

  std::vector<Runner> runners;
  runners.push_back({"brute", BroadPhase::create("brute", options), BroadPhase::create("brute", options)});
  std::vector<std::string> names;
  for (const sapling::AlgorithmInfo& info : sapling::algorithms()) {
    if (info.name != "brute") names.push_back(info.name);
  }
  names.push_back("multi-sap:mode=witness");  // settings other than the defaults
  names.push_back("sap:path=batch");
  for (const std::string& name : names) {
    runners.push_back({name, BroadPhase::create(name, options), BroadPhase::create(name, options)});
  }
  for (const Runner& r : runners) {
    if (!r.first || !r.twin) fail("create(" + r.name + ") failed");
  }

  Model model(dims);
  Operation last_op = Operation::kAdd;
  bool as_box3 = false;
  bool is_static = false;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  std::vector<Filter> filters;
  std::vector<Pair> created, deleted, sorted;

  for (int step = 0; step < kMaxSteps && !in.done(); ++step) {
    const std::string at = "step " + std::to_string(step) + ", dims " + std::to_string(dims) + ": ";
    const std::uint8_t kind = in.next() % 13;

    if (kind == 12) {  // a region query and a ray on the last frame's state
      Box3 box;
      for (int k = 0; k < 3; ++k) {
        box.min[k] = static_cast<float>(in.next() % 16) * 0.5f - 2.0f;
        box.max[k] = box.min[k] + static_cast<float>(in.next() % 8);
      }
      Ray3 ray;
      for (int k = 0; k < 3; ++k) {
        ray.origin[k] = static_cast<float>(in.next() % 16) * 0.5f - 2.0f;
        ray.direction[k] = static_cast<float>(static_cast<int>(in.next() % 9) - 4) * 0.5f;
      }
      ray.max_t = (in.next() & 1) ? kInf : static_cast<float>(in.next() % 16);
      if (dims == 2) box.min[2] = box.max[2] = ray.origin[2] = ray.direction[2] = 0.0f;
      const bool moving = ray.direction[0] != 0 || ray.direction[1] != 0 || ray.direction[2] != 0;
      const std::uint32_t mask = kFilters[in.next() % kFilters.size()].mask | (in.next() & 1 ? 0 : 1u);
      const std::vector<Id> expected = model.live().query(box, mask);
      const std::vector<RayHit> expected_hits = model.live().ray_cast(ray, mask);
      std::vector<Id> got;
      std::vector<RayHit> hits;
      std::optional<RayHit> closest;
      for (Runner& r : runners) {
        if (r.off_model) continue;
        const std::string who = at + r.name + ": ";
        if (!r.first->query(box, got, mask) || got != expected) fail(who + "region query differs from the model");
        const Status s = r.first->ray_cast(ray, hits, mask);
        if (s.ok() != moving) fail(who + "ray_cast status: " + s.message());
        if (moving && hits != expected_hits) fail(who + "ray_cast differs from the model");
        if (r.first->ray_cast_closest(ray, closest, mask).ok() != moving) fail(who + "ray_cast_closest status");
        if (moving && closest != (expected_hits.empty() ? std::nullopt : std::optional(expected_hits.front()))) {
          fail(who + "ray_cast_closest differs from the model");
        }
      }
      continue;
    }

    if (kind >= 8 && kind <= 9) {  // update; with kind 9, the first instance's n-th allocation may fail
      const long fail_at = kind == 9 ? long(in.next()) * ((in.next() & 1) ? 1 : 8) : -1;
      const bool accepted = model.update(budget, created, deleted);
      for (Runner& r : runners) {
        std::vector<Pair> first_created, first_deleted;
        StatusCode first_code = StatusCode::kOk;
        for (BroadPhase* bp : {r.first.get(), r.twin.get()}) {
          if (bp == r.twin.get() && r.twin_apart) continue;
          const std::string who = at + r.name + (bp == r.twin.get() ? " (twin)" : "");
          const sapling::FrameDelta* frame = nullptr;
          if (bp == r.first.get() && fail_at >= 0) {
            frame = update_failing_at(who, *bp, fail_at, kIds);
            r.recovered |= frame == nullptr;
          }
          if (frame == nullptr) frame = &bp->update();
          const sapling::FrameDelta& d = *frame;
          const std::vector<Pair> c = copy(d.created), x = copy(d.deleted);
          if (bp == r.first.get()) {
            first_created = c;
            first_deleted = x;
            first_code = d.status.code();
          } else if (c != first_created || x != first_deleted || d.status.code() != first_code) {
            fail(who + ": the twin's frame differs: a refused call left a trace");
          }
          bp->sorted_pairs(sorted);
          check_sorted(who + " sorted_pairs", sorted);
          if (r.off_model) continue;
          if (d.status.code() != (accepted ? StatusCode::kOk : StatusCode::kPairBudget)) {
            fail(who + ": update() says '" + d.status.message() + "', the model " +
                 (accepted ? "accepts the frame" : "refuses it (pair budget)"));
          }
          if (c != created) fail(who + ": created" + show(c) + " expected" + show(created));
          if (x != deleted) fail(who + ": deleted" + show(x) + " expected" + show(deleted));
          if (sorted != model.pairs()) fail(who + ": pairs" + show(sorted) + " expected" + show(model.pairs()));
          if (bp->size() != model.live().size()) fail(who + ": size() differs from the model");
          for (const Id id : kIds) {
            if (bp->contains(id) != model.live().contains(id)) fail(who + ": contains(" + std::to_string(id) + ")");
          }
        }
        if (r.twin_apart) {
          if (!r.first->validate()) fail(at + r.name + ": validate() failed");
          continue;
        }
        std::vector<Pair> first_pairs = copy(r.first->pairs()), twin_pairs = copy(r.twin->pairs());
        if (r.recovered) {
          std::sort(first_pairs.begin(), first_pairs.end());
          std::sort(twin_pairs.begin(), twin_pairs.end());
        }
        if (first_pairs != twin_pairs) {
          fail(at + r.name + ": pairs() order differs from the twin's (refused calls between)");
        }
        if (r.first->size() != r.twin->size()) fail(at + r.name + ": size() differs from the twin's");
        if (!r.first->validate()) fail(at + r.name + ": validate() failed");
      }
      continue;
    }

    // A batch call. 10 repeats the previous batch as is.
    if (kind != 10) {
      last_op = kind < 4   ? Operation::kAdd
                : kind < 6 ? Operation::kMove
                : kind < 8 ? Operation::kRemove
                           : Operation::kSetFilter;
      const std::uint8_t shape = in.next();
      as_box3 = dims == 2 && (shape & 0x20) != 0;
      const std::size_t n = shape % 6;
      const bool with_boxes = last_op == Operation::kAdd || last_op == Operation::kMove;
      std::size_t n_boxes = with_boxes ? n : 0;
      if (with_boxes && (shape & 0xC0) == 0xC0) n_boxes = in.next() % 6;  // maybe a mismatch
      // Adds: static now and then, and filters (one per id, or a wrong count);
      // filter changes: one per id, or a wrong count.
      const std::uint8_t extras = last_op == Operation::kAdd || last_op == Operation::kSetFilter ? in.next() : 0;
      is_static = last_op == Operation::kAdd && (extras & 0x10) != 0;
      std::size_t n_filters = 0;
      if (last_op == Operation::kSetFilter || (extras & 0x08) != 0)
        n_filters = (extras & 0x60) == 0x60 ? extras % 4 : n;
      filters.clear();
      for (std::size_t i = 0; i < n_filters; ++i) filters.push_back(kFilters[in.next() % kFilters.size()]);
      ids.clear();
      boxes.clear();
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint8_t b = in.next();
        if ((b & 0x80) && model.live().size() != 0) {  // a live id, so moves and removes often succeed
          ids.push_back(std::next(model.live().objects().begin(), (b & 0x7F) % model.live().size())->first);
        } else {
          ids.push_back(kIds[b % kIds.size()]);
        }
      }
      for (std::size_t i = 0; i < n_boxes; ++i) {
        const bool ordered = (in.next() & 3) != 0;
        Box3 box;
        for (int k = 0; k < 3; ++k) {
          box.min[k] = coordinate(in.next());
          box.max[k] = coordinate(in.next());
          if (ordered && box.min[k] > box.max[k]) std::swap(box.min[k], box.max[k]);
        }
        if (dims == 2 && !(as_box3 && (in.next() & 3) == 0)) box.min[2] = box.max[2] = 0.0f;
        boxes.push_back(box);
      }
    }

    // Calls only stage: nothing may be visible before update().
    std::vector<std::vector<Pair>> pairs_before;
    std::vector<std::size_t> size_before;
    for (const Runner& r : runners) {
      pairs_before.push_back(copy(r.first->pairs()));
      size_before.push_back(r.first->size());
    }

    const Model::Expect e = model.expect(last_op, ids, boxes, filters, dims, as_box3);
    const Status ref = call(*runners[0].first, dims, as_box3, last_op, ids, boxes, filters, is_static);
    const std::string what = at + "op " + std::to_string(static_cast<int>(last_op)) + " of " +
                             std::to_string(ids.size()) + " ids: brute says '" + ref.message() + "'";
    if (ref.ok() != e.ok) fail(what + (e.ok ? ", expected ok" : ", expected a refusal"));
    if (!ref.ok()) {
      if (std::find(e.codes.begin(), e.codes.end(), ref.code()) == e.codes.end()) fail(what + ": wrong code");
      if (ref.index() != e.index) fail(what + ": wrong index, expected " + std::to_string(e.index));
      if (ref.operation() != last_op) fail(what + ": wrong operation");
      if (ref.code() != StatusCode::kSizeMismatch && ref.code() != StatusCode::kInvalidArgument &&
          ref.id() != ids[e.index]) {
        fail(what + ": wrong id");
      }
      if (ref.code() == StatusCode::kInvalidBox &&
          (ref.box_check().fault != e.check.fault || ref.box_check().axis != e.check.axis)) {
        fail(what + ": wrong box fault");
      }
    }
    if (ref.ok()) model.apply(last_op, ids, boxes, filters, is_static);

    for (std::size_t k = 0; k < runners.size(); ++k) {
      Runner& r = runners[k];
      const Status s = k == 0 ? ref : call(*r.first, dims, as_box3, last_op, ids, boxes, filters, is_static);
      if (s.ok()) {  // the twin sees accepted calls only, and must accept them too
        const Status t =
            r.twin_apart ? Status{} : call(*r.twin, dims, as_box3, last_op, ids, boxes, filters, is_static);
        if (!t.ok() && r.recovered && t.code() == StatusCode::kUnsupported) {
          r.twin_apart = true;
        } else if (!t.ok()) {
          fail(what + "; " + r.name + " accepted, its twin says '" + t.message() + "'");
        }
      }
      if (!r.off_model && k != 0) {
        if (s.code() == StatusCode::kUnsupported) {
          // A restricted algorithm may refuse input it does not support, for
          // its own reason even where brute refuses the batch for another
          // (both then change nothing). Where brute took it, the two part.
          if (ref.ok()) r.off_model = true;
        } else if (!same_status(s, ref)) {
          fail(what + "; " + r.name + " says '" + s.message() + "'");
        }
      }
      if (copy(r.first->pairs()) != pairs_before[k] || r.first->size() != size_before[k]) {
        fail(what + "; " + r.name + ": a call changed pairs() or size() before update()");
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  run(data, size);
  return 0;
}
