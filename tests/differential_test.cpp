// Differential test: every registered algorithm (sapling::algorithms()) is run
// frame by frame against "brute" on random and adversarial traces
// (trace_generators.hpp), and brute itself against an independent O(n^2)
// oracle built on sapling::overlaps (oracle.hpp). Whole deltas and whole
// sorted pair sets are compared, never counts, because an exact broad phase
// must be exact. A new algorithm is covered just by being registered.
//
// Also on every algorithm: the contract example of trace-format.md, refused
// calls (a refused call must leave no trace: the broad phase then behaves
// exactly like a twin that never saw it), and determinism (two instances fed
// the same calls give the same pairs() order and deltas).
//
// A failure names the algorithm, trace kind, dims, seed and frame; the trace
// is testgen::make_trace(kind, {dims, seed}).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "oracle.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "sapling/trace.hpp"
#include "trace_generators.hpp"

namespace sapling::testgen {
// Names the kind in GoogleTest's parameter printouts.
void PrintTo(TraceKind kind, std::ostream* os) { *os << trace_kind_name(kind); }
}  // namespace sapling::testgen

namespace sapling {
namespace {

using testgen::TraceKind;

constexpr std::string_view kReference = "brute";
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

// Every registered algorithm, and those with settings other than their
// defaults (BroadPhase::create's NAME:SETTINGS).
std::vector<std::string> algorithm_names(bool with_reference) {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithms()) {
    if (with_reference || info.name != kReference) names.push_back(info.name);
    if (info.name == "multi-sap") {
      names.push_back("multi-sap:mode=witness");
      names.push_back("multi-sap:cells=segmented,chunk=4");
    }
    if (info.name == "sap") {
      names.push_back("sap:path=batch");
      names.push_back("sap:path=search");  // the resting set's searches on every adversarial trace
    }
    if (info.name == "segmented-sap") {
      names.push_back("segmented-sap:global=always");
      names.push_back("segmented-sap:global=never");
    }
  }
  return names;
}

// "sort-sweep" -> "sort_sweep": GoogleTest names are [A-Za-z0-9_].
std::string identifier(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

std::string to_string(Pair p) { return "{" + std::to_string(p.a) + "," + std::to_string(p.b) + "}"; }

std::string list(const std::vector<Pair>& pairs, std::size_t limit = 6) {
  std::ostringstream os;
  for (std::size_t i = 0; i < pairs.size() && i < limit; ++i) os << " " << to_string(pairs[i]);
  if (pairs.size() > limit) os << " ... (" << pairs.size() << " in all)";
  return os.str();
}

// "" if equal; else the sizes, and the first pairs missing and unexpected
// (or the first differing position, if the sets agree but not the lists).
std::string diff(std::string_view what, const std::vector<Pair>& expected, const std::vector<Pair>& actual) {
  if (expected == actual) return "";
  std::ostringstream os;
  os << what << ": expected " << expected.size() << " pairs, got " << actual.size() << ".";
  std::vector<Pair> e = expected, a = actual, missing, extra;  // the lists may be in pairs() order
  std::sort(e.begin(), e.end());
  std::sort(a.begin(), a.end());
  std::set_difference(e.begin(), e.end(), a.begin(), a.end(), std::back_inserter(missing));
  std::set_difference(a.begin(), a.end(), e.begin(), e.end(), std::back_inserter(extra));
  if (!missing.empty()) os << " Missing:" << list(missing) << ".";
  if (!extra.empty()) os << " Unexpected:" << list(extra) << ".";
  if (missing.empty() && extra.empty()) {
    const auto [x, y] = std::mismatch(expected.begin(), expected.end(), actual.begin(), actual.end());
    os << " Same pairs, but at position " << (x - expected.begin()) << ": "
       << (x != expected.end() ? to_string(*x) : "end") << " vs " << (y != actual.end() ? to_string(*y) : "end") << ".";
  }
  os << "\n";
  return os.str();
}

// "" if `pairs` is strictly increasing with a < b in each pair.
std::string check_sorted(std::string_view what, const std::vector<Pair>& pairs) {
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (!(pairs[i].a < pairs[i].b)) return std::string(what) + ": pair " + to_string(pairs[i]) + " has a >= b\n";
    if (i > 0 && !(pairs[i - 1] < pairs[i])) {
      return std::string(what) + ": not strictly sorted at " + to_string(pairs[i - 1]) + " " + to_string(pairs[i]) +
             "\n";
    }
  }
  return "";
}

Box2 drop_z(const Box3& b) { return Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}}; }

// The oracle (oracle.hpp): the live objects by id, and the pair set by a
// direct loop over all pairs with sapling::overlaps.
using oracle::minus;
using Oracle = oracle::World;

// Passes Box3 batches to the Box2 overloads when the trace is 2D.
class Driver {
 public:
  explicit Driver(int dims) : dims_(dims) {}

  Status add(BroadPhase& bp, std::span<const Id> ids, std::span<const Box3> boxes) {
    if (dims_ == 3) return bp.add(ids, boxes);
    return bp.add(ids, flat(boxes));
  }
  Status move(BroadPhase& bp, std::span<const Id> ids, std::span<const Box3> boxes) {
    if (dims_ == 3) return bp.move(ids, boxes);
    return bp.move(ids, flat(boxes));
  }
  Status apply(BroadPhase& bp, Operation op, std::span<const Id> ids, std::span<const Box3> boxes) {
    switch (op) {
      case Operation::kAdd:
        return add(bp, ids, boxes);
      case Operation::kMove:
        return move(bp, ids, boxes);
      default:
        return bp.remove(ids);
    }
  }

 private:
  std::span<const Box2> flat(std::span<const Box3> boxes) {
    flat_.clear();
    for (const Box3& b : boxes) flat_.push_back(drop_z(b));
    return flat_;
  }

  int dims_;
  std::vector<Box2> flat_;
};

// One call of a frame: a slice of one operation list. Every broad phase of a
// run gets the same calls, in the same order.
struct Call {
  Operation op;
  std::size_t begin, end;
};

// Splits a frame's operations into batches of random sizes, in a random
// order of kinds, with the odd empty batch.
std::vector<Call> plan_calls(const TraceFrame& f, testgen::Rng& rng) {
  std::vector<Call> calls;
  const auto split = [&](Operation op, std::size_t n) {
    for (std::size_t i = 0; i < n;) {
      const std::size_t len = rng.chance(0.3) ? 1 : 1 + rng.below(n - i);
      calls.push_back({op, i, i + len});
      i += len;
    }
    if (rng.chance(0.1)) calls.push_back({op, 0, 0});
  };
  split(Operation::kRemove, f.removed.size());
  split(Operation::kMove, f.moved.size());
  split(Operation::kAdd, f.added.size());
  rng.shuffle(calls);
  return calls;
}

