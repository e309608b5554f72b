// Tests of segmented-sap (src/reference/segmented_sap/segmented_sap.cpp) and of its
// segmented interval list (segmented_axis.hpp), beyond the differential
// tests every registered algorithm gets:
// - the list against a simple model (a sorted vector of endpoint words, the
//   checkpoint and fast-mover sets recomputed from chunk edges by brute
//   force) over random insertions, erasures and moves, with chunks of 2, 3,
//   4, 5, 8, 25 and 64 endpoints: splits, merges, checkpoints kept by
//   splits, merges and edge crossings, and the fast-mover set (endpoints
//   moved one at a time, a max carried past its own min across chunks);
// - every endpoint passed by a move reported once, and the candidates of
//   an object a superset of its overlaps on the axis, each once;
// - the algorithm against brute on random traces, far (1e30), infinite and
//   +-FLT_MAX boxes, identical boxes, many ties, every differential trace
//   kind, under several chunk sizes; memory given back after mass removal.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "algorithms/builtin.hpp"
#include "reference/segmented_sap/segmented_axis.hpp"
#include "reference/segmented_sap/segmented_sap.hpp"
#include "same_as_brute.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/float_key.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using detail::SegmentedAxis;
using detail::SegmentedSap;
using detail::SegmentedSapConfig;
using Endpoint = SegmentedAxis::Endpoint;
using Entry = SegmentedAxis::Entry;
using testgen::Rng;
using testgen::TraceBuilder;

constexpr float kInf = std::numeric_limits<float>::infinity();

// ---------------------------------------------------------------------------
// The list against a model.

// The model: each object's two keys (and cross bounds, a function of the
// slot here); the list must be their words, sorted.
struct ListModel {
  std::map<Slot, std::pair<std::uint32_t, std::uint32_t>> keys;  // slot -> (min key, max key)

  std::vector<Endpoint> words() const {
    std::vector<Endpoint> w;
    for (const auto& [s, k] : keys) {
      w.push_back(SegmentedAxis::make_endpoint(k.first, false, s));
      w.push_back(SegmentedAxis::make_endpoint(k.second, true, s));
    }
    std::sort(w.begin(), w.end());
    return w;
  }
};

// Bounds on the two other axes by slot: intervals of [0, 40] and [0, 12],
// some disjoint from others, as keys whose top 15 bits are those integers
// (the filter keeps exactly them: low bits set on some to show it drops them).
std::uint32_t cross_min_of(Slot s) { return (s * 7) % 31; }
std::uint32_t cross_max_of(Slot s) { return cross_min_of(s) + (s % 4) * 3; }
std::uint32_t far_min_of(Slot s) { return (s * 3) % 11; }
std::uint32_t far_max_of(Slot s) { return far_min_of(s) + s % 2; }
SegmentedAxis::Filter filter_of(Slot s) {
  return SegmentedAxis::make_filter(cross_min_of(s) << 17, (cross_max_of(s) << 17) | 0x1ffffu,
                                    (far_min_of(s) << 17) | 5u, far_max_of(s) << 17);
}
bool cross_overlap(Slot a, Slot b) {
  return cross_min_of(a) <= cross_max_of(b) && cross_min_of(b) <= cross_max_of(a) && far_min_of(a) <= far_max_of(b) &&
         far_min_of(b) <= far_max_of(a);
}

