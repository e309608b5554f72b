// One-shot box pruning against brute force: complete and bipartite, on sizes
// below and above the grid threshold, on adversarial distributions (flat
// worlds, lattices of touching boxes, identical boxes, infinite and huge
// boxes), and with 1 and 2 threads giving the same output in the same order.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "algorithms/builtin.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"
#include "store_driver.hpp"

namespace sapling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

enum class Kind { kUniform, kFlat, kLattice, kIdentical, kInfinite, kHuge, kPoints, kMixedSizes };

std::vector<Box3> make_boxes(Kind kind, std::size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> unit(0.0f, 1.0f);
  const float side = std::cbrt(float(n)) * 4.0f;
  std::vector<Box3> boxes(n);
  for (std::size_t i = 0; i < n; ++i) {
    Box3& b = boxes[i];
    for (int k = 0; k < 3; ++k) {
      float lo = std::floor(unit(rng) * side);
      float w = std::floor(unit(rng) * 3.0f);
      switch (kind) {
        case Kind::kFlat:
          lo = (k == 2) ? 0.0f : std::floor(unit(rng) * side * side / 8);
          break;
        case Kind::kLattice:
          lo = float(rng() % 16) * 2.0f, w = 2.0f;
          break;  // faces touch exactly
        case Kind::kIdentical:
          lo = (i % 3 == 0) ? 5.0f : lo, w = (i % 3 == 0) ? 1.0f : w;
          break;
        case Kind::kPoints:
          w = 0.0f;
          break;
        case Kind::kMixedSizes:
          w = 0.5f * std::exp2(3.0f * unit(rng)) * (rng() % 50 == 0 ? 40.0f : 1.0f);
          break;
        default:
          break;
      }
      b.min[k] = lo;
      b.max[k] = lo + w;
    }
    if (kind == Kind::kInfinite && i % 97 == 0) {
      b.min[rng() % 3] = -kInf;
      b.max[rng() % 3] = kInf;
    }
    if (kind == Kind::kHuge && i % 61 == 0) {
      for (int k = 0; k < 3; ++k) b.min[k] = -FLT_MAX, b.max[k] = (i % 2) ? FLT_MAX : 0.0f;
    }
  }
  return boxes;
}

std::vector<IndexPair> brute_complete(const std::vector<Box3>& boxes) {
  std::vector<IndexPair> out;
  for (std::uint32_t i = 0; i < boxes.size(); ++i)
    for (std::uint32_t j = i + 1; j < boxes.size(); ++j)
      if (overlaps(boxes[i], boxes[j])) out.push_back({i, j});
  return out;
}

std::vector<std::uint64_t> keys(const std::vector<IndexPair>& pairs) {
  std::vector<std::uint64_t> k;
  for (const IndexPair& p : pairs) k.push_back((std::uint64_t{p.i} << 32) | p.j);
  std::sort(k.begin(), k.end());
  return k;
}

// A pruner on `pool` that splits even these small inputs into many tasks
// (the default grain gives every input below 16k entries to one task, and
// the threaded paths would never run), so that comparing its output with
// a one-thread pruner's tests them.
BoxPruner threaded_pruner(ThreadPool& pool) {
  BoxPruner pruner(&pool);
  pruner.set_task_grain(4);
  return pruner;
}

bool same_sequence(const std::vector<IndexPair>& x, const std::vector<IndexPair>& y) {
  return std::equal(x.begin(), x.end(), y.begin(), y.end(),
                    [](const IndexPair& a, const IndexPair& b) { return a.i == b.i && a.j == b.j; });
}

class BoxPruningTest : public testing::TestWithParam<std::tuple<Kind, std::size_t>> {};

TEST_P(BoxPruningTest, CompleteMatchesBruteForce) {
  const auto [kind, n] = GetParam();
  ThreadPool pool(2);
  for (const unsigned seed : {1u, 2u}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    std::mt19937 rng(seed);
    const std::vector<Box3> boxes = make_boxes(kind, n, rng);
    std::vector<IndexPair> serial, threaded;
    BoxPruner(nullptr).complete(boxes, serial);
    threaded_pruner(pool).complete(boxes, threaded);
    for (const IndexPair& p : serial) ASSERT_LT(p.i, p.j);
    ASSERT_EQ(keys(serial), keys(brute_complete(boxes)));
    EXPECT_TRUE(same_sequence(serial, threaded)) << "output order depends on the thread count";
  }
}

TEST_P(BoxPruningTest, BipartiteMatchesBruteForce) {
  const auto [kind, n] = GetParam();
  std::mt19937 rng(3);
  const std::vector<Box3> a = make_boxes(kind, n, rng);
  const std::vector<Box3> b = make_boxes(kind, n / 3 + 1, rng);
  std::vector<IndexPair> expected, got, threaded;
  for (std::uint32_t i = 0; i < a.size(); ++i)
    for (std::uint32_t j = 0; j < b.size(); ++j)
      if (overlaps(a[i], b[j])) expected.push_back({i, j});
  BoxPruner pruner;
  pruner.bipartite(a, b, got);
  ASSERT_EQ(keys(got), keys(expected));
  ThreadPool pool(2);
  threaded_pruner(pool).bipartite(a, b, threaded);
  EXPECT_TRUE(same_sequence(got, threaded));
  // Reused buffers give the same answer again.
  std::vector<IndexPair> again;
  pruner.bipartite(a, b, again);
  EXPECT_TRUE(same_sequence(got, again));
}