Status apply_call(Driver& driver, BroadPhase& bp, const TraceFrame& f, const Call& c) {
  const auto slice = [&](const auto& v) { return std::span(v).subspan(c.begin, c.end - c.begin); };
  switch (c.op) {
    case Operation::kAdd:
      return driver.add(bp, slice(f.added), slice(f.added_boxes));
    case Operation::kMove:
      return driver.move(bp, slice(f.moved), slice(f.moved_boxes));
    default:
      return bp.remove(slice(f.removed));
  }
}

// What one broad phase reported for a frame.
struct Observed {
  std::vector<Pair> created, deleted;
  std::vector<Pair> pairs;   // pairs(), in its own order
  std::vector<Pair> sorted;  // sorted_pairs()
};

Observed update(BroadPhase& bp) {
  Observed o;
  const FrameDelta& d = bp.update();
  o.created.assign(d.created.begin(), d.created.end());
  o.deleted.assign(d.deleted.begin(), d.deleted.end());
  o.pairs.assign(bp.pairs().begin(), bp.pairs().end());
  bp.sorted_pairs(o.sorted);
  return o;
}

// Everything a broad phase must report after a frame, given the oracle's
// pair sets before and after it.
std::string check_against(std::string_view who, const Observed& o, const std::vector<Pair>& before,
                          const std::vector<Pair>& after) {
  std::string e = check_sorted(std::string(who) + " created", o.created) +
                  check_sorted(std::string(who) + " deleted", o.deleted) +
                  check_sorted(std::string(who) + " sorted_pairs", o.sorted);
  std::vector<Pair> resorted = o.pairs;
  std::sort(resorted.begin(), resorted.end());
  e += diff(std::string(who) + " pairs() (sorted) vs sorted_pairs()", o.sorted, resorted);
  e += diff(std::string(who) + " created vs oracle", minus(after, before), o.created);
  e += diff(std::string(who) + " deleted vs oracle", minus(before, after), o.deleted);
  e += diff(std::string(who) + " sorted_pairs vs oracle", after, o.sorted);
  return e;
}

std::string check_live(std::string_view who, const BroadPhase& bp, const Oracle& oracle, std::uint64_t frames) {
  std::ostringstream os;
  if (bp.size() != oracle.size()) os << who << ": size() " << bp.size() << ", expected " << oracle.size() << "\n";
  if (bp.frame() != frames) os << who << ": frame() " << bp.frame() << ", expected " << frames << "\n";
  for (const auto& [id, object] : oracle.objects()) {
    if (!bp.contains(id)) {
      os << who << ": contains(" << id << ") is false for a live id\n";
      break;
    }
  }
  return os.str();
}

struct RunResult {
  std::string failure;  // "" if every frame matched
  std::string skip;     // set if the algorithm refused the trace as unsupported
};

// Runs `trace` on `algo` (twice, in lockstep, for determinism) and on brute,
// checking every frame against each other and against the oracle.
RunResult run_differential(const std::string& algo, const Trace& trace, std::uint64_t seed) {
  RunResult result;
  const Options options{.dims = trace.dims};
  const std::unique_ptr<BroadPhase> ref = BroadPhase::create(kReference, options);
  const std::unique_ptr<BroadPhase> alg = BroadPhase::create(algo, options);
  const std::unique_ptr<BroadPhase> twin = BroadPhase::create(algo, options);
  if (!ref || !alg || !twin) {
    result.failure = "BroadPhase::create failed";
    return result;
  }
  const bool self = algo == kReference;
  Driver driver(trace.dims);
  Oracle oracle(trace.dims);
  testgen::Rng plan_rng(seed ^ 0x5a17u);
  std::vector<Pair> before;
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    const TraceFrame& frame = trace.frames[f];
    const std::string at = "frame " + std::to_string(f) + ": ";
    for (const Call& c : plan_calls(frame, plan_rng)) {
      for (BroadPhase* bp : {ref.get(), alg.get(), twin.get()}) {
        const Status s = apply_call(driver, *bp, frame, c);
        if (s.code() == StatusCode::kUnsupported && bp != ref.get()) {
          result.skip = at + s.message();
          return result;
        }
        if (!s.ok()) {
          result.failure = at + std::string(bp->algorithm_name()) + " refused a valid call: " + s.message();
          return result;
        }
      }
    }
    oracle.apply(frame);
    const std::vector<Pair> after = oracle.pairs();
    const Observed r = update(*ref);
    const Observed a = update(*alg);
    const Observed t = update(*twin);
    std::string e;
    if (!self) {  // the algorithm against brute, whole lists
      e += diff(algo + " created vs brute", r.created, a.created);
      e += diff(algo + " deleted vs brute", r.deleted, a.deleted);
      e += diff(algo + " sorted_pairs vs brute", r.sorted, a.sorted);
    }
    e += check_against(kReference, r, before, after);
    if (!self) e += check_against(algo, a, before, after);
    // Determinism: the twin saw the same calls.
    e += diff(algo + " pairs() order: second instance vs first", a.pairs, t.pairs);
    e += diff(algo + " created: second instance vs first", a.created, t.created);
    e += diff(algo + " deleted: second instance vs first", a.deleted, t.deleted);
    e += check_live(kReference, *ref, oracle, f + 1);
    e += check_live(algo, *alg, oracle, f + 1);
    if (!e.empty()) {
      result.failure = at + std::to_string(frame.removed.size()) + " removes, " + std::to_string(frame.moved.size()) +
                       " moves, " + std::to_string(frame.added.size()) + " adds, " + std::to_string(after.size()) +
                       " pairs expected\n" + e;
      return result;
    }
    before = after;
  }
  return result;
}

// Fixed seeds per trace kind: printed on failure, replayable.
constexpr std::array<std::uint64_t, 3> kSeeds = {1, 2, 3};

std::string describe(std::string_view algo, TraceKind kind, int dims, std::uint64_t seed) {
  std::ostringstream os;
  os << "algorithm=" << algo << " kind=" << testgen::trace_kind_name(kind) << " dims=" << dims << " seed=" << seed
     << " (trace: testgen::make_trace(TraceKind, {.dims = " << dims << ", .seed = " << seed << "}))";
  return os.str();
}

// ---------------------------------------------------------------------------
// Every algorithm except brute, on every trace kind, 2D and 3D.

using DiffParam = std::tuple<std::string, TraceKind, int>;

class DifferentialTest : public ::testing::TestWithParam<DiffParam> {};