// Checks the list against the model: the same words in order, chunks within
// capacity and non-empty, each chunk's checkpoints and fast movers as counted
// by brute force at its first word, every place right.
void expect_matches(const SegmentedAxis& list, const ListModel& model, const std::string& what) {
  SCOPED_TRACE(what);
  ASSERT_TRUE(list.validate());
  std::vector<Endpoint> got;
  for (const std::uint32_t c : list.chunks()) {
    const auto entries = list.chunk_entries(c);
    ASSERT_GE(entries.size(), 1u);
    ASSERT_LE(entries.size(), list.chunk_capacity());
    const Endpoint edge = entries[0].word;
    std::vector<Slot> spans, fast;
    for (const auto& [s, k] : model.keys) {
      const Endpoint lo = SegmentedAxis::make_endpoint(k.first, false, s);
      const Endpoint hi = SegmentedAxis::make_endpoint(k.second, true, s);
      const int count = int(lo < edge) - int(hi < edge);
      if (count == 1) spans.push_back(s);
      if (count == -1) fast.push_back(s);
    }
    std::vector<Slot> have_spans;
    ASSERT_EQ(list.checkpoints(c).size(), list.checkpoint_filters(c).size());
    for (std::size_t k = 0; k < list.checkpoints(c).size(); ++k) {
      const Slot x = list.checkpoints(c)[k];
      have_spans.push_back(x);
      ASSERT_EQ(list.checkpoint_filters(c)[k], filter_of(x));
    }
    std::vector<Slot> have_fast(list.fast_movers(c).begin(), list.fast_movers(c).end());
    std::sort(have_spans.begin(), have_spans.end());
    std::sort(have_fast.begin(), have_fast.end());
    ASSERT_EQ(have_spans, spans) << "checkpoints of chunk at " << got.size();
    ASSERT_EQ(have_fast, fast) << "fast movers of chunk at " << got.size();
    for (std::uint32_t i = 0; i < entries.size(); ++i) {
      const Slot s = SegmentedAxis::owner(entries[i].word);
      const bool is_max = SegmentedAxis::is_max(entries[i].word);
      ASSERT_EQ(list.place(s, is_max).chunk, c);
      ASSERT_EQ(list.index_of(s, is_max), i);
      ASSERT_EQ(entries[i].filter, filter_of(s));
      got.push_back(entries[i].word);
    }
  }
  ASSERT_EQ(got, model.words());
  ASSERT_EQ(list.size(), got.size());
}

// Candidates of every object: each once, never itself, and every object
// whose interval interleaves with it and whose cross bounds overlap among
// them.
void expect_candidates(const SegmentedAxis& list, const ListModel& model) {
  for (const auto& [s, k] : model.keys) {
    std::vector<Slot> found;
    list.for_each_candidate(s, [&](Slot o) { found.push_back(o); });
    std::sort(found.begin(), found.end());
    ASSERT_TRUE(std::adjacent_find(found.begin(), found.end()) == found.end()) << "a candidate twice, slot " << s;
    ASSERT_FALSE(std::binary_search(found.begin(), found.end(), s));
    for (const auto& [o, ko] : model.keys) {
      if (o == s || !(k.first <= ko.second && ko.first <= k.second) || !cross_overlap(s, o)) continue;
      ASSERT_TRUE(std::binary_search(found.begin(), found.end(), o)) << "missed " << o << " for " << s;
    }
  }
}

std::uint32_t random_key(Rng& r, std::uint32_t range) { return 1000 + static_cast<std::uint32_t>(r.below(range)); }