// One set much smaller than the other takes the probe path, in either order.
TEST_P(BoxPruningTest, AsymmetricBipartiteMatchesBruteForce) {
  const auto [kind, n] = GetParam();
  std::mt19937 rng(5);
  const std::vector<Box3> large = make_boxes(kind, n, rng);
  const std::vector<Box3> small = make_boxes(kind, n / 10 + 1, rng);
  std::vector<IndexPair> expected;
  for (std::uint32_t i = 0; i < small.size(); ++i)
    for (std::uint32_t j = 0; j < large.size(); ++j)
      if (overlaps(small[i], large[j])) expected.push_back({i, j});
  ThreadPool pool(2);
  for (const bool small_first : {true, false}) {
    SCOPED_TRACE(small_first ? "small set first" : "large set first");
    std::vector<IndexPair> got, threaded;
    BoxPruner pruner;
    if (small_first) {
      pruner.bipartite(small, large, got);
      threaded_pruner(pool).bipartite(small, large, threaded);
    } else {
      pruner.bipartite(large, small, got);
      threaded_pruner(pool).bipartite(large, small, threaded);
      for (IndexPair& p : got) std::swap(p.i, p.j);
      for (IndexPair& p : threaded) std::swap(p.i, p.j);
    }
    ASSERT_EQ(keys(got), keys(expected));
    EXPECT_TRUE(same_sequence(got, threaded));
  }
}

// A prepared set queried by sets of other sizes and shapes, queries that
// lie partly outside it included; calls to complete() and bipartite() in
// between leave it alone; a set too coarse for huge query boxes declines.
TEST_P(BoxPruningTest, PreparedBipartiteMatchesBruteForce) {
  const auto [kind, n] = GetParam();
  std::mt19937 rng(7);
  const std::vector<Box3> resting = make_boxes(kind, n, rng);
  ThreadPool pool(2);
  BoxPruner pruner, on_pool = threaded_pruner(pool);
  pruner.prepare(resting);
  on_pool.prepare(resting);
  EXPECT_EQ(pruner.prepared_size(), n);
  EXPECT_GE(pruner.prepared_cells(), 1u);
  for (const std::size_t m : {std::size_t{0}, std::size_t{1}, n / 10 + 1, n + 5}) {
    SCOPED_TRACE(testing::Message() << m << " query boxes");
    std::vector<Box3> query = make_boxes(kind, m, rng);
    for (std::size_t i = 0; i < query.size(); i += 5) {  // some beyond the prepared set's bounds
      for (int k = 0; k < 3; ++k) query[i].min[k] -= 1000, query[i].max[k] -= 999;
    }
    std::vector<IndexPair> expected, got, threaded, unrelated;
    for (std::uint32_t i = 0; i < query.size(); ++i)
      for (std::uint32_t j = 0; j < resting.size(); ++j)
        if (overlaps(query[i], resting[j])) expected.push_back({i, j});
    pruner.complete(query, unrelated);
    pruner.bipartite(query, resting, unrelated);
    if (!pruner.bipartite_prepared(query, got)) {
      EXPECT_TRUE(got.empty());
      EXPECT_TRUE(kind == Kind::kInfinite || kind == Kind::kHuge) << "declined ordinary boxes";
      continue;
    }
    ASSERT_EQ(keys(got), keys(expected));
    ASSERT_TRUE(on_pool.bipartite_prepared(query, threaded));
    EXPECT_TRUE(same_sequence(got, threaded)) << "output order depends on the thread count";

    // With the query boxes' pairs among themselves from the same pass: the
    // same prepared pairs in the same order, and exactly complete(query).
    std::vector<IndexPair> expected_among, got2, among, threaded2, threaded_among;
    for (std::uint32_t i = 0; i < query.size(); ++i)
      for (std::uint32_t j = i + 1; j < query.size(); ++j)
        if (overlaps(query[i], query[j])) expected_among.push_back({i, j});
    ASSERT_TRUE(pruner.bipartite_prepared(query, got2, among));
    EXPECT_TRUE(same_sequence(got, got2));
    ASSERT_EQ(keys(among), keys(expected_among));
    ASSERT_TRUE(on_pool.bipartite_prepared(query, threaded2, threaded_among));
    EXPECT_TRUE(same_sequence(got2, threaded2)) << "output order depends on the thread count";
    EXPECT_TRUE(same_sequence(among, threaded_among)) << "output order depends on the thread count";
    // Nothing prepared: the query's own pairs still.
    BoxPruner empty;
    std::vector<IndexPair> none, alone;
    ASSERT_TRUE(empty.bipartite_prepared(query, none, alone));
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(keys(alone), keys(expected_among));
  }
  // Prepared anew: the old set is gone.
  const std::vector<Box3> other = make_boxes(kind, n / 2, rng);
  pruner.prepare(other);
  EXPECT_EQ(pruner.prepared_size(), n / 2);
  std::vector<IndexPair> expected, got;
  for (std::uint32_t i = 0; i < resting.size(); ++i)
    for (std::uint32_t j = 0; j < other.size(); ++j)
      if (overlaps(resting[i], other[j])) expected.push_back({i, j});
  if (pruner.bipartite_prepared(resting, got)) {
    EXPECT_EQ(keys(got), keys(expected));
  }
}