TEST_P(DifferentialTest, MatchesBruteAndOracle) {
  const auto& [algo, kind, dims] = GetParam();
  for (const std::uint64_t seed : kSeeds) {
    const Trace trace = testgen::make_trace(kind, {.dims = dims, .seed = seed});
    const RunResult r = run_differential(algo, trace, seed);
    if (!r.skip.empty()) GTEST_SKIP() << describe(algo, kind, dims, seed) << " unsupported: " << r.skip;
    ASSERT_TRUE(r.failure.empty()) << describe(algo, kind, dims, seed) << "\n" << r.failure;
  }
}

std::string diff_param_name(const ::testing::TestParamInfo<DiffParam>& info) {
  const auto& [algo, kind, dims] = info.param;
  return identifier(algo) + "_" + std::string(testgen::trace_kind_name(kind)) + "_" + std::to_string(dims) + "d";
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, DifferentialTest,
                         ::testing::Combine(::testing::ValuesIn(algorithm_names(false)),
                                            ::testing::ValuesIn(testgen::kAllTraceKinds), ::testing::Values(2, 3)),
                         diff_param_name);
// Only brute registered: nothing to compare, which is not an error.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(DifferentialTest);

// ---------------------------------------------------------------------------
// Every algorithm, unisize above all, on traces of boxes of one size: the
// traces above mix sizes, so an algorithm restricted to one size (unisize)
// refuses them and is checked here instead, with the others alongside.

enum class OneSize {
  kTouchingLattice,  // lows on multiples of the size: every neighbour touches (faces, edges, corners)
  kIdentical,        // many boxes on a few positions: large groups of identical boxes
  kHalfGrid,         // lows on multiples of half the size: ties, touching and overlap by half
  kPoints,           // size 0 on one axis: flat boxes on a coarse grid
  kFlatWorld,        // 3D boxes resting on one plane (the third axis always overlaps)
  kRandom,           // lows anywhere, sizes not powers of two
  kCentred,          // centre +- half the size at magnitudes up to 1e5, moved by adding a step to min and max:
                     // extents round and drift (unisize tests candidates)
};

std::string one_size_name(OneSize k) {
  switch (k) {
    case OneSize::kTouchingLattice:
      return "touching_lattice";
    case OneSize::kIdentical:
      return "identical";
    case OneSize::kHalfGrid:
      return "half_grid";
    case OneSize::kPoints:
      return "points";
    case OneSize::kFlatWorld:
      return "flat_world";
    case OneSize::kRandom:
      return "random";
    case OneSize::kCentred:
      return "centred";
  }
  return "?";
}

// A trace of n boxes of one size: frame 0 adds them, then frames that move a
// third (on the same grid; centred: by a step added to min and max), remove
// and add a tenth, one frame that removes every box and adds them back, and
// a last frame that moves every box.
Trace one_size_trace(OneSize kind, int dims, std::uint64_t seed, std::size_t n) {
  testgen::TraceBuilder t(dims, seed);
  std::array<float, 3> size{1, 1, 1};
  if (kind == OneSize::kHalfGrid) size = {2, 0.5f, 1};
  if (kind == OneSize::kPoints) size = {1, 0, 1};
  if (kind == OneSize::kRandom || kind == OneSize::kCentred) size = {0.75f, 1.25f, 0.375f};
  // Cells per axis: about one box per cell in 2D, or a few cells for all
  // (identical: tens of boxes on each position).
  const std::uint64_t cells = kind == OneSize::kIdentical ? 3 : static_cast<std::uint64_t>(std::sqrt(double(n))) + 1;
  // Centred: a base per box (the same on every axis), the centre within
  // cells / 2 of it.
  static constexpr std::array<float, 4> kBases = {0.0f, 1000.0f, 8190.0f, -1.0e5f};
  auto box = [&](testgen::Rng& rng) {
    Box3 b;
    const float base = kind == OneSize::kCentred ? kBases[rng.below(kBases.size())] : 0.0f;
    for (int k = 0; k < 3; ++k) {
      float lo = 0;
      switch (kind) {
        case OneSize::kTouchingLattice:
        case OneSize::kIdentical:
        case OneSize::kPoints:
          lo = float(rng.below(cells)) * (size[k] == 0 ? 1.0f : size[k]);
          break;
        case OneSize::kHalfGrid:
          lo = float(rng.below(2 * cells)) * size[k] * 0.5f;
          break;
        case OneSize::kFlatWorld:
          lo = k == 2 ? 0.0f : float(rng.below(2 * cells)) * 0.5f;
          break;
        case OneSize::kRandom:  // on a 2^-8 grid, so that lo + size is exact: one extent for all
          lo = float(rng.below(256 * cells)) * 0x1p-8f - 0.5f * float(cells);
          break;
        case OneSize::kCentred: {
          const float centre = base + rng.uniform(0, 0.5 * double(cells)), half = 0.5f * size[k];
          b.min[k] = centre - half;
          b.max[k] = centre + half;
          continue;
        }
      }
      b.min[k] = lo;
      b.max[k] = lo + size[k];
    }
    if (dims == 2) b.min[2] = b.max[2] = 0;
    return b;
  };
  auto move = [&](testgen::Rng& rng, const Box3& old) {
    if (kind != OneSize::kCentred) return box(rng);
    Box3 b = old;  // a step added to min and max: the extent drifts
    for (int k = 0; k < dims; ++k) {
      const float step = rng.uniform(-0.3, 0.3);
      b.min[k] += step;
      b.max[k] += step;
    }
    return b;
  };
  testgen::random_frame(t, 0, 0, n, box, move, testgen::IdStyle::kSequential, 0.0);
  for (int f = 1; f <= 4; ++f) {
    const std::size_t live = t.live_count();
    testgen::random_frame(t, live / 10, live / 3, live / 10, box, move,
                          f % 2 ? testgen::IdStyle::kRandom32 : testgen::IdStyle::kSequential, 0.5);
  }
  testgen::random_frame(t, t.live_count(), 0, 0, box, move, testgen::IdStyle::kSequential, 0.0);
  testgen::random_frame(t, 0, 0, n, box, move, testgen::IdStyle::kOffset, 0.5);
  testgen::random_frame(t, 0, t.live_count(), 0, box, move, testgen::IdStyle::kSequential, 0.0);
  return t.take();
}

using OneSizeParam = std::tuple<std::string, OneSize, int>;

class OneSizeDifferentialTest : public ::testing::TestWithParam<OneSizeParam> {};

TEST_P(OneSizeDifferentialTest, MatchesBruteAndOracle) {
  const auto& [algo, kind, dims] = GetParam();
  for (const std::uint64_t seed : kSeeds) {
    // Identical boxes: every box overlaps about every other, so fewer of them.
    const std::size_t n = (seed == 3 ? 2000 : 400) / (kind == OneSize::kIdentical ? 4 : 1);
    const RunResult r = run_differential(algo, one_size_trace(kind, dims, seed, n), seed);
    const std::string where = "algorithm=" + algo + " one-size kind=" + one_size_name(kind) +
                              " dims=" + std::to_string(dims) + " seed=" + std::to_string(seed) +
                              " n=" + std::to_string(n);
    // Every box has one size, so no algorithm may refuse these traces.
    ASSERT_TRUE(r.skip.empty()) << where << " refused: " << r.skip;
    ASSERT_TRUE(r.failure.empty()) << where << "\n" << r.failure;
  }
}