// Random operations; keys from a small range force ties. With `ordered`,
// moves keep each min before its max (as segmented-sap moves); otherwise
// single endpoints move anywhere, leaving objects inverted for a while.
void run_list_model(std::uint32_t capacity, std::uint64_t seed, bool ordered) {
  SegmentedAxis list(capacity, true);
  ListModel model;
  Rng r(seed);
  const std::uint32_t range = 1 + static_cast<std::uint32_t>(r.below(200));
  const Slot slots = 120;
  for (int step = 0; step < 1500; ++step) {
    const std::string what = "capacity " + std::to_string(capacity) + " seed " + std::to_string(seed) + " step " +
                             std::to_string(step) + (ordered ? " ordered" : " free");
    const Slot s = static_cast<Slot>(r.below(slots));
    const bool live = model.keys.count(s) != 0;
    const bool inverted = live && model.keys[s].first > model.keys[s].second;
    const std::uint64_t op = r.below(10);
    if (!live) {
      std::uint32_t lo = random_key(r, range), hi = random_key(r, range);
      if (lo > hi) std::swap(lo, hi);
      list.insert(s, lo, hi, filter_of(s));
      model.keys[s] = {lo, hi};
    } else if (op < 3 && !inverted) {
      list.erase(s);
      model.keys.erase(s);
    } else {
      std::uint32_t lo = model.keys[s].first, hi = model.keys[s].second;
      const std::vector<Endpoint> before = model.words();
      std::vector<Endpoint> passed;
      const auto record = [&](const Entry&, const Entry& other) { passed.push_back(other.word); };
      if (ordered && !inverted) {
        lo = random_key(r, range), hi = random_key(r, range);
        if (lo > hi) std::swap(lo, hi);
        if (r.chance(0.3)) {  // a small step, as a moving object's
          lo = model.keys[s].first + 3, hi = model.keys[s].second + 3;
        }
        list.move(s, lo, hi, filter_of(s), record);
        model.keys[s] = {lo, hi};
      } else {
        // One endpoint alone: a min may pass its own max (fast movers).
        const bool which = inverted ? model.keys[s].first > model.keys[s].second && r.chance(0.5) : r.chance(0.5);
        const std::uint32_t key = inverted && r.chance(0.5)
                                      ? (which ? model.keys[s].first : model.keys[s].second)  // back in order
                                      : random_key(r, range);
        const Endpoint old_word = SegmentedAxis::make_endpoint(which ? hi : lo, which, s);
        const Endpoint new_word = SegmentedAxis::make_endpoint(key, which, s);
        list.move_endpoint(s, which, key, record);
        (which ? hi : lo) = key;
        model.keys[s] = {lo, hi};
        // Exactly the words strictly between the old and new place, once each.
        std::vector<Endpoint> expected;
        for (const Endpoint w : before) {
          if ((w > std::min(old_word, new_word) && w < std::max(old_word, new_word))) expected.push_back(w);
        }
        std::sort(passed.begin(), passed.end());
        ASSERT_EQ(passed, expected) << what;
      }
    }
    expect_matches(list, model, what);
    if (::testing::Test::HasFatalFailure()) return;
    bool any_inverted = false;
    for (const auto& [o, k] : model.keys) any_inverted = any_inverted || k.first > k.second;
    if (!any_inverted && step % 50 == 0) {
      expect_candidates(list, model);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  // Put everything back in order, then empty the list: every chunk merges away.
  for (auto& [s, k] : model.keys) {
    if (k.first > k.second) {
      list.move_endpoint(s, true, k.first, [](const Entry&, const Entry&) {});
      k.second = k.first;
    }
  }
  expect_matches(list, model, "reordered");
  for (const auto& [s, k] : model.keys) list.erase(s);
  model.keys.clear();
  expect_matches(list, model, "emptied");
  EXPECT_TRUE(list.empty());
  EXPECT_TRUE(list.chunks().empty());
}

TEST(SegmentedListTest, MatchesModelWithOrderedMoves) {
  for (const std::uint32_t capacity : {2u, 3u, 4u, 5u, 8u, 25u, 64u}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      run_list_model(capacity, seed, true);
      if (HasFatalFailure()) return;
    }
  }
}

TEST(SegmentedListTest, FastMoversMatchModel) {
  for (const std::uint32_t capacity : {2u, 3u, 4u, 8u, 25u}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      run_list_model(capacity, seed, false);
      if (HasFatalFailure()) return;
    }
  }
}

// A split: a full chunk gives its upper half to a new chunk, which gets the
// checkpoints of its edge (here an object spanning the whole list and one
// whose min stays in the lower half).
TEST(SegmentedListTest, SplitGivesNewChunkItsCheckpoints) {
  SegmentedAxis list(4, true);
  ListModel model;
  const auto add = [&](Slot s, std::uint32_t lo, std::uint32_t hi) {
    list.insert(s, lo, hi, filter_of(s));
    model.keys[s] = {lo, hi};
  };
  add(0, 10, 100);  // spans everything
  add(1, 20, 30);
  ASSERT_EQ(list.chunks().size(), 1u);
  add(2, 25, 90);  // the chunk (10 20 30 100 + 25 90) splits
  EXPECT_GE(list.chunks().size(), 2u);
  expect_matches(list, model, "after split");
  const std::uint32_t second = list.chunks()[1];
  std::vector<Slot> spans;
  for (const Slot x : list.checkpoints(second)) spans.push_back(x);
  std::sort(spans.begin(), spans.end());
  EXPECT_FALSE(spans.empty());
  EXPECT_TRUE(std::binary_search(spans.begin(), spans.end(), Slot{0}));
}

// A merge: erasing leaves chunks small; they merge and keep the left edge's
// checkpoints, down to no chunk at all.
TEST(SegmentedListTest, MergesKeepLeftCheckpoints) {
  SegmentedAxis list(4, true);
  ListModel model;
  for (Slot s = 0; s < 16; ++s) {
    list.insert(s, 10 * s, 10 * s + 15, filter_of(s));
    model.keys[s] = {10 * s, 10 * s + 15};
  }
  expect_matches(list, model, "filled");
  const std::size_t full = list.chunks().size();
  EXPECT_GE(full, 8u);
  for (Slot s = 0; s < 16; s += 2) {
    list.erase(s);
    model.keys.erase(s);
    expect_matches(list, model, "erased " + std::to_string(s));
  }
  EXPECT_LT(list.chunks().size(), full);
  for (Slot s = 1; s < 16; s += 2) list.erase(s);
  EXPECT_TRUE(list.empty());
}