// prepare() with an output finds exactly complete()'s pairs in the same
// order, and leaves the same prepared set.
// The prepared grid's search from each query box starts at the mins that
// can still reach it, by the cell's longest extent: an upper bound, also
// where max - min rounds in double (a tiny negative min under a large max).
TEST(BoxPruner, PreparedSearchReachesATinyMinUnderALargeMax) {
  for (const float tiny : {-0x1p-149f, -FLT_MIN, -1e-30f, -0x1p-60f, 0x1p-149f}) {
    for (int axis = 0; axis < 3; ++axis) {
      SCOPED_TRACE(std::to_string(tiny) + " on axis " + std::to_string(axis));
      std::vector<Box3> resting = {{{-0.0f, 3, 0}, {3, 3, 0}},
                                   {{3, 3, 0}, {3, 3, 0}},
                                   {{3, 3, 0}, {3, 3, 0}},
                                   {{-2, -2, 0}, {-2, -2, 0}},
                                   {{-2, -2, -2}, {4.5f, 4.5f, 4.5f}}};
      resting[4].min[axis] = tiny;
      const std::vector<Box3> query = {{{4.5f, 4.5f, 0}, {4.5f, 4.5f, 0}}};
      BoxPruner pruner;
      pruner.prepare(resting);
      std::vector<IndexPair> found, among;
      ASSERT_TRUE(pruner.bipartite_prepared(query, found, among));
      const bool touches = tiny < 0 || axis != 2;  // +tiny lifts the box off the plane z = 0
      ASSERT_EQ(found.size(), touches ? 1u : 0u);
      if (touches) {
        EXPECT_TRUE(found[0].i == 0 && found[0].j == 4);
      }
    }
  }
}

TEST_P(BoxPruningTest, PrepareFindsCompletesPairs) {
  const auto [kind, n] = GetParam();
  std::mt19937 rng(5);
  const std::vector<Box3> boxes = make_boxes(kind, n, rng);
  ThreadPool pool(2);
  BoxPruner pruner, threaded = threaded_pruner(pool), plain;
  std::vector<IndexPair> expected, got, got_threaded;
  plain.complete(boxes, expected);
  pruner.prepare(boxes, got);
  threaded.prepare(boxes, got_threaded);
  EXPECT_TRUE(same_sequence(got, expected));
  EXPECT_TRUE(same_sequence(got_threaded, expected));
  EXPECT_EQ(pruner.prepared_size(), n);
  plain.prepare(boxes);
  const std::vector<Box3> query = make_boxes(kind, n / 7 + 1, rng);
  std::vector<IndexPair> a, b;
  const bool took_a = pruner.bipartite_prepared(query, a), took_b = plain.bipartite_prepared(query, b);
  EXPECT_EQ(took_a, took_b);
  EXPECT_TRUE(same_sequence(a, b));
}

// Few query boxes among many prepared ones take the sparse sweep (each
// query box searches its cell for the first entry within reach): against
// brute force with bounds that touch exactly, signed zeros, points, boxes
// at the float limits, queries outside the prepared bounds, prepared cells
// holding one long box among short ones, and mins spread far from evenly
// along the sweep (clumps, a skewed density: the search's guess lands
// above its answer as well as below) in long cells (a flat world).
TEST(BoxPruning, SparseQueriesMatchBruteForce) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> cell(-300, 300);
  // plain, with boxes at the float limits, with long boxes, clumped, skewed,
  // and skewed past 2^16 entries (the searches then run a batch ahead of
  // their scans)
  for (const int variant : {0, 1, 2, 3, 4, 5}) {
    const bool with_limits = variant == 1, with_long = variant == 2, clumped = variant == 3, skewed = variant >= 4;
    std::vector<Box3> resting(variant == 5 ? 70000 : 40000);
    for (std::size_t i = 0; i < resting.size(); ++i) {
      Box3& b = resting[i];
      for (int k = 0; k < 3; ++k) {
        b.min[k] = float(cell(rng)) * 0.5f;
        b.max[k] = b.min[k] + float(rng() % 3) * 0.5f;  // some points, faces touching on the half-unit lattice
      }
      if (clumped || skewed) {  // flat, x spread most: long cells along x
        b.min[2] = b.max[2] = 0;
        const int x = clumped ? 40 * (cell(rng) / 40) + cell(rng) % 3 : cell(rng) * std::abs(cell(rng)) / 300;
        b.min[0] = float(x);
        b.max[0] = b.min[0] + float(rng() % 3) * 0.5f;
      }
      if (i % 101 == 0) b.min[0] = -0.0f, b.max[0] = std::max(b.max[0], 0.0f);
      if (with_limits && i % 103 == 0) b.max[0] = b.min[0] = FLT_MAX;
      if (with_limits && i % 107 == 0) b.max[0] = b.min[0] = -FLT_MAX;
      if (with_long && i % 1009 == 0) b.min[0] = -200, b.max[0] = 200;
    }
    BoxPruner pruner;
    pruner.prepare(resting);
    if (!with_limits) {  // the limits make x's spread look empty: one cell
      ASSERT_GT(pruner.prepared_cells(), 4u);
    }
    for (const std::size_t m : {std::size_t{1}, std::size_t{40}, std::size_t{400}}) {
      SCOPED_TRACE(testing::Message() << m << " query boxes, variant " << variant);
      std::vector<Box3> query(m);
      for (std::size_t i = 0; i < m; ++i) {
        Box3& q = query[i];
        for (int k = 0; k < 3; ++k) {
          q.min[k] = float(cell(rng)) * 0.5f;
          q.max[k] = q.min[k] + float(rng() % 4) * 0.5f;
        }
        if (clumped || skewed) {
          q.min[2] = q.max[2] = 0;
          q.min[0] = resting[rng() % resting.size()].min[0] - float(rng() % 4) * 0.5f;
          q.max[0] = q.min[0] + float(rng() % 4) * 0.5f;
        }
        if (i % 5 == 1) q.min[0] = 0.0f, q.max[0] = std::max(q.max[0], 0.0f);
        if (i % 7 == 2) q.min[0] = q.max[0] = -FLT_MAX;
        if (i % 11 == 3) q.max[0] = FLT_MAX;
        if (i % 13 == 4) q.min[1] -= 1000, q.max[1] -= 999;  // beyond the prepared bounds
      }
      std::vector<IndexPair> expected, got;
      for (std::uint32_t i = 0; i < query.size(); ++i)
        for (std::uint32_t j = 0; j < resting.size(); ++j)
          if (overlaps(query[i], resting[j])) expected.push_back({i, j});
      ASSERT_TRUE(pruner.bipartite_prepared(query, got));
      EXPECT_EQ(keys(got), keys(expected));
      EXPECT_EQ(got.size(), expected.size()) << "a pair reported twice";
    }
  }
}