std::string one_size_param_name(const ::testing::TestParamInfo<OneSizeParam>& info) {
  const auto& [algo, kind, dims] = info.param;
  return identifier(algo) + "_" + one_size_name(kind) + "_" + std::to_string(dims) + "d";
}

INSTANTIATE_TEST_SUITE_P(OneSize, OneSizeDifferentialTest,
                         ::testing::Combine(::testing::ValuesIn(algorithm_names(false)),
                                            ::testing::Values(OneSize::kTouchingLattice, OneSize::kIdentical,
                                                              OneSize::kHalfGrid, OneSize::kPoints, OneSize::kFlatWorld,
                                                              OneSize::kRandom, OneSize::kCentred),
                                            ::testing::Values(2, 3)),
                         one_size_param_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(OneSizeDifferentialTest);

// ---------------------------------------------------------------------------
// The pair budget (Options::max_pairs): a frame after which more pairs than
// the budget overlap is refused, and the same frames are refused whatever
// the algorithm. The oracle takes, of each frame, the operations still valid
// after earlier refusals (a refused frame's additions never happened, its
// removals did not either), and refuses the frame iff it leaves more pairs
// than the budget. Budgets: just below, at and just above the pair counts of
// three frames of the trace run without a budget (one under the sanitizers).

// The frame's operations that are valid for the live objects `live`.
TraceFrame still_valid(const TraceFrame& f, const Oracle& live) {
  TraceFrame out;
  for (const Id id : f.removed) {
    if (live.contains(id)) out.removed.push_back(id);
  }
  for (std::size_t i = 0; i < f.moved.size(); ++i) {
    if (live.contains(f.moved[i])) out.moved.push_back(f.moved[i]), out.moved_boxes.push_back(f.moved_boxes[i]);
  }
  for (std::size_t i = 0; i < f.added.size(); ++i) {
    if (!live.contains(f.added[i])) out.added.push_back(f.added[i]), out.added_boxes.push_back(f.added_boxes[i]);
  }
  return out;
}

// Budgets around the pair counts of the trace's frames: those of the frame
// with the most pairs, of the middle frame and of the last frame with any.
std::vector<std::size_t> budgets_near_counts(const Trace& trace) {
  Oracle oracle(trace.dims);
  std::vector<std::size_t> counts;
  for (const TraceFrame& f : trace.frames) {
    oracle.apply(f);
    counts.push_back(oracle.pairs().size());
  }
  std::set<std::size_t> budgets;
  if (counts.empty()) return {};
  const auto most = std::max_element(counts.begin(), counts.end());
  std::size_t last = 0;
  for (const std::size_t c : counts) last = c != 0 ? c : last;
#if defined(__SANITIZE_ADDRESS__)  // a third of the runs under ASan: the frame with the most pairs only
  const std::vector<std::size_t> chosen{*most};
#else
  const std::vector<std::size_t> chosen{*most, counts[counts.size() / 2], last};
#endif
  for (const std::size_t c : chosen) {
    for (const std::size_t b : {c - 1, c, c + 1}) {
      if (c != 0 && b != 0) budgets.insert(b);  // 0 is no budget
    }
  }
  return {budgets.begin(), budgets.end()};
}

// Runs `trace` on `algo` and on brute, both with `budget`, against the
// oracle; counts the frames refused.
std::string run_budgeted(const std::string& algo, unsigned threads, const Trace& trace, std::size_t budget,
                         std::size_t& refused) {
  const auto ref = BroadPhase::create(kReference, Options{.dims = trace.dims, .max_pairs = budget});
  const auto alg = BroadPhase::create(algo, Options{.dims = trace.dims, .threads = threads, .max_pairs = budget});
  if (!ref || !alg) return "BroadPhase::create failed";
  Driver driver(trace.dims);
  Oracle oracle(trace.dims);
  std::vector<Pair> before;
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    const TraceFrame frame = still_valid(trace.frames[f], oracle);
    Oracle next = oracle;
    next.apply(frame);
    const std::vector<Pair> after = next.pairs();
    const bool over = after.size() > budget;
    std::string e;
    for (BroadPhase* bp : {ref.get(), alg.get()}) {
      const std::string who(bp->algorithm_name());
      for (const Status s : {bp->remove(frame.removed), driver.move(*bp, frame.moved, frame.moved_boxes),
                             driver.add(*bp, frame.added, frame.added_boxes)}) {
        if (s.code() == StatusCode::kUnsupported) return "unsupported";  // unisize on mixed sizes: one-size traces
        if (!s.ok()) return "frame " + std::to_string(f) + ": " + who + " refused a valid call: " + s.message();
      }
      const FrameDelta& d = bp->update();
      const StatusCode code = d.status.code();
      Observed o;
      o.created.assign(d.created.begin(), d.created.end());
      o.deleted.assign(d.deleted.begin(), d.deleted.end());
      o.pairs.assign(bp->pairs().begin(), bp->pairs().end());
      bp->sorted_pairs(o.sorted);
      if (code != (over ? StatusCode::kPairBudget : StatusCode::kOk)) {
        e += who + ": status " + std::string(status_code_name(code)) + " for a frame leaving " +
             std::to_string(after.size()) + " pairs\n";
      }
      if (over) {
        if (!o.created.empty() || !o.deleted.empty()) e += who + ": a refused frame reported pairs\n";
        e += diff(who + " pairs after a refused frame", before, o.sorted);
        e += check_live(who, *bp, oracle, f + 1);
      } else {
        e += check_against(who, o, before, after);
        e += check_live(who, *bp, next, f + 1);
      }
    }
    if (!e.empty()) return "frame " + std::to_string(f) + " (budget " + std::to_string(budget) + "):\n" + e;
    if (over) {
      ++refused;
    } else {
      oracle = std::move(next);
      before = after;
    }
  }
  return "";
}

using BudgetParam = std::tuple<std::string, TraceKind, int>;

class PairBudgetTest : public ::testing::TestWithParam<BudgetParam> {};

// Every budget of budgets_near_counts() on `trace`, 1 and 2 threads in turn.
void expect_budgets_kept(const std::string& algo, const Trace& trace, const std::string& where) {
  std::size_t refused = 0, runs = 0;
  for (const std::size_t budget : budgets_near_counts(trace)) {
    const unsigned threads = 1 + (runs++ % 2);
    const std::string e = run_budgeted(algo, threads, trace, budget, refused);
    if (e == "unsupported") GTEST_SKIP() << where << ": the algorithm does not support the trace";
    ASSERT_TRUE(e.empty()) << where << " threads=" << threads << "\n" << e;
  }
  if (runs > 0) {
    EXPECT_GT(refused, 0u) << where << ": no budget refused a frame";
  }
}