// The fast-mover set by hand: an object's max carried left past its own min
// across several chunks leaves it at -1 on the edges between, then brought
// back empties the set.
TEST(SegmentedListTest, MaxPastOwnMinUsesFastMoverSet) {
  SegmentedAxis list(2, true);
  ListModel model;
  for (Slot s = 0; s < 10; ++s) {
    list.insert(s, 100 + 10 * s, 100 + 10 * s, filter_of(s));
    model.keys[s] = {100 + 10 * s, 100 + 10 * s};
  }
  list.move_endpoint(9, true, 50, [](const Entry&, const Entry&) {});
  model.keys[9].second = 50;
  expect_matches(list, model, "inverted");
  std::size_t fast = 0;
  for (const std::uint32_t c : list.chunks()) fast += list.fast_movers(c).size();
  EXPECT_GE(fast, 3u);
  list.move_endpoint(9, true, 195, [](const Entry&, const Entry&) {});
  model.keys[9].second = 195;
  expect_matches(list, model, "restored");
  for (const std::uint32_t c : list.chunks()) EXPECT_TRUE(list.fast_movers(c).empty());
}

// The filter never rejects two intervals that overlap on both axes, at any
// float (infinities, +-FLT_MAX, signed zeros, touching and zero-width
// intervals), and rejects one clear gap at the world's scale.
TEST(SegmentedListTest, FilterIsConservative) {
  const std::vector<float> v = {-kInf, -FLT_MAX, -1e30f,  -271.0f, -1.0f,  -FLT_MIN, -0.0f, 0.0f,    FLT_MIN,
                                0.5f,  1.0f,     1.0001f, 2.0f,    270.0f, 271.0f,   1e30f, FLT_MAX, kInf};
  const auto filter = [](float a0, float a1, float b0, float b1) {
    return SegmentedAxis::make_filter(float_key(a0), float_key(a1), float_key(b0), float_key(b1));
  };
  for (std::size_t i = 0; i < v.size(); ++i) {
    for (std::size_t j = i; j < v.size(); ++j) {
      for (std::size_t k = 0; k < v.size(); ++k) {
        for (std::size_t l = k; l < v.size(); ++l) {
          // [v[i], v[j]] against [v[k], v[l]] on axis a; on axis b, the same
          // two intervals the other way round.
          const bool overlap = v[i] <= v[l] && v[k] <= v[j];
          const SegmentedAxis::Filter f = filter(v[i], v[j], v[k], v[l]), g = filter(v[k], v[l], v[i], v[j]);
          if (overlap) {
            ASSERT_EQ(SegmentedAxis::misses(SegmentedAxis::probe(f), g), 0u) << i << ' ' << j << ' ' << k << ' ' << l;
            ASSERT_EQ(SegmentedAxis::misses(SegmentedAxis::probe(g), f), 0u) << i << ' ' << j << ' ' << k << ' ' << l;
          }
        }
      }
    }
  }
  const SegmentedAxis::Filter unit = filter(10, 11, 10, 11);
  EXPECT_NE(SegmentedAxis::misses(SegmentedAxis::probe(unit), filter(20, 21, 10, 11)), 0u);
  EXPECT_NE(SegmentedAxis::misses(SegmentedAxis::probe(unit), filter(10, 11, 2, 3)), 0u);
  EXPECT_NE(SegmentedAxis::misses(SegmentedAxis::probe(filter(20, 21, 10, 11)), unit), 0u);
  EXPECT_EQ(SegmentedAxis::misses(SegmentedAxis::probe(unit), filter(11, 12, 9, 10)), 0u);
}