// The prepared-set tests' boxes: on the half-unit lattice of [-150, 150]
// (points, faces touching), every 101st reaching -0 on x, every 1009th
// long on x; `extra(box, made)` adds a test's own kinds.
template <class Extra>
auto lattice_boxes(std::mt19937& rng, Extra extra) {
  return [&rng, extra, made = std::size_t{0}, cell = std::uniform_int_distribution<int>(-300, 300)]() mutable {
    Box3 b;
    for (int k = 0; k < 3; ++k) {
      b.min[k] = float(cell(rng)) * 0.5f;
      b.max[k] = b.min[k] + float(rng() % 3) * 0.5f;
    }
    ++made;
    if (made % 101 == 0) b.min[0] = -0.0f, b.max[0] = std::max(b.max[0], 0.0f);
    if (made % 1009 == 0) b.min[0] = -200, b.max[0] = 200;
    extra(b, made);
    return b;
  };
}

// `query` against the prepared set finds exactly the pairs brute force finds
// over the boxes it holds (held[j] != 0), each once.
void expect_prepared_pairs(BoxPruner& pruner, std::span<const Box3> query, const std::vector<Box3>& boxes,
                           const std::vector<std::uint8_t>& held) {
  std::vector<IndexPair> expected, got;
  for (std::uint32_t i = 0; i < query.size(); ++i)
    for (std::uint32_t j = 0; j < boxes.size(); ++j)
      if (held[j] != 0 && overlaps(query[i], boxes[j])) expected.push_back({i, j});
  ASSERT_TRUE(pruner.bipartite_prepared(query, got));
  EXPECT_EQ(keys(got), keys(expected));
  EXPECT_EQ(got.size(), expected.size()) << "a pair reported twice";
}

// A prepared set updated in place (update_prepared: boxes dropped, boxes
// merged in at the free indices) answers queries as brute force over the
// boxes it holds, round after round: shrinking and growing rounds (the
// merge's writes running behind and ahead of its reads), boxes at signed
// zeros, the float limits, long ones, touching faces; and a round it must
// decline changes nothing.
TEST(BoxPruning, UpdatedPreparedSetMatchesBruteForce) {
  std::mt19937 rng(23);
  auto make = lattice_boxes(rng, [](Box3& b, std::size_t made) {
    if (made > 30000 && made % 211 == 0) b.max[0] = b.min[0] = FLT_MAX;   // after the grid is chosen (it would
    if (made > 30000 && made % 223 == 0) b.max[0] = b.min[0] = -FLT_MAX;  // see no spread on x, one cell)
  });
  std::vector<Box3> boxes(30000);
  for (Box3& b : boxes) b = make();
  std::vector<std::uint8_t> held(boxes.size(), 1);  // by index: whether the set holds boxes[i]
  BoxPruner pruner;
  pruner.prepare(boxes);
  ASSERT_GT(pruner.prepared_cells(), 4u);
  const auto check_queries = [&](std::size_t m) {
    std::vector<Box3> query(m);
    for (Box3& q : query) q = make();
    expect_prepared_pairs(pruner, query, boxes, held);
  };
  // Per round: the share of held boxes dropped, and of boxes added, in 1/100.
  const std::array<std::array<int, 2>, 6> rounds{{{10, 10}, {0, 25}, {30, 2}, {5, 40}, {20, 20}, {0, 0}}};
  std::vector<std::uint32_t> indices;
  for (const auto& [drop, add] : rounds) {
    SCOPED_TRACE(testing::Message() << "drop " << drop << "%, add " << add << "%");
    std::vector<std::uint8_t> keep(held);
    std::size_t free = 0;
    for (std::uint8_t& k : keep) {
      if (k != 0 && int(rng() % 100) < drop) k = 0;
      free += k == 0;
    }
    std::vector<Box3> added(boxes.size() * std::size_t(add) / 100);
    for (Box3& b : added) b = make();
    ASSERT_EQ(pruner.prepared_size(), boxes.size());
    ASSERT_TRUE(pruner.update_prepared(keep, added, indices));
    // The free indices, lowest first, then new ones.
    ASSERT_EQ(indices.size(), added.size());
    std::vector<std::uint32_t> expected_indices;
    for (std::uint32_t i = 0; i < keep.size() && expected_indices.size() < added.size(); ++i)
      if (keep[i] == 0) expected_indices.push_back(i);
    while (expected_indices.size() < added.size())
      expected_indices.push_back(std::uint32_t(boxes.size() + expected_indices.size() - free));
    ASSERT_EQ(indices, expected_indices);
    held = keep;
    boxes.resize(std::max<std::size_t>(boxes.size(), pruner.prepared_size()));
    held.resize(boxes.size(), 0);
    for (std::size_t k = 0; k < added.size(); ++k) boxes[indices[k]] = added[k], held[indices[k]] = 1;
    for (const std::size_t m : {std::size_t{1}, std::size_t{30}, std::size_t{600}}) check_queries(m);
  }
  // Added boxes spanning the whole grid, and a set shrunk to a third: declined, nothing changed.
  const std::vector<Box3> everywhere(200, Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});
  EXPECT_FALSE(pruner.update_prepared(held, everywhere, indices));
  std::vector<std::uint8_t> few(held);
  for (std::size_t i = 0; i < few.size(); ++i) few[i] = few[i] != 0 && i % 3 == 0;
  EXPECT_FALSE(pruner.update_prepared(few, {}, indices));
  EXPECT_EQ(pruner.prepared_size(), boxes.size());
  check_queries(300);
}