TEST_P(PairBudgetTest, RefusesTheFramesOverBudgetLikeTheOracle) {
  const auto& [algo, kind, dims] = GetParam();
  const Trace trace = testgen::make_trace(kind, {.dims = dims, .seed = kSeeds[0]});
  expect_budgets_kept(algo, trace, describe(algo, kind, dims, kSeeds[0]));
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, PairBudgetTest,
                         ::testing::Combine(::testing::ValuesIn(algorithm_names(true)),
                                            ::testing::ValuesIn(testgen::kAllTraceKinds), ::testing::Values(2, 3)),
                         diff_param_name);

// The same on traces of one size, where unisize takes part.
class OneSizePairBudgetTest : public ::testing::TestWithParam<OneSizeParam> {};

TEST_P(OneSizePairBudgetTest, RefusesTheFramesOverBudgetLikeTheOracle) {
  const auto& [algo, kind, dims] = GetParam();
  const std::size_t n = kind == OneSize::kIdentical ? 100 : 300;
  expect_budgets_kept(algo, one_size_trace(kind, dims, kSeeds[0], n),
                      "algorithm=" + algo + " one-size kind=" + one_size_name(kind) + " dims=" + std::to_string(dims));
}

INSTANTIATE_TEST_SUITE_P(OneSize, OneSizePairBudgetTest,
                         ::testing::Combine(::testing::ValuesIn(algorithm_names(true)),
                                            ::testing::Values(OneSize::kTouchingLattice, OneSize::kIdentical,
                                                              OneSize::kHalfGrid, OneSize::kPoints, OneSize::kFlatWorld,
                                                              OneSize::kRandom, OneSize::kCentred),
                                            ::testing::Values(2, 3)),
                         one_size_param_name);

// Brute against the oracle (and itself for determinism), so that the
// reference is checked even with no other algorithm registered.
using KindParam = std::tuple<TraceKind, int>;

class BruteOracleTest : public ::testing::TestWithParam<KindParam> {};

TEST_P(BruteOracleTest, MatchesOracle) {
  const auto& [kind, dims] = GetParam();
  const std::uint64_t seed = kSeeds[0];
  const Trace trace = testgen::make_trace(kind, {.dims = dims, .seed = seed});
  const RunResult r = run_differential(std::string(kReference), trace, seed);
  ASSERT_TRUE(r.skip.empty()) << r.skip;
  ASSERT_TRUE(r.failure.empty()) << describe(kReference, kind, dims, seed) << "\n" << r.failure;
}

std::string kind_param_name(const ::testing::TestParamInfo<KindParam>& info) {
  return std::string(testgen::trace_kind_name(std::get<0>(info.param))) + "_" +
         std::to_string(std::get<1>(info.param)) + "d";
}

INSTANTIATE_TEST_SUITE_P(Brute, BruteOracleTest,
                         ::testing::Combine(::testing::ValuesIn(testgen::kAllTraceKinds), ::testing::Values(2, 3)),
                         kind_param_name);

// The generators themselves: valid traces of the promised shape.
TEST(TraceGenerators, SameSeedSameTrace) {
  for (const TraceKind kind : testgen::kAllTraceKinds) {
    const Trace a = testgen::make_trace(kind, {.dims = 3, .seed = 7});
    const Trace b = testgen::make_trace(kind, {.dims = 3, .seed = 7});
    ASSERT_EQ(a.frames.size(), b.frames.size()) << testgen::trace_kind_name(kind);
    for (std::size_t f = 0; f < a.frames.size(); ++f) {
      EXPECT_EQ(a.frames[f].added, b.frames[f].added) << testgen::trace_kind_name(kind) << " frame " << f;
      EXPECT_EQ(a.frames[f].moved_boxes, b.frames[f].moved_boxes) << testgen::trace_kind_name(kind) << " frame " << f;
    }
  }
}

TEST(TraceGenerators, GrowingDoublesThenEmpties) {
  const Trace t = testgen::make_trace(TraceKind::kGrowing, {.dims = 3, .seed = 1});
  std::size_t live = 0;
  std::vector<std::size_t> sizes;
  for (const TraceFrame& f : t.frames) {
    live = live + f.added.size() - f.removed.size();
    sizes.push_back(live);
  }
  ASSERT_GE(sizes.size(), 9u);
  for (std::size_t k = 0; k < 9; ++k) EXPECT_EQ(sizes[k], std::size_t{1} << k);
  EXPECT_EQ(sizes.back(), 0u);
}

TEST(TraceGenerators, ExtremeIdsAreUsed) {
  const Trace t = testgen::make_trace(TraceKind::kExtremeIds, {.dims = 3, .seed = 1});
  std::set<Id> ids;
  for (const TraceFrame& f : t.frames) ids.insert(f.added.begin(), f.added.end());
  EXPECT_TRUE(ids.count(0u));
  EXPECT_TRUE(ids.count(4294967295u));
}

// ---------------------------------------------------------------------------
// The contract example of trace-format.md, on every algorithm.

// The contract's examples mix box sizes: an algorithm made for some boxes
// only (unisize) is checked on its own traces instead.
class ContractExample : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    for (const AlgorithmInfo& info : algorithms()) {
      if (info.name == GetParam() && !info.accepts_any_box) GTEST_SKIP() << info.name << " takes some boxes only";
    }
  }
};

std::vector<Pair> copy(std::span<const Pair> s) { return {s.begin(), s.end()}; }

TEST_P(ContractExample, Deltas3D) {
  const auto bp = BroadPhase::create(GetParam());
  ASSERT_NE(bp, nullptr);
  ASSERT_TRUE(bp->add(7, Box3{{0, 0, 0}, {1, 1, 1}}).ok());
  ASSERT_TRUE(bp->add(9, Box3{{0.5f, 0.5f, 0.5f}, {2, 2, 2}}).ok());
  const FrameDelta& d0 = bp->update();
  EXPECT_EQ(copy(d0.created), (std::vector<Pair>{{7, 9}}));
  EXPECT_TRUE(d0.deleted.empty());
  EXPECT_EQ(copy(bp->pairs()), (std::vector<Pair>{{7, 9}}));

  ASSERT_TRUE(bp->move(7, Box3{{1.5f, 0, 0}, {2.5f, 1, 1}}).ok());
  const FrameDelta& d1 = bp->update();
  EXPECT_TRUE(d1.created.empty());
  EXPECT_TRUE(d1.deleted.empty());
  EXPECT_EQ(copy(bp->pairs()), (std::vector<Pair>{{7, 9}}));

  ASSERT_TRUE(bp->remove(9).ok());
  const FrameDelta& d2 = bp->update();
  EXPECT_TRUE(d2.created.empty());
  EXPECT_EQ(copy(d2.deleted), (std::vector<Pair>{{7, 9}}));
  EXPECT_TRUE(bp->pairs().empty());
  EXPECT_EQ(bp->size(), 1u);
  EXPECT_TRUE(bp->contains(7));
  EXPECT_FALSE(bp->contains(9));

  const FrameDelta& d3 = bp->update();  // empty frame
  EXPECT_TRUE(d3.created.empty());
  EXPECT_TRUE(d3.deleted.empty());
  EXPECT_EQ(bp->frame(), 4u);
}

