// README.md's C++ snippets, compiled as they are written (extracted at build
// time by readme_snippets.py, under the project's -Wall -Wextra -Werror, so
// an ignored [[nodiscard]] result fails the build) and run, checking the
// values their comments claim. The first two snippets run as one program,
// the second continuing the first; the one-shot snippet runs on boxes given
// here, once where bipartite_prepared() takes the moving boxes and once
// where it declines them (boxes far larger than the grid's cells), each
// result against a direct loop over all pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "readme_snippets.hpp"
#include "sapling/sapling.hpp"

namespace sapling {
namespace {

static_assert(kReadmeSnippets == 3, "README.md has a new C++ snippet: run it in this test too");

std::vector<Id> ids_of(const std::vector<RayHit>& hits) {
  std::vector<Id> out;
  for (const RayHit& h : hits) out.push_back(h.id);
  return out;
}

TEST(Readme, UseItAndStaticScenery) {
  // The snippets are written at global scope in the README: the names they
  // declare live in this test's body.
#include "readme_snippet_1.inc"
  EXPECT_TRUE(s) << s.message();
  EXPECT_EQ(std::vector<Pair>(delta.created.begin(), delta.created.end()), (std::vector<Pair>{{7, 9}}));
  EXPECT_EQ(hits, (std::vector<Id>{7, 9}));
  EXPECT_EQ(now.size(), 1u);
#include "readme_snippet_2.inc"
  EXPECT_TRUE(s) << s.message();
  EXPECT_EQ(hits, (std::vector<Id>{20}));
  ASSERT_EQ(ids_of(along), (std::vector<Id>{9, 7, 20, 1}));
  EXPECT_EQ(along[0].t, 3.0f);
  EXPECT_EQ(along[1].t, 4.0f);
  EXPECT_EQ(along[2].t, 4.0f);
  EXPECT_EQ(along[3].t, 5.0f);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->id, 9u);
  EXPECT_EQ(first->t, 3.0f);
}

using Positions = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

// What the one-shot snippet leaves, for the checks.
struct OneShot {
  std::vector<IndexPair> pairs, across, again, same_size, hits, among;
  Status status;
};

OneShot one_shot_snippet(std::span<const Box3> boxes, std::span<const Box3> a, std::span<const Box3> b,
                         std::span<const Box3> resting, std::span<const Box3> moving) {
#include "readme_snippet_3.inc"
  return {pairs, across, again, same_size, hits, among, status};
}

Positions all_pairs(std::span<const Box3> x) {
  Positions out;
  for (std::uint32_t i = 0; i < x.size(); ++i) {
    for (std::uint32_t j = i + 1; j < x.size(); ++j) {
      if (overlaps(x[i], x[j])) out.emplace_back(i, j);
    }
  }
  return out;
}

Positions all_pairs(std::span<const Box3> x, std::span<const Box3> y) {
  Positions out;
  for (std::uint32_t i = 0; i < x.size(); ++i) {
    for (std::uint32_t j = 0; j < y.size(); ++j) {
      if (overlaps(x[i], y[j])) out.emplace_back(i, j);
    }
  }
  return out;
}

// (i, j) in the order given, or with i < j when `unordered` (complete()).
Positions in_order(const std::vector<IndexPair>& v, bool unordered = false) {
  Positions out;
  for (const IndexPair& p : v)
    out.emplace_back(unordered ? std::min(p.i, p.j) : p.i, unordered ? std::max(p.i, p.j) : p.j);
  std::sort(out.begin(), out.end());
  return out;
}

Positions sorted(const std::vector<IndexPair>& v) { return in_order(v, true); }

// Unit boxes on a coarse lattice (one size, for the unisize pruner), and
// the moving boxes `moving_size` wide.
std::vector<Box3> lattice(std::size_t n, float step, float size, float offset) {
  std::vector<Box3> out;
  for (std::size_t k = 0; k < n; ++k) {
    const float x = offset + step * float(k % 20), y = step * float((k / 20) % 20), z = step * float(k / 400);
    out.push_back(Box3{{x, y, z}, {x + size, y + size, z + size}});
  }
  return out;
}

// Boxes in a square of sqrt(n) a side in the plane z = 0: a prepared grid
// of many cells, which large moving boxes would be copied into.
std::vector<Box3> spread(std::size_t n, float step, float size, float offset) {
  std::vector<Box3> out;
  const std::size_t side = static_cast<std::size_t>(std::sqrt(double(n))) + 1;
  for (std::size_t k = 0; k < n; ++k) {
    const float x = offset + step * float(k % side), y = offset + step * float(k / side);
    out.push_back(Box3{{x, y, 0}, {x + size, y + size, size}});
  }
  return out;
}

TEST(Readme, OneShotQueries) {
  const std::vector<Box3> boxes = lattice(1000, 0.75f, 1, 0), a = lattice(300, 1.5f, 1, 0.25f),
                          b = lattice(500, 1.1f, 0.5f, 0.1f), resting = spread(8000, 1.5f, 1, 0);
  for (const float moving_size : {0.5f, 40.0f}) {  // taken, then declined (and done by the plain calls)
    SCOPED_TRACE(moving_size);
    const std::vector<Box3> moving = spread(200, 2.1f, moving_size, 0.3f);
    const OneShot r = one_shot_snippet(boxes, a, b, resting, moving);
    EXPECT_EQ(sorted(r.pairs), all_pairs(boxes));
    EXPECT_FALSE(r.pairs.empty());
    EXPECT_EQ(in_order(r.across), all_pairs(a, b));
    EXPECT_FALSE(r.across.empty());
    ASSERT_EQ(r.again.size(), r.pairs.size());  // "in the same order"
    for (std::size_t k = 0; k < r.pairs.size(); ++k) {
      ASSERT_TRUE(r.again[k].i == r.pairs[k].i && r.again[k].j == r.pairs[k].j) << k;
    }
    EXPECT_TRUE(r.status) << r.status.message();
    EXPECT_EQ(sorted(r.same_size), all_pairs(boxes));
    EXPECT_EQ(in_order(r.hits), all_pairs(moving, resting));
    EXPECT_FALSE(r.hits.empty());
    EXPECT_EQ(sorted(r.among), all_pairs(moving));
    EXPECT_FALSE(r.among.empty() && moving_size > 1);
    // Whether the prepared grid took them: the small ones it must, the
    // large ones it declines (the snippet's fallback, checked above, ran).
    BoxPruner pruner;
    pruner.prepare(resting);
    std::vector<IndexPair> hits, among;
    EXPECT_EQ(pruner.bipartite_prepared(moving, hits, among), moving_size < 1) << pruner.prepared_cells() << " cells";
  }
}

}  // namespace
}  // namespace sapling