// A prepared set edited in place (free_prepared: a box's entries freed where
// they lie; insert_prepared: a box takes free entries near where it sorts)
// answers queries as brute force over the boxes it holds, round after
// round, its free entries met by no query, not even one unbounded both ways
// on both grid axes; a box freed with bounds other than its own, or twice,
// is refused; an index comes back free or new; a merge afterwards drops the
// free entries, and with none left an insertion is refused, changing
// nothing.
TEST(BoxPruning, PreparedSetEditedInPlaceMatchesBruteForce) {
  std::mt19937 rng(29);
  auto make = lattice_boxes(rng, [](Box3& b, std::size_t made) {
    if (made % 307 == 0) b.max[1] = b.min[1] + 40;  // across cells
  });
  std::vector<Box3> boxes(30000);
  for (Box3& b : boxes) b = make();
  std::vector<std::uint8_t> held(boxes.size(), 1);
  BoxPruner pruner;
  pruner.prepare(boxes);
  ASSERT_GT(pruner.prepared_cells(), 4u);
  const auto check_queries = [&](std::size_t m) {
    std::vector<Box3> query(m);
    for (Box3& q : query) q = make();
    if (m >= 3) {
      for (int k = 0; k < 3; ++k) {  // bounded on axis k only: unbounded on both grid axes for one k
        query[std::size_t(k)] = Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}};
        query[std::size_t(k)].min[k] = -1, query[std::size_t(k)].max[k] = 1;
      }
    }
    expect_prepared_pairs(pruner, query, boxes, held);
  };
  std::size_t inserted = 0, refused = 0, reused = 0;
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE(testing::Message() << "round " << round);
    std::vector<std::uint32_t> freed;
    for (std::uint32_t i = 0; i < boxes.size(); ++i) {
      if (held[i] != 0 && rng() % 100 < 2) freed.push_back(i);
    }
    const std::size_t free_before = pruner.free_entries();
    for (const std::uint32_t i : freed) {
      Box3 other = boxes[i];
      other.min[0] -= 0.25f;
      EXPECT_FALSE(pruner.free_prepared(i, other));  // not the box laid out
      ASSERT_TRUE(pruner.free_prepared(i, boxes[i]));
      EXPECT_FALSE(pruner.free_prepared(i, boxes[i]));  // freed already
      held[i] = 0;
    }
    EXPECT_GE(pruner.free_entries(), free_before + freed.size());  // an entry a cell of each box
    check_queries(1);
    check_queries(600);
    // Most join near a freed box, some anywhere (refused where no free entry is near).
    for (std::size_t k = 0; k < freed.size(); ++k) {
      Box3 b = k % 5 == 4 ? make() : boxes[freed[k]];
      if (k % 5 != 4) {
        for (int a = 0; a < 3; ++a) b.min[a] += 0.5f, b.max[a] += 0.5f;
      }
      const std::size_t size = pruner.prepared_size();
      std::uint32_t index = 0;
      if (!pruner.insert_prepared(b, index)) {
        ++refused;
        EXPECT_EQ(pruner.prepared_size(), size);
        continue;
      }
      ++inserted;
      if (index < size) {
        ASSERT_EQ(held[index], 0) << "an index still held given again";
        ++reused;
      } else {
        ASSERT_EQ(index, size);
        ASSERT_EQ(pruner.prepared_size(), size + 1);
        boxes.push_back(b), held.push_back(0);
      }
      boxes[index] = b, held[index] = 1;
    }
    for (const std::size_t m : {std::size_t{1}, std::size_t{30}, std::size_t{600}}) check_queries(m);
  }
  EXPECT_GT(inserted, 1000u);
  EXPECT_GT(reused, 100u);
  EXPECT_GT(refused, 0u);
  // A merge drops the free entries and keeps the boxes inserted in place.
  std::vector<std::uint32_t> indices;
  ASSERT_EQ(pruner.prepared_size(), boxes.size());
  ASSERT_TRUE(pruner.update_prepared(held, {}, indices));
  EXPECT_EQ(pruner.free_entries(), 0u);
  check_queries(600);
  std::uint32_t index = 0;
  EXPECT_FALSE(pruner.insert_prepared(boxes[0], index));  // no free entry left
  EXPECT_EQ(pruner.prepared_size(), boxes.size());
  check_queries(600);
}