TEST_P(ContractExample, Deltas2D) {
  const auto bp = BroadPhase::create(GetParam(), Options{.dims = 2});
  ASSERT_NE(bp, nullptr);
  const std::vector<Id> ids = {9, 7};
  const std::vector<Box2> boxes = {Box2{{0.5f, 0.5f}, {2, 2}}, Box2{{0, 0}, {1, 1}}};
  ASSERT_TRUE(bp->add(ids, boxes).ok());
  EXPECT_EQ(copy(bp->update().created), (std::vector<Pair>{{7, 9}}));
  ASSERT_TRUE(bp->move(7, Box2{{1.5f, 0}, {2.5f, 1}}).ok());
  const FrameDelta& d1 = bp->update();
  EXPECT_TRUE(d1.created.empty() && d1.deleted.empty());
  ASSERT_TRUE(bp->move(7, Box2{{2, 2}, {3, 3}}).ok());  // corner touch still overlaps
  const FrameDelta& d2 = bp->update();
  EXPECT_TRUE(d2.created.empty() && d2.deleted.empty());
  ASSERT_TRUE(bp->remove(9).ok());
  EXPECT_EQ(copy(bp->update().deleted), (std::vector<Pair>{{7, 9}}));
}

// Signed zeros meet: a box ending at -0.0 overlaps one starting at +0.0.
TEST_P(ContractExample, SignedZerosTouch) {
  const auto bp = BroadPhase::create(GetParam());
  ASSERT_NE(bp, nullptr);
  ASSERT_TRUE(bp->add(1, Box3{{-1, -1, -1}, {-0.0f, -0.0f, -0.0f}}).ok());
  ASSERT_TRUE(bp->add(2, Box3{{0.0f, 0.0f, 0.0f}, {1, 1, 1}}).ok());
  ASSERT_TRUE(bp->add(3, Box3{{0.0f, 5, 5}, {-0.0f, 6, 6}}).ok());  // [+0, -0] is valid
  ASSERT_TRUE(bp->add(4, Box3{{-0.0f, 5, 5}, {0.0f, 5, 5}}).ok());
  EXPECT_EQ(copy(bp->update().created), (std::vector<Pair>{{1, 2}, {3, 4}}));
}

// A tiny negative min under a large max (-1e-30 under 4.5: their difference
// rounds, down, in double) and a point touching that max, in a plane: a
// search that starts at "the mins that can still reach the point" by the
// rounded extent missed it (sap's resting set through the box pruner's
// prepared grid, found by ops_fuzz). Frame 0 lays the world out, frame 1
// adds the point.
TEST_P(ContractExample, TinyNegativeMinUnderALargeMax) {
  for (const float tiny : {-0x1p-149f, -FLT_MIN, -1e-30f, -0x1p-60f}) {
    SCOPED_TRACE(tiny);
    const auto bp = BroadPhase::create(GetParam(), {.dims = 2});
    ASSERT_NE(bp, nullptr);
    const std::vector<Id> ids = {4294967294u, 10, 6, 5, 1};
    const std::vector<Box2> boxes = {
        {{-0.0f, 3}, {3, 3}}, {{3, 3}, {3, 3}}, {{3, 3}, {3, 3}}, {{-2, -2}, {-2, -2}}, {{-2, tiny}, {4.5f, 4.5f}}};
    ASSERT_TRUE(bp->add(ids, boxes).ok());
    EXPECT_EQ(copy(bp->update().created).size(), 6u);
    ASSERT_TRUE(bp->add(0, Box2{{4.5f, 4.5f}, {4.5f, 4.5f}}).ok());
    EXPECT_EQ(copy(bp->update().created), (std::vector<Pair>{{0, 1}}));
  }
}

// Infinite and extreme coordinates.
TEST_P(ContractExample, InfiniteBoxes) {
  const auto bp = BroadPhase::create(GetParam());
  ASSERT_NE(bp, nullptr);
  ASSERT_TRUE(bp->add(0, Box3{{-kInf, -kInf, -kInf}, {kInf, 0, kInf}}).ok());  // ground
  ASSERT_TRUE(bp->add(4294967295u, Box3{{kInf, kInf, kInf}, {kInf, kInf, kInf}}).ok());
  ASSERT_TRUE(bp->add(5, Box3{{FLT_MAX, FLT_MAX, FLT_MAX}, {kInf, kInf, kInf}}).ok());
  ASSERT_TRUE(bp->add(6, Box3{{0, -FLT_MAX, 0}, {0, -FLT_MAX, 0}}).ok());
  EXPECT_EQ(copy(bp->update().created), (std::vector<Pair>{{0, 6}, {5, 4294967295u}}));
}

std::string algo_param_name(const ::testing::TestParamInfo<std::string>& info) { return identifier(info.param); }

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, ContractExample, ::testing::ValuesIn(algorithm_names(true)), algo_param_name);

// ---------------------------------------------------------------------------
// Refused calls, on every algorithm, 2D and 3D.
//
// The scene: frame 0 adds ids 1..8 in a chain along x; frame 1 moves 5 and
// removes 8 (so 8 is dead). In frame 2, before the bad call: move 1,
// remove 2, add 20. So 3..7 are live and untouched, 1, 2 and 20 have an
// operation this frame, 8, 100, 101, 999 are not live.

Box3 at(float x) { return Box3{{x, 0, 0}, {x + 1.5f, 1, 1}}; }

Box3 with(Box3 b, bool is_min, int axis, float v) {
  (is_min ? b.min : b.max)[axis] = v;
  return b;
}

struct RefusedCase {
  const char* name;
  Operation op;
  std::vector<Id> ids;
  std::vector<Box3> boxes;
  std::vector<StatusCode> codes;  // acceptable codes (first is the documented one)
  std::size_t index;
  BoxFault fault = BoxFault::kNone;  // for kInvalidBox
  std::uint8_t axis = 0;
};