// build() from nothing equals the same objects inserted one by one.
TEST(SegmentedListTest, BuildMatchesModel) {
  for (const std::uint32_t capacity : {2u, 3u, 25u, 64u}) {
    Rng r(capacity);
    SegmentedAxis list(capacity, true);
    ListModel model;
    std::vector<Slot> slots;
    std::vector<std::uint32_t> lo(500), hi(500);
    std::vector<SegmentedAxis::Filter> filters(500);
    for (Slot s = 0; s < 500; s += 1 + static_cast<Slot>(r.below(2))) {
      lo[s] = random_key(r, 300), hi[s] = random_key(r, 300);
      if (lo[s] > hi[s]) std::swap(lo[s], hi[s]);
      filters[s] = filter_of(s);
      slots.push_back(s);
      model.keys[s] = {lo[s], hi[s]};
    }
    list.build(slots, lo, hi, filters);
    expect_matches(list, model, "built, capacity " + std::to_string(capacity));
    expect_candidates(list, model);
  }
}

// ---------------------------------------------------------------------------
// The algorithm against brute.

// Replays `trace` through segmented-sap with `config` and through brute;
// every frame must agree and validate. Returns the most memory held after
// a frame, and the memory held at the end.
std::pair<std::size_t, std::size_t> expect_exact(const Trace& trace, const SegmentedSapConfig& config,
                                                 const std::string& what, std::uint64_t* global_frames = nullptr,
                                                 std::vector<std::vector<Pair>>* deltas = nullptr) {
  SegmentedSap* algo = nullptr;
  const Options options{.dims = trace.dims};
  const auto bp = BroadPhase::create(
      "segmented-sap",
      [&](const Options& o) {
        auto m = std::make_unique<SegmentedSap>(o, config);
        algo = m.get();
        return std::unique_ptr<Algorithm>(std::move(m));
      },
      options);
  const auto ref = BroadPhase::create("brute", options);
  EXPECT_NE(bp, nullptr);
  EXPECT_NE(ref, nullptr);
  if (!bp || !ref) return {};
  std::vector<Pair> expected, got;
  std::size_t peak = 0;
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    SCOPED_TRACE(what + ", frame " + std::to_string(f) + ", chunk " + std::to_string(config.chunk_capacity) +
                 ", global " + std::to_string(static_cast<int>(config.global)));
    const TraceFrame& frame = trace.frames[f];
    for (BroadPhase* b : {ref.get(), bp.get()}) {
      EXPECT_TRUE(b->remove(frame.removed).ok());
      EXPECT_TRUE(testgen::stage_boxes(*b, false, trace.dims, frame.moved, frame.moved_boxes).ok());
      EXPECT_TRUE(testgen::stage_boxes(*b, true, trace.dims, frame.added, frame.added_boxes).ok());
    }
    const FrameDelta& r = ref->update();
    const std::vector<Pair> r_created(r.created.begin(), r.created.end()),
        r_deleted(r.deleted.begin(), r.deleted.end());
    const FrameDelta& d = bp->update();
    const std::vector<Pair> created(d.created.begin(), d.created.end()), deleted(d.deleted.begin(), d.deleted.end());
    EXPECT_EQ(created, r_created) << "created:" << testgen::describe(created)
                                  << " expected:" << testgen::describe(r_created);
    EXPECT_EQ(deleted, r_deleted) << "deleted:" << testgen::describe(deleted)
                                  << " expected:" << testgen::describe(r_deleted);
    ref->sorted_pairs(expected);
    bp->sorted_pairs(got);
    EXPECT_EQ(got, expected) << "pairs:" << testgen::describe(got) << " expected:" << testgen::describe(expected);
    EXPECT_TRUE(algo->validate());
    if (::testing::Test::HasFailure()) return {};
    peak = std::max(peak, algo->memory_bytes());
    if (deltas != nullptr) {
      deltas->push_back(created);
      deltas->push_back(deleted);
    }
  }
  if (global_frames != nullptr) *global_frames = algo->global_frames();
  return {peak, algo->memory_bytes()};
}

// 0: the automatic size (256, then chosen at each build of an empty world).
const std::vector<SegmentedSapConfig> kChunkSizes = {{0}, {2}, {3}, {4}, {25}, {64}, {1024}};

TEST(SegmentedSapTest, AutomaticChunkFollowsTheWorld) {
  EXPECT_EQ(SegmentedSapConfig::chunk_for(1), 16u);
  EXPECT_EQ(SegmentedSapConfig::chunk_for(3000), 256u);
  EXPECT_EQ(SegmentedSapConfig::chunk_for(1000000), 4096u);
  EXPECT_EQ(SegmentedSapConfig::chunk_for(std::size_t{1} << 40), 8192u);
}