// Query boxes far larger than the prepared grid's cells would be copied into
// most of them: the call declines rather than doing that.
TEST(BoxPruning, PreparedDeclinesHugeQueries) {
  std::mt19937 rng(11);
  const std::vector<Box3> resting = make_boxes(Kind::kUniform, 20000, rng);
  BoxPruner pruner;
  pruner.prepare(resting);
  ASSERT_GT(pruner.prepared_cells(), 16u);
  std::vector<IndexPair> out;
  const std::vector<Box3> everywhere(100, Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});
  EXPECT_FALSE(pruner.bipartite_prepared(everywhere, out));
  EXPECT_TRUE(out.empty());
  const std::vector<Box3> one{Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}}};
  std::vector<IndexPair> expected;
  for (std::uint32_t j = 0; j < resting.size(); ++j) expected.push_back({0, j});
  if (pruner.bipartite_prepared(one, out)) {
    EXPECT_EQ(keys(out), keys(expected));
  }
}

std::string shape_name(const testing::TestParamInfo<std::tuple<Kind, std::size_t>>& info) {
  static constexpr const char* kNames[] = {"uniform",  "flat", "lattice", "identical",
                                           "infinite", "huge", "points",  "mixed_sizes"};
  const auto [kind, n] = info.param;
  return std::string(kNames[static_cast<int>(kind)]) + "_" + std::to_string(n);
}

INSTANTIATE_TEST_SUITE_P(Shapes, BoxPruningTest,
                         testing::Combine(testing::Values(Kind::kUniform, Kind::kFlat, Kind::kLattice, Kind::kIdentical,
                                                          Kind::kInfinite, Kind::kHuge, Kind::kPoints,
                                                          Kind::kMixedSizes),
                                          testing::Values(std::size_t{0}, std::size_t{1}, std::size_t{2},
                                                          std::size_t{37}, std::size_t{3000}, std::size_t{6000})),
                         shape_name);

// n unit cubes at random in a cube of volume density 5%.
std::vector<Box3> unit_cubes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0, std::cbrt(float(n) / 0.05f));
  std::vector<Box3> boxes(n);
  for (Box3& b : boxes) {
    const float x = u(rng), y = u(rng), z = u(rng);
    b = Box3{{x, y, z}, {x + 1, y + 1, z + 1}};
  }
  return boxes;
}

// A large prepared set keeps its grid but not the per-task sort buffers
// of its layout, and release_buffers() gives back what the calls' buffers
// hold: the searches after it find the same pairs, in the same order.
// A pool that counts the batches of more than one task it is given.
class CountingPool final : public TaskSystem {
 public:
  void run(std::size_t count, TaskRef task) override {
    split_runs += count > 1;
    pool.run(count, task);
  }
  unsigned concurrency() const noexcept override { return pool.concurrency(); }
  ThreadPool pool{2};
  std::size_t split_runs = 0;
};

// The Shapes tests' threaded pruners (threaded_pruner()) do run tasks side
// by side on their small inputs, in every call, where the default grain
// leaves such inputs to the calling thread; the output is the same.
TEST(BoxPruner, ASmallGrainSplitsSmallInputsIntoTasks) {
  std::mt19937 rng(11);
  const std::vector<Box3> boxes = make_boxes(Kind::kUniform, 3000, rng);
  const std::vector<Box3> few = make_boxes(Kind::kUniform, 1000, rng);
  const std::vector<Box3> fewer = make_boxes(Kind::kUniform, 40, rng);
  for (const std::uint32_t grain : {BoxPruner::kDefaultTaskGrain, 4u}) {
    SCOPED_TRACE(testing::Message() << "grain " << grain);
    CountingPool tasks;
    BoxPruner plain, pruner(&tasks);
    pruner.set_task_grain(grain);
    const auto splits = [&](auto&& call) {
      std::vector<IndexPair> expected, got;
      call(plain, expected);
      const std::size_t before = tasks.split_runs;
      call(pruner, got);
      EXPECT_TRUE(same_sequence(expected, got));
      EXPECT_FALSE(got.empty());
      return tasks.split_runs > before;
    };
    const bool split = grain != BoxPruner::kDefaultTaskGrain;
    EXPECT_EQ(splits([&](BoxPruner& p, std::vector<IndexPair>& out) { p.complete(boxes, out); }), split);
    EXPECT_EQ(splits([&](BoxPruner& p, std::vector<IndexPair>& out) { p.bipartite(boxes, few, out); }), split);
    EXPECT_EQ(splits([&](BoxPruner& p, std::vector<IndexPair>& out) { p.bipartite(fewer, boxes, out); }), split)
        << "the probe path";
    EXPECT_EQ(splits([&](BoxPruner& p, std::vector<IndexPair>& out) { p.prepare(boxes, out); }), split);
    EXPECT_EQ(splits([&](BoxPruner& p, std::vector<IndexPair>& out) { ASSERT_TRUE(p.bipartite_prepared(boxes, out)); }),
              split);
  }
}