const std::vector<RefusedCase>& refused_cases() {
  using enum StatusCode;
  using enum Operation;
  static const std::vector<RefusedCase> cases = {
      {"add_nan_min_x", kAdd, {100}, {with(at(9), true, 0, kNan)}, {kInvalidBox}, 0, BoxFault::kNanMin, 0},
      {"add_nan_min_y_third",
       kAdd,
       {100, 101, 102},
       {at(9), at(10), with(at(11), true, 1, kNan)},
       {kInvalidBox},
       2,
       BoxFault::kNanMin,
       1},
      {"add_nan_max_z",
       kAdd,
       {100, 101},
       {at(9), with(at(10), false, 2, kNan)},
       {kInvalidBox},
       1,
       BoxFault::kNanMax,
       2},
      {"add_min_gt_max_x",
       kAdd,
       {100, 101},
       {at(9), with(at(10), true, 0, 20)},
       {kInvalidBox},
       1,
       BoxFault::kMinGreaterMax,
       0},
      {"add_min_gt_max_y",
       kAdd,
       {100, 101},
       {at(9), with(at(10), false, 1, -1)},
       {kInvalidBox},
       1,
       BoxFault::kMinGreaterMax,
       1},
      {"add_min_gt_max_z",
       kAdd,
       {100, 101},
       {at(9), with(at(10), false, 2, -0.5f)},
       {kInvalidBox},
       1,
       BoxFault::kMinGreaterMax,
       2},
      {"add_inf_inverted",
       kAdd,
       {100, 101},
       {at(9), with(with(at(10), true, 0, kInf), false, 0, -kInf)},
       {kInvalidBox},
       1,
       BoxFault::kMinGreaterMax,
       0},
      {"add_duplicate_live", kAdd, {100, 3}, {at(9), at(10)}, {kDuplicateId}, 1},
      {"add_repeated_in_batch", kAdd, {100, 101, 100}, {at(9), at(10), at(11)}, {kRepeatedId}, 2},
      {"add_after_move", kAdd, {100, 1}, {at(9), at(10)}, {kRepeatedId, kDuplicateId}, 1},
      {"add_after_remove", kAdd, {100, 2}, {at(9), at(10)}, {kRepeatedId, kDuplicateId}, 1},
      {"add_after_add", kAdd, {100, 20}, {at(9), at(10)}, {kRepeatedId, kDuplicateId}, 1},
      {"add_more_boxes_than_ids", kAdd, {100, 101}, {at(9), at(10), at(11)}, {kSizeMismatch}, 2},
      {"add_fewer_boxes_than_ids", kAdd, {100, 101, 102}, {at(9)}, {kSizeMismatch}, 3},
      {"move_unknown", kMove, {3, 4, 999}, {at(9), at(10), at(11)}, {kUnknownId}, 2},
      {"move_dead", kMove, {3, 8}, {at(9), at(10)}, {kUnknownId}, 1},
      {"move_extreme_unknown", kMove, {4294967295u}, {at(9)}, {kUnknownId}, 0},
      {"move_nan_max_y", kMove, {3, 4}, {at(9), with(at(10), false, 1, kNan)}, {kInvalidBox}, 1, BoxFault::kNanMax, 1},
      {"move_min_gt_max_z",
       kMove,
       {3, 4},
       {at(9), with(at(10), true, 2, 3)},
       {kInvalidBox},
       1,
       BoxFault::kMinGreaterMax,
       2},
      {"move_repeated_in_batch", kMove, {3, 4, 3}, {at(9), at(10), at(11)}, {kRepeatedId}, 2},
      {"move_after_move", kMove, {3, 1}, {at(9), at(10)}, {kRepeatedId}, 1},
      {"move_after_remove", kMove, {3, 2}, {at(9), at(10)}, {kRepeatedId, kUnknownId}, 1},
      {"move_after_add", kMove, {3, 20}, {at(9), at(10)}, {kRepeatedId, kUnknownId}, 1},
      {"move_size_mismatch", kMove, {3, 4}, {at(9)}, {kSizeMismatch}, 2},
      {"remove_unknown", kRemove, {3, 4, 999}, {}, {kUnknownId}, 2},
      {"remove_dead", kRemove, {3, 8}, {}, {kUnknownId}, 1},
      {"remove_extreme_unknown", kRemove, {0, 4294967295u}, {}, {kUnknownId}, 0},
      {"remove_repeated_in_batch", kRemove, {3, 4, 3}, {}, {kRepeatedId}, 2},
      {"remove_after_move", kRemove, {3, 1}, {}, {kRepeatedId}, 1},
      {"remove_after_remove", kRemove, {3, 2}, {}, {kRepeatedId, kUnknownId}, 1},
      {"remove_after_add", kRemove, {3, 20}, {}, {kRepeatedId, kUnknownId}, 1},
  };
  return cases;
}

using RefusedParam = std::tuple<std::string, std::size_t, int>;

class RefusedCallTest : public ::testing::TestWithParam<RefusedParam> {};