TEST(SegmentedSapTest, DifferentialTraceKindsAtEveryChunkSize) {
  for (const testgen::TraceKind kind : testgen::kAllTraceKinds) {
    for (int dims : {2, 3}) {
      const Trace trace = testgen::make_trace(kind, testgen::GenParams{.dims = dims, .seed = 7});
      for (const SegmentedSapConfig& config : kChunkSizes) {
        expect_exact(trace, config, std::string(testgen::trace_kind_name(kind)));
        if (HasFailure()) return;
      }
    }
  }
}

// Random boxes on a small integer grid (ties, touching faces, flat boxes),
// added one or a few at a time into a growing world, moving in small steps.
TEST(SegmentedSapTest, GridBoxesTiesAndSteps) {
  for (int dims : {2, 3}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      TraceBuilder t(dims, seed);
      testgen::steady_frames(
          t, 300, 40, testgen::Rates{.move = 0.1, .churn = 0.02}, [](Rng& r) { return testgen::grid_box(r, 12, 3); },
          [](Rng& r, const Box3& b) { return testgen::grid_step(r, b); }, testgen::IdStyle::kSequential);
      for (const SegmentedSapConfig& config : kChunkSizes) expect_exact(t.take(), config, "grid");
    }
  }
}

TEST(SegmentedSapTest, InfiniteHugeAndFarBoxes) {
  for (int dims : {2, 3}) {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      TraceBuilder t(dims, seed);
      testgen::steady_frames(
          t, 80, 15, testgen::Rates{.move = 0.3, .churn = 0.05}, testgen::far_and_infinite_box,
          [](Rng& r, const Box3&) { return testgen::far_and_infinite_box(r); }, testgen::IdStyle::kSequential);
      const Trace trace = t.take();
      for (const SegmentedSapConfig& config : kChunkSizes) expect_exact(trace, config, "wild");
    }
  }
}

// Every box the same, then some move apart and back: every endpoint ties.
TEST(SegmentedSapTest, AllBoxesEqual) {
  TraceBuilder t(3, 11);
  const Box3 same{{1, 1, 1}, {2, 2, 2}};
  t.begin_frame();
  for (Id i = 0; i < 60; ++i) t.add(i, same);
  for (int f = 0; f < 6; ++f) {
    t.begin_frame();
    t.remove(Id(59 - f));
    for (Id i = Id(f); i < 60; i += 5) {
      if (t.is_live(i)) t.move(i, f % 2 ? same : testgen::cube(1.5f + float(f), 1, 1, 1));
    }
    t.add(Id(100 + f), same);
  }
  const Trace trace = t.take();
  for (const SegmentedSapConfig& config : kChunkSizes) expect_exact(trace, config, "equal");
}

// One insertion and one removal per frame among resting boxes, the case the
// structure is for; then a mass removal gives the memory back.
TEST(SegmentedSapTest, TrickleThenMassRemove) {
  TraceBuilder t(3, 5);
  Rng& r = t.rng();
  const Id n = 2000;
  t.begin_frame();
  for (Id i = 0; i < n; ++i) t.add(i, testgen::cube(r.uniform(0, 60), r.uniform(0, 60), r.uniform(0, 60), 2));
  Id next = n;
  for (int f = 0; f < 40; ++f) {
    t.begin_frame();
    const std::span<const Id> live = t.live_ids();
    t.remove(live[r.below(live.size())]);
    t.add(next++, testgen::cube(r.uniform(0, 60), r.uniform(0, 60), r.uniform(0, 60), 2));
    for (int m = 0; m < 20; ++m) {
      const Id id = t.live_ids()[r.below(t.live_count())];
      if (t.touched(id)) continue;
      const Box3& b = t.box_of(id);
      t.move(id, testgen::cube(b.min[0] + r.uniform(-0.5, 0.5), b.min[1], b.min[2] + r.uniform(-0.5, 0.5), 2));
    }
  }
  t.begin_frame();
  const std::vector<Id> all(t.live_ids().begin(), t.live_ids().end());
  for (const Id id : all) t.remove(id);
  t.begin_frame();
  for (Id i = 0; i < 4; ++i) t.add(next + i, testgen::cube(1e6f + float(i), 0, 0, 2));
  const Trace trace = t.take();
  for (const SegmentedSapConfig& config : kChunkSizes) {
    // What stays is by slot up to the highest live one (the new boxes take
    // the slots freed last, the highest): 100 bytes per slot, and one chunk
    // per list; the chunks of the 2000 boxes (over 100 kB) must be gone.
    const auto [peak, bytes] = expect_exact(trace, config, "trickle");
    EXPECT_GT(peak, 200u * 1024u);
    EXPECT_LT(bytes, 104u * (n + 64) + 3 * 16 * std::max(config.chunk_capacity, 256u))
        << "memory kept after the mass removal, chunk " << config.chunk_capacity;
  }
}