TEST(BoxPruner, LargeLayoutsAndReleasedBuffersKeepOnlyTheGrid) {
  ThreadPool pool(2);
  BoxPruner pruner(&pool);
  const std::vector<Box3> boxes = unit_cubes(100'000, 5);
  pruner.prepare(boxes);
  const std::size_t laid_out = pruner.memory_bytes();
  pruner.release_buffers();
  // Only the bucketing's counts, a few per cell, were left to give back.
  EXPECT_LT(laid_out - pruner.memory_bytes(), 64u << 10);
  std::vector<Box3> query(boxes.begin(), boxes.begin() + 3000);
  for (Box3& b : query) b.min[1] += 0.5f, b.max[1] += 0.5f;
  std::vector<IndexPair> first, again, all;
  ASSERT_TRUE(pruner.bipartite_prepared(query, first));
  pruner.complete(boxes, all);
  const std::size_t grown = pruner.memory_bytes();
  pruner.release_buffers();
  EXPECT_LT(pruner.memory_bytes(), laid_out);
  EXPECT_LT(pruner.memory_bytes() + (6u << 20), grown);  // complete()'s 60 bytes an entry
  ASSERT_TRUE(pruner.bipartite_prepared(query, again));
  EXPECT_FALSE(first.empty());
  EXPECT_TRUE(same_sequence(first, again));
}

// A framed pruner (sap's) keeps a large layout's staging (32 bytes an
// entry) to the end of the next frame, where a complete() of as many boxes
// takes it; otherwise it goes then. Unframed, it goes with the layout. The
// pairs are the same either way.
TEST(BoxPruner, AFramedLayoutLeavesItsStagingToTheNextFrameOnly) {
  constexpr std::size_t n = 100'000;
  const std::vector<Box3> boxes = unit_cubes(n, 9);
  BoxPruner plain, framed, recomputing;
  framed.set_framed(true);
  recomputing.set_framed(true);
  for (BoxPruner* p : {&plain, &framed, &recomputing}) p->prepare(boxes);
  const std::size_t spare = 32 * n;
  EXPECT_GE(framed.memory_bytes(), plain.memory_bytes() + spare);
  framed.end_frame();  // the layout's frame
  recomputing.end_frame();
  EXPECT_GE(framed.memory_bytes(), plain.memory_bytes() + spare);
  framed.end_frame();  // the next one, which did not recompute
  EXPECT_EQ(framed.memory_bytes(), plain.memory_bytes());
  // The next frame recomputes: its complete() stages in the spare.
  std::vector<IndexPair> expected, got;
  plain.complete(boxes, expected);
  recomputing.complete(boxes, got);
  EXPECT_TRUE(same_sequence(expected, got));
  EXPECT_FALSE(got.empty());
  EXPECT_LT(recomputing.memory_bytes(), plain.memory_bytes() + spare / 2);  // never held beside new room
  recomputing.end_frame();
  EXPECT_EQ(recomputing.memory_bytes(), plain.memory_bytes());
}

// take_room(): the receiver runs on the donor's buffers (its memory grows
// by them, no fresh room is taken for a complete() of as many boxes) with
// its own task system and settings; the donor forgets its prepared set and
// goes on with the receiver's old buffers. Every call finds the pairs a
// plain pruner finds, in the same order.
TEST(BoxPruner, TakesAnotherPrunersRoom) {
  constexpr std::size_t n = 100'000;
  const std::vector<Box3> boxes = unit_cubes(n, 13);
  std::vector<Box3> moved = boxes;
  for (Box3& b : moved) b.min[0] += 0.25f, b.max[0] += 0.25f;
  BoxPruner plain;
  std::vector<IndexPair> expected, expected_moved;
  plain.complete(boxes, expected);
  plain.complete(moved, expected_moved);

  CountingPool tasks;
  BoxPruner donor;
  donor.set_framed(true);  // sap's: its layout's staging kept a frame
  std::vector<IndexPair> got;
  donor.prepare(boxes, got);
  EXPECT_TRUE(same_sequence(expected, got));
  const std::size_t room = donor.memory_bytes();
  BoxPruner receiver(&tasks);
  receiver.set_task_grain(64);
  receiver.take_room(std::move(donor));
  EXPECT_EQ(donor.prepared_size(), 0u);
  EXPECT_EQ(receiver.prepared_size(), 0u);  // the prepared set is forgotten, its arrays kept as room
  EXPECT_GE(receiver.memory_bytes(), room - (64u << 10));
  got.clear();
  const std::size_t splits = tasks.split_runs;
  receiver.complete(moved, got);
  EXPECT_TRUE(same_sequence(expected_moved, got));
  EXPECT_GT(tasks.split_runs, splits) << "its own task system and grain";
  BoxPruner fresh(&tasks);
  fresh.set_task_grain(64);
  std::vector<IndexPair> fresh_pairs;
  fresh.complete(moved, fresh_pairs);
  EXPECT_LT(receiver.memory_bytes(), fresh.memory_bytes() + 16 * n) << "the room taken used, not held beside new room";
  got.clear();
  donor.complete(boxes, got);  // the donor, left with the receiver's old buffers, still works
  EXPECT_TRUE(same_sequence(expected, got));
  EXPECT_FALSE(expected.empty());
}

// The recompute adapter driven directly, as the BroadPhase drives it, with
// and without the store, through frames that move every box, and one that
// removes every box and adds a new world: box pruning, dual-axis and a
// user's one-shot algorithm under it find brute force's pairs every frame
// (store_driver.hpp).
class NestedLoops final : public OneShotComplete {
 public:
  void complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) override {
    for (std::uint32_t i = 0; i < boxes.size(); ++i)
      for (std::uint32_t j = i + 1; j < boxes.size(); ++j)
        if (overlaps(boxes[i], boxes[j])) out.push_back({i, j});
  }
};