// Frames 0 and 1 of the scene and the operations of frame 2 before the bad call.
// Every box is a translate of at(0), so `unisize` takes the scene too.
void build_scene(Driver& d, BroadPhase& bp) {
  const std::vector<Id> ids = {1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<Box3> boxes;
  for (const Id id : ids) boxes.push_back(at(static_cast<float>(id)));
  ASSERT_TRUE(d.add(bp, ids, boxes).ok());
  bp.update();
  const std::vector<Id> five = {5};
  const std::vector<Box3> five_box = {Box3{{5, 0.5f, 0}, {6.5f, 1.5f, 1}}};
  ASSERT_TRUE(d.move(bp, five, five_box).ok());
  ASSERT_TRUE(bp.remove(8).ok());
  bp.update();
  const std::vector<Id> one = {1}, twenty = {20};
  const std::vector<Box3> one_box = {Box3{{1.25f, 0, 0}, {2.75f, 1, 1}}}, twenty_box = {at(2)};
  ASSERT_TRUE(d.move(bp, one, one_box).ok());
  ASSERT_TRUE(bp.remove(2).ok());
  ASSERT_TRUE(d.add(bp, twenty, twenty_box).ok());
}

TEST_P(RefusedCallTest, LeavesNoTrace) {
  const auto& [algo, case_index, dims] = GetParam();
  const RefusedCase& c = refused_cases()[case_index];
  const Options options{.dims = dims};
  const auto bad = BroadPhase::create(algo, options);
  const auto twin = BroadPhase::create(algo, options);
  ASSERT_NE(bad, nullptr);
  ASSERT_NE(twin, nullptr);
  Driver d(dims);
  build_scene(d, *bad);
  build_scene(d, *twin);
  ASSERT_FALSE(HasFatalFailure());

  // The bad call, twice: refused both times, the same way.
  for (int attempt = 0; attempt < 2; ++attempt) {
    SCOPED_TRACE("attempt " + std::to_string(attempt));
    const Status s = d.apply(*bad, c.op, c.ids, c.boxes);
    ASSERT_FALSE(s.ok()) << c.name << " was accepted";
    EXPECT_TRUE(std::find(c.codes.begin(), c.codes.end(), s.code()) != c.codes.end()) << c.name << ": " << s.message();
    EXPECT_EQ(s.operation(), c.op) << s.message();
    EXPECT_EQ(s.index(), c.index) << s.message();
    if (s.code() != StatusCode::kSizeMismatch) {
      EXPECT_EQ(s.id(), c.ids.at(c.index)) << s.message();
    }
    if (c.fault != BoxFault::kNone) {
      EXPECT_EQ(s.box_check().fault, c.fault) << s.message();
      EXPECT_EQ(s.box_check().axis, c.axis) << s.message();
    }
    EXPECT_FALSE(s.message().empty());
    EXPECT_EQ(bad->size(), twin->size());
    EXPECT_EQ(copy(bad->pairs()), copy(twin->pairs()));
  }

  // Every id of the bad batch that is still free to be touched this frame
  // is touched now, on both: a partly staged batch would refuse this.
  std::vector<Id> add_ids, move_ids;
  for (const Id id : std::set<Id>(c.ids.begin(), c.ids.end())) {
    if (id == 1 || id == 2 || id == 20) continue;  // already have an operation
    (id >= 3 && id <= 7 ? move_ids : add_ids).push_back(id);
  }
  std::vector<Box3> add_boxes, move_boxes;
  for (const Id id : add_ids) add_boxes.push_back(at(static_cast<float>(id % 16)));
  for (const Id id : move_ids) move_boxes.push_back(at(static_cast<float>(id) + 0.75f));
  for (BroadPhase* bp : {bad.get(), twin.get()}) {
    const Status a = d.add(*bp, add_ids, add_boxes);
    ASSERT_TRUE(a.ok()) << "after the refused " << c.name << ": " << a.message();
    const Status m = d.move(*bp, move_ids, move_boxes);
    ASSERT_TRUE(m.ok()) << "after the refused " << c.name << ": " << m.message();
  }

  // Later frames: the same reports, pair order included.
  const auto frame_ops = [&](int frame, BroadPhase& bp) {
    if (frame == 1) {  // re-add the removed ids, move and remove some
      std::vector<Id> ids;
      std::vector<Box3> boxes;
      for (const Id id : {2u, 8u, 555u}) {
        if (bp.contains(id)) continue;  // the bad batch's id may have been added above
        ids.push_back(id);
        boxes.push_back(at(static_cast<float>(id % 10) + 0.5f));
      }
      EXPECT_TRUE(d.add(bp, ids, boxes).ok());
      EXPECT_TRUE(bp.remove(4).ok());
      const std::vector<Id> moved = {20};
      const std::vector<Box3> moved_boxes = {at(6)};
      EXPECT_TRUE(d.move(bp, moved, moved_boxes).ok());
    } else if (frame == 2) {  // remove everything
      std::set<Id> live;
      for (const Id id : {0u, 1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 20u, 100u, 101u, 102u, 555u, 999u, 4294967295u}) {
        if (bp.contains(id)) live.insert(id);
      }
      const std::vector<Id> ids(live.begin(), live.end());
      EXPECT_TRUE(bp.remove(ids).ok());
      EXPECT_EQ(bp.size(), ids.size());
    } else if (frame == 3) {
      const std::vector<Id> ids = {7, 3, 1};
      const std::vector<Box3> boxes = {at(1), at(2), at(3)};
      EXPECT_TRUE(d.add(bp, ids, boxes).ok());
    }
  };
  for (int frame = 0; frame < 5; ++frame) {
    SCOPED_TRACE("frame " + std::to_string(frame) + " after the refused call " + c.name);
    frame_ops(frame, *bad);
    frame_ops(frame, *twin);
    const Observed b = update(*bad);
    const Observed t = update(*twin);
    EXPECT_EQ(diff("created", t.created, b.created), "");
    EXPECT_EQ(diff("deleted", t.deleted, b.deleted), "");
    EXPECT_EQ(diff("pairs() order", t.pairs, b.pairs), "");
    EXPECT_EQ(bad->size(), twin->size());
    EXPECT_EQ(bad->frame(), twin->frame());
    if (HasFailure()) return;
  }
}

// Every algorithm x case x dims, but z-axis faults in 3D only (a 2D box has
// no z).
std::vector<RefusedParam> refused_params() {
  std::vector<RefusedParam> params;
  for (const std::string& algo : algorithm_names(true)) {
    for (std::size_t i = 0; i < refused_cases().size(); ++i) {
      const RefusedCase& c = refused_cases()[i];
      for (const int dims : {2, 3}) {
        if (dims == 2 && c.fault != BoxFault::kNone && c.axis == 2) continue;
        params.emplace_back(algo, i, dims);
      }
    }
  }
  return params;
}

std::string refused_param_name(const ::testing::TestParamInfo<RefusedParam>& info) {
  const auto& [algo, index, dims] = info.param;
  return identifier(algo) + "_" + refused_cases()[index].name + "_" + std::to_string(dims) + "d";
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, RefusedCallTest, ::testing::ValuesIn(refused_params()), refused_param_name);

// Valid edge cases that must not be refused, on every algorithm.
TEST_P(ContractExample, AcceptsValidEdgeBoxes) {
  const auto bp = BroadPhase::create(GetParam());
  ASSERT_NE(bp, nullptr);
  const std::vector<Id> none;
  const std::vector<Box3> no_boxes;
  EXPECT_TRUE(bp->add(none, no_boxes).ok());  // empty batches
  EXPECT_TRUE(bp->move(none, no_boxes).ok());
  EXPECT_TRUE(bp->remove(none).ok());
  const FrameDelta& d = bp->update();
  EXPECT_TRUE(d.created.empty() && d.deleted.empty());
  EXPECT_TRUE(bp->add(1, Box3{{kInf, kInf, kInf}, {kInf, kInf, kInf}}).ok());
  EXPECT_TRUE(bp->add(2, Box3{{-kInf, -kInf, -kInf}, {-kInf, -kInf, -kInf}}).ok());
  EXPECT_TRUE(bp->add(3, Box3{{0.0f, 0.0f, 0.0f}, {-0.0f, -0.0f, -0.0f}}).ok());
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_TRUE(bp->add(4, Box3{{-tiny, -tiny, -tiny}, {-0.0f, tiny, tiny}}).ok());
  EXPECT_EQ(copy(bp->update().created), (std::vector<Pair>{{3, 4}}));
  EXPECT_EQ(bp->size(), 4u);
}

}  // namespace
}  // namespace sapling