// ---------------------------------------------------------------------------
// Local or global sort (the paper's section 4 rule).

using detail::GlobalSort;
using detail::SegmentedFrameCounts;

TEST(SegmentedSapGlobalTest, RuleFollowsTheCosts) {
  const SegmentedSapConfig automatic, never{.global = GlobalSort::kNever}, always{.global = GlobalSort::kAlways};
  const SegmentedFrameCounts quiet{.live = 100000, .moved = 100, .swaps = 100 * 400.0};
  const SegmentedFrameCounts busy{.live = 100000, .moved = 50000, .swaps = 50000 * 400.0};
  const SegmentedFrameCounts churn{.live = 100000, .removed = 5000, .added = 5000};
  const SegmentedFrameCounts empty_world{.live = 0, .added = 2};
  const SegmentedFrameCounts emptied{.live = 10, .removed = 10, .added = 5};
  EXPECT_FALSE(detail::sorts_globally(automatic, quiet));
  EXPECT_TRUE(detail::sorts_globally(automatic, busy));
  EXPECT_TRUE(detail::sorts_globally(automatic, churn));
  EXPECT_TRUE(detail::sorts_globally(automatic, empty_world));
  EXPECT_TRUE(detail::sorts_globally(automatic, emptied));
  for (const SegmentedFrameCounts& c : {quiet, busy, churn, empty_world}) {
    EXPECT_TRUE(detail::sorts_globally(always, c));
  }
  for (const SegmentedFrameCounts& c : {quiet, busy, churn}) EXPECT_FALSE(detail::sorts_globally(never, c));
  EXPECT_TRUE(detail::sorts_globally(never, empty_world));  // the build of an empty world stays
  EXPECT_FALSE(detail::sorts_globally(never, {.live = 0, .added = 1}));
  // global_at scales the global side: 100 times dearer, the busy frame stays local.
  EXPECT_FALSE(detail::sorts_globally(SegmentedSapConfig{.global_at = 100}, busy));
  EXPECT_TRUE(detail::sorts_globally(SegmentedSapConfig{.global_at = 0}, quiet));
  // The query an insertion pays grows with the sweep line's population.
  EXPECT_NEAR(detail::open_estimate(1000000, 3), 10000, 1);
  EXPECT_NEAR(detail::open_estimate(10000, 2), 100, 1e-9);
}

TEST(SegmentedSapGlobalTest, SettingsAreParsed) {
  for (const char* name : {"segmented-sap:global=always", "segmented-sap:global=never", "segmented-sap:global=auto",
                           "segmented-sap:global_at=2.5,chunk=64", "segmented-sap:global=auto,global_at=0"}) {
    EXPECT_NE(BroadPhase::create(name), nullptr) << name;
  }
  for (const char* name : {"segmented-sap:global=sometimes", "segmented-sap:global_at=-1", "segmented-sap:global_at=x",
                           "segmented-sap:globe=always"}) {
    Status why;
    EXPECT_EQ(BroadPhase::create(name, Options{}, &why), nullptr) << name;
    EXPECT_FALSE(why.ok()) << name;
  }
}

const std::vector<SegmentedSapConfig> kGlobalModes = {
    {.chunk_capacity = 0, .global = GlobalSort::kNever},
    {.chunk_capacity = 0, .global = GlobalSort::kAlways},
    {.chunk_capacity = 0, .global = GlobalSort::kAuto},
    {.chunk_capacity = 4, .global = GlobalSort::kAlways},
    {.chunk_capacity = 4, .global = GlobalSort::kNever},
    {.chunk_capacity = 25, .global = GlobalSort::kAuto, .global_at = 0.05},
};