TEST(Recompute, MatchesBruteDrivenDirectly) {
  for (const bool with_store : {false, true}) {
    SCOPED_TRACE(with_store ? "store" : "own copy");
    drive_through_store(*detail::make_box_pruning(Options{}), with_store);
    drive_through_store(*detail::make_dual_axis(Options{}), with_store);
    drive_through_store(*make_recompute(std::make_unique<NestedLoops>()), with_store);
  }
}

TEST(BoxPruning, AppendsToTheOutput) {
  std::vector<IndexPair> out{{7, 8}};
  const std::vector<Box3> boxes{{{0, 0, 0}, {1, 1, 1}}, {{1, 1, 1}, {2, 2, 2}}};
  complete_pairs(boxes, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[1].i, 0u);
  EXPECT_EQ(out[1].j, 1u);
  std::vector<IndexPair> bip;
  bipartite_pairs(boxes, std::vector<Box3>{{{-0.0f, -0.0f, -0.0f}, {0.0f, 0.0f, 0.0f}}}, bip);
  ASSERT_EQ(bip.size(), 1u);
  EXPECT_EQ(bip[0].i, 0u);
  EXPECT_EQ(bip[0].j, 0u);
}

}  // namespace
}  // namespace sapling

namespace sapling {
namespace {

// The persistent box-pruning against brute on scenario frames large enough
// for the grid (churn, id reuse, static and moving boxes, a flat world).
TEST(BoxPruning, PersistentMatchesBruteOnScenarios) {
  for (const char* name : {"tracy", "allmoving3d", "unisize2d", "cluster"}) {
    SCOPED_TRACE(name);
    ScenarioParams params;
    params.name = name;
    params.n = 4000;
    params.cycle = 20;
    std::string error;
    auto scenario = make_scenario(params, &error);
    ASSERT_NE(scenario, nullptr) << error;
    auto fast = BroadPhase::create("box-pruning", Options{.dims = scenario->dims(), .threads = 2});
    auto reference = BroadPhase::create("brute", Options{.dims = scenario->dims()});
    TraceFrame frame;
    for (int f = 0; f < 6; ++f) {
      if (f > 0) scenario->step();
      fill_frame(*scenario, frame);
      for (BroadPhase* bp : {fast.get(), reference.get()}) {
        ASSERT_TRUE(bp->remove(frame.removed));
        ASSERT_TRUE(bp->move(frame.moved, frame.moved_boxes));
        ASSERT_TRUE(bp->add(frame.added, frame.added_boxes));
      }
      const FrameDelta got = fast->update();
      const FrameDelta want = reference->update();
      ASSERT_TRUE(std::equal(got.created.begin(), got.created.end(), want.created.begin(), want.created.end()))
          << "frame " << f;
      ASSERT_TRUE(std::equal(got.deleted.begin(), got.deleted.end(), want.deleted.begin(), want.deleted.end()))
          << "frame " << f;
      ASSERT_EQ(fast->pairs().size(), reference->pairs().size());
    }
  }
}

}  // namespace
}  // namespace sapling

// The debug draw (debug_draw.hpp): the last complete()'s grid as cells that
// cover space: every box's centre lies in a cell; the sweep axis is open.
// The persistent "box-pruning" hands its grid over through BroadPhase.
TEST(BoxPruning, DebugDrawShowsTheGridOfTheLastCall) {
  struct Cells : sapling::DebugDraw {
    std::vector<sapling::Box3> cells;
    void box(const sapling::Box3& b, sapling::DebugCategory c, sapling::Id owner) override {
      EXPECT_EQ(c, sapling::DebugCategory::kCell);
      EXPECT_EQ(owner, sapling::kNoOwner);
      cells.push_back(b);
    }
  };
  std::mt19937 rng(16);
  std::uniform_real_distribution<float> at(0, 100);
  std::vector<sapling::Box3> boxes(20000);
  for (auto& b : boxes) {
    const float x = at(rng), y = at(rng), z = at(rng);
    b = {{x, y, z}, {x + 0.5f, y + 0.5f, z + 0.5f}};
  }
  sapling::BoxPruner pruner;
  Cells before;
  pruner.debug_draw(before);
  EXPECT_TRUE(before.cells.empty());
  std::vector<sapling::IndexPair> out;
  pruner.complete(boxes, out);
  Cells drawn;
  pruner.debug_draw(drawn);
  ASSERT_GT(drawn.cells.size(), 1u) << "20,000 boxes get a grid";
  for (std::size_t i = 0; i < boxes.size(); i += 97) {
    std::array<float, 3> c;
    for (int k = 0; k < 3; ++k) c[k] = (boxes[i].min[k] + boxes[i].max[k]) / 2;
    const bool inside = std::any_of(drawn.cells.begin(), drawn.cells.end(), [&](const sapling::Box3& cell) {
      return sapling::overlaps(cell, sapling::Box3{c, c});
    });
    EXPECT_TRUE(inside) << "box " << i;
  }

  auto bp = sapling::BroadPhase::create("box-pruning");
  std::vector<sapling::Id> ids(boxes.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<sapling::Id>(i);
  ASSERT_TRUE(bp->add(ids, boxes));
  bp->update();
  Cells forwarded;
  bp->debug_draw(forwarded);
  EXPECT_EQ(forwarded.cells.size(), drawn.cells.size());
}