// Every adversarial trace kind (ties, extreme and infinite coordinates,
// churn, id reuse, remove-all) with the global path forced on, off and
// automatic: each frame's delta and pair set as brute's.
TEST(SegmentedSapGlobalTest, DifferentialTraceKindsInEveryMode) {
  for (const testgen::TraceKind kind : testgen::kAllTraceKinds) {
    for (int dims : {2, 3}) {
      const Trace trace = testgen::make_trace(kind, testgen::GenParams{.dims = dims, .seed = 19});
      for (const SegmentedSapConfig& config : kGlobalModes) {
        expect_exact(trace, config, std::string(testgen::trace_kind_name(kind)));
        if (HasFailure()) return;
      }
    }
  }
}

// A trace whose frames switch between the paths: quiet stretches (a few
// small moves, one insertion and removal), frames where nearly every box
// moves far, and frames of heavy churn (slots freed and taken again in one
// frame). Automatic mode must take both paths, and every mode must give
// the same deltas, frame by frame, as brute and as each other.
TEST(SegmentedSapGlobalTest, SwitchesBetweenLocalAndGlobalFrames) {
  for (int dims : {2, 3}) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      TraceBuilder t(dims, seed);
      const auto make_box = [](Rng& r) { return testgen::grid_box(r, 16, 3); };
      const auto step = [](Rng& r, const Box3& b) { return testgen::grid_step(r, b); };
      const auto jump = [](Rng& r, const Box3&) { return testgen::grid_box(r, 16, 3); };
      const std::size_t n = 400;
      testgen::random_frame(t, 0, 0, n, make_box, step, testgen::IdStyle::kSequential, 0.5);
      for (int round = 0; round < 3; ++round) {
        for (int f = 0; f < 4; ++f)
          testgen::random_frame(t, 1, 6, 1, make_box, step, testgen::IdStyle::kSequential, 0.5);
        for (int f = 0; f < 2; ++f)
          testgen::random_frame(t, 0, n - 10, 0, make_box, jump, testgen::IdStyle::kSequential, 0.5);
        testgen::random_frame(t, n / 3, 20, n / 3, make_box, step, testgen::IdStyle::kRandom32, 0.5);
        testgen::random_frame(t, 2, n / 2, 2, make_box, step, testgen::IdStyle::kSequential, 0.5);
      }
      const Trace trace = t.take();
      std::vector<std::vector<Pair>> by_mode[3];
      for (const GlobalSort mode : {GlobalSort::kNever, GlobalSort::kAlways, GlobalSort::kAuto}) {
        std::uint64_t global_frames = 0;
        const int m = static_cast<int>(mode);
        expect_exact(trace, SegmentedSapConfig{.global = mode}, "switching", &global_frames, &by_mode[m]);
        if (HasFailure()) return;
        if (mode == GlobalSort::kNever) {
          EXPECT_EQ(global_frames, 1u);  // the build of frame 0
        } else if (mode == GlobalSort::kAlways) {
          EXPECT_EQ(global_frames, trace.frames.size());
        } else {
          EXPECT_GE(global_frames, 4u);                        // the build, the far moves and the churn
          EXPECT_LE(global_frames, trace.frames.size() - 12);  // the quiet stretches
        }
      }
      EXPECT_EQ(by_mode[0], by_mode[1]);
      EXPECT_EQ(by_mode[0], by_mode[2]);
    }
  }
}

// A stream of global frames keeps its scratch; the first local frame after
// it gives the scratch back.
TEST(SegmentedSapGlobalTest, ScratchOnlyWhileGlobal) {
  TraceBuilder t(3, 23);
  const auto make_box = [](Rng& r) { return testgen::cube(r.uniform(0, 40), r.uniform(0, 40), r.uniform(0, 40), 2); };
  const auto jump = [&](Rng& r, const Box3&) { return make_box(r); };
  testgen::random_frame(t, 0, 0, 1000, make_box, jump, testgen::IdStyle::kSequential, 0.5);
  for (int f = 0; f < 3; ++f) testgen::random_frame(t, 0, 990, 0, make_box, jump, testgen::IdStyle::kSequential, 0.5);
  testgen::random_frame(t, 0, 2, 0, make_box, jump, testgen::IdStyle::kSequential, 0.5);
  const Trace trace = t.take();
  std::uint64_t global_frames = 0;
  const auto [peak, bytes] = expect_exact(trace, SegmentedSapConfig{}, "scratch", &global_frames);
  EXPECT_EQ(global_frames, 4u);
  EXPECT_GT(peak, bytes + 1000 * 40);  // at least the by-slot keys, slots and boxes of the global frames
}

}  // namespace
}  // namespace sapling
