// The static-object tree (src/detail/aabb_tree.hpp) against brute force: the
// test oracle's loop over every live box (oracle.hpp).
// Boxes are snapped to a grid (touching faces, shared edges, duplicates),
// mixed with points, infinite and +-FLT_MAX bounds and boxes out at +inf;
// trees are built (both splits) and then changed by random inserts, removals
// and moves, validate() after every step. Region queries compare sorted
// slot sets; rays compare every hit as sorted (t, slot) lists and the
// closest hit (ties to the smaller slot). A failure names the seed.
#include "detail/aabb_tree.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "detail/radix_sort.hpp"
#include "oracle.hpp"
#include "sapling/task_system.hpp"

namespace sapling::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
using Slot = AabbTree::Slot;
using Hit = std::pair<float, Slot>;
using Model = std::vector<std::optional<Box3>>;  // by slot

// Random boxes: grid-snapped, mixed sizes, points, infinite and huge bounds.
struct BoxMaker {
  std::mt19937 rng;
  float world = 20.0f;

  float grid() { return std::uniform_int_distribution<int>(-40, 40)(rng) * (world / 40.0f); }
  float side() {
    static constexpr std::array<float, 6> kSides = {0.0f, 0.5f, 1.0f, 2.0f, 5.0f, 20.0f};
    return kSides[std::uniform_int_distribution<std::size_t>(0, kSides.size() - 1)(rng)];
  }
  Box3 make() {
    Box3 b;
    for (int k = 0; k < 3; ++k) {
      b.min[k] = grid();
      b.max[k] = b.min[k] + side();
    }
    const int special = std::uniform_int_distribution<int>(0, 99)(rng);
    const int k = std::uniform_int_distribution<int>(0, 2)(rng);
    if (special < 3) {
      b.min[k] = -kInf;
    } else if (special < 6) {
      b.max[k] = kInf;
    } else if (special < 9) {  // a plane: infinite on two axes
      b.min[k] = -kInf, b.max[k] = kInf;
      b.min[(k + 1) % 3] = -kInf, b.max[(k + 1) % 3] = kInf;
    } else if (special < 11) {
      b.min[k] = -FLT_MAX;
    } else if (special < 13) {
      b.max[k] = FLT_MAX;
    } else if (special < 14) {  // out at +inf
      b.min[k] = b.max[k] = kInf;
    } else if (special < 15) {
      b.min[k] = b.max[k] = -kInf;
    } else if (special < 16) {
      b.min[k] = b.max[k] = FLT_MAX;
    } else if (special < 18) {  // everything
      b = {{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}};
    }
    return b;
  }
};

// Brute force is the shared oracle (oracle.hpp) over the live slots, slot s
// as id s: a loop with overlaps() and ray_entry(), hits sorted by (t, slot).
oracle::World world_of(const Model& model) {
  oracle::World world;
  for (Slot s = 0; s < model.size(); ++s) {
    if (model[s]) world.add(s, *model[s]);
  }
  return world;
}

std::vector<Slot> brute_query(const oracle::World& world, const Box3& q) {
  const std::vector<Id> ids = world.query(q);
  return {ids.begin(), ids.end()};
}

std::vector<Hit> brute_ray(const oracle::World& world, const Ray3& r) {
  std::vector<Hit> out;
  for (const RayHit& h : world.ray_cast(r)) out.emplace_back(h.t, h.id);
  return out;
}

std::vector<Hit> brute_ray(const Model& model, const Ray3& r) { return brute_ray(world_of(model), r); }

std::vector<Slot> tree_query(const AabbTree& tree, const Box3& q) {
  std::vector<Slot> out;
  tree.query(q, [&](Slot s) { out.push_back(s); });
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Hit> tree_ray(const AabbTree& tree, const Ray3& r) {
  std::vector<Hit> out;
  tree.ray(r, [&](Slot s, float t) {
    out.emplace_back(t, s);
    return r.max_t;
  });
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<Hit> tree_closest(const AabbTree& tree, const Ray3& r) {
  std::optional<Hit> best;
  tree.ray(r, [&](Slot s, float t) {
    if (!best || Hit{t, s} < *best) best = Hit{t, s};
    return best->first;
  });
  return best;
}

// A ray of one of several kinds, many of them degenerate on purpose.
Ray3 make_ray(BoxMaker& maker, const Model& model) {
  std::mt19937& rng = maker.rng;
  Ray3 r;
  for (int k = 0; k < 3; ++k) r.origin[k] = maker.grid() * 1.5f;
  const int kind = std::uniform_int_distribution<int>(0, 9)(rng);
  auto component = [&]() {
    static constexpr std::array<float, 9> kValues = {0.0f, 1.0f, -1.0f, 0.5f, -2.0f, 1e-30f, -1e-30f, 1e30f, -3e30f};
    return kValues[std::uniform_int_distribution<std::size_t>(0, kValues.size() - 1)(rng)];
  };
  if (kind < 3) {  // random direction
    for (int k = 0; k < 3; ++k) r.direction[k] = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  } else if (kind < 5) {  // axis-parallel
    r.direction[std::uniform_int_distribution<int>(0, 2)(rng)] = std::uniform_int_distribution<int>(0, 1)(rng) ? 1 : -1;
  } else {
    for (int k = 0; k < 3; ++k) r.direction[k] = component();
  }
  if (kind >= 7) {  // from a face, an edge or a corner of a live finite box, or inside it
    std::vector<Slot> live;
    for (Slot s = 0; s < model.size(); ++s) {
      if (model[s]) live.push_back(s);
    }
    if (!live.empty()) {
      const Box3& b = *model[live[std::uniform_int_distribution<std::size_t>(0, live.size() - 1)(rng)]];
      for (int k = 0; k < 3; ++k) {
        const int where = std::uniform_int_distribution<int>(0, 2)(rng);
        const float v = where == 0 ? b.min[k] : where == 1 ? b.max[k] : 0.5f * b.min[k] + 0.5f * b.max[k];
        if (std::isfinite(v)) r.origin[k] = v;
      }
    }
  }
  if (r.direction == std::array<float, 3>{0, 0, 0}) r.direction[0] = 1.0f;
  const int t = std::uniform_int_distribution<int>(0, 5)(rng);
  r.max_t = t == 0 ? 0.0f : t == 1 ? 3.0f : t == 2 ? 1e-3f : t == 3 ? 40.0f : kInf;
  return r;
}

Box3 make_query(BoxMaker& maker) {
  Box3 q = maker.make();
  if (std::uniform_int_distribution<int>(0, 3)(maker.rng) == 0) {  // a point
    for (int k = 0; k < 3; ++k) q.min[k] = q.max[k] = maker.grid();
  }
  return q;
}

// query_each() against query(): every box answered once, with the leaves
// query() visits, in its order, and their boxes as the tree holds them.
void check_query_each(const AabbTree& tree, std::span<const Box3> queries) {
  std::vector<int> calls(queries.size(), 0);
  tree.query_each(queries, [&](std::size_t i, std::span<const AabbTree::Hit> hits) {
    ++calls[i];
    std::vector<Slot> walk;
    tree.query(queries[i], [&](Slot s) { walk.push_back(s); });
    ASSERT_EQ(hits.size(), walk.size()) << "query " << i;
    for (std::size_t k = 0; k < hits.size(); ++k) {
      ASSERT_EQ(hits[k].slot, walk[k]) << "query " << i;
      ASSERT_TRUE(hits[k].box == tree.box(walk[k])) << "query " << i;
    }
  });
  for (std::size_t i = 0; i < calls.size(); ++i) ASSERT_EQ(calls[i], 1) << "query " << i;
}

void check_against_brute(const AabbTree& tree, const Model& model, BoxMaker& maker, int queries) {
  const oracle::World world = world_of(model);
  std::vector<Box3> asked;
  for (int i = 0; i < queries; ++i) {
    const Box3 q = make_query(maker);
    asked.push_back(q);
    ASSERT_EQ(tree_query(tree, q), brute_query(world, q)) << "query " << i;
    const Ray3 r = make_ray(maker, model);
    ASSERT_TRUE(check_ray(r));
    const std::vector<Hit> all = brute_ray(world, r);
    ASSERT_EQ(tree_ray(tree, r), all) << "ray " << i;
    const std::optional<Hit> closest = tree_closest(tree, r);
    ASSERT_EQ(closest.has_value(), !all.empty());
    if (closest) {
      ASSERT_EQ(*closest, all.front()) << "ray " << i;
    }
  }
  check_query_each(tree, asked);
}

// Builds from the live boxes of `model`, given in a shuffled order so that
// slots and places in the tree are unrelated (ties then test the bound).
void build_from(AabbTree& tree, const Model& model, AabbTree::Split split, std::uint32_t seed = 0) {
  std::vector<Slot> slots;
  for (Slot s = 0; s < model.size(); ++s) {
    if (model[s]) slots.push_back(s);
  }
  std::shuffle(slots.begin(), slots.end(), std::mt19937(seed));
  std::vector<Box3> boxes;
  for (const Slot s : slots) boxes.push_back(*model[s]);
  tree.build(slots, boxes, split);
}

TEST(AabbTree, Empty) {
  AabbTree tree;
  EXPECT_TRUE(tree.validate());
  EXPECT_EQ(tree.size(), 0u);
  EXPECT_FALSE(tree.contains(0));
  tree.query({{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}}, [](Slot) { FAIL(); });
  tree.ray(Ray3{{0, 0, 0}, {1, 0, 0}, kInf}, [](Slot, float) -> float {
    ADD_FAILURE();
    return 0.0f;
  });
  tree.build({}, {});
  EXPECT_TRUE(tree.validate());
  tree.insert(7, {{0, 0, 0}, {1, 1, 1}});
  tree.remove(7);
  EXPECT_TRUE(tree.validate());
  EXPECT_EQ(tree.size(), 0u);
}

TEST(AabbTree, ReserveClearAndReuse) {
  AabbTree tree;
  tree.reserve(1000);
  const std::size_t reserved = tree.memory_bytes();
  EXPECT_GE(reserved, 1000 * (sizeof(Box3) + sizeof(Slot)));
  EXPECT_TRUE(tree.validate());
  Model model(1000);
  BoxMaker maker{std::mt19937(2)};
  for (Slot s = 0; s < 1000; ++s) {
    model[s] = maker.make();
    tree.insert(s, *model[s]);
  }
  EXPECT_EQ(tree.memory_bytes(), reserved);  // no allocation within the room reserved
  ASSERT_TRUE(tree.validate());
  check_against_brute(tree, model, maker, 50);
  tree.clear();
  EXPECT_TRUE(tree.validate());
  EXPECT_EQ(tree.size(), 0u);
  EXPECT_FALSE(tree.contains(3));
  EXPECT_EQ(tree.memory_bytes(), reserved);
  // One leaf moved: the root alone.
  tree.insert(3, {{0, 0, 0}, {1, 1, 1}});
  tree.move(3, {{5, 5, 5}, {6, 6, 6}});
  ASSERT_TRUE(tree.validate());
  EXPECT_EQ(tree.box(3), (Box3{{5, 5, 5}, {6, 6, 6}}));
  EXPECT_TRUE(tree_query(tree, {{0, 0, 0}, {1, 1, 1}}).empty());
  EXPECT_EQ(tree_query(tree, {{6, 6, 6}, {7, 7, 7}}), std::vector<Slot>{3});
  // A slot far beyond the others: the map grows to it.
  tree.insert(100000u, {{1, 1, 1}, {2, 2, 2}});
  EXPECT_TRUE(tree.contains(100000u));
  EXPECT_EQ(tree_query(tree, {{2, 2, 2}, {5, 5, 5}}), (std::vector<Slot>{3, 100000u}));
}

TEST(AabbTree, BuildMatchesBruteForce) {
  for (const AabbTree::Split split :
       {AabbTree::Split::kBinnedSah, AabbTree::Split::kMedian, AabbTree::Split::kSorted}) {
    for (std::uint32_t seed = 1; seed <= 4; ++seed) {
      for (std::size_t n : {1, 2, 3, 5, 17, 100, 1000}) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << " n " << n << " split " << int(split));
        BoxMaker maker{std::mt19937(seed)};
        Model model(n + n / 3);
        for (std::size_t i = 0; i < n; ++i) {  // slots with holes
          const auto s = std::uniform_int_distribution<std::size_t>(0, model.size() - 1)(maker.rng);
          model[s] = maker.make();
        }
        AabbTree tree;
        build_from(tree, model, split, seed);
        ASSERT_TRUE(tree.validate());
        check_against_brute(tree, model, maker, 60);
      }
    }
  }
}

TEST(AabbTree, DuplicatesAndTouching) {
  // Many copies of a few boxes, and a lattice of unit cubes sharing faces.
  Model model;
  for (int i = 0; i < 50; ++i) model.push_back(Box3{{0, 0, 0}, {1, 1, 1}});
  for (int i = 0; i < 20; ++i) model.push_back(Box3{{2, 2, 2}, {2, 2, 2}});
  for (int x = 0; x < 6; ++x) {
    for (int y = 0; y < 6; ++y) {
      for (int z = 0; z < 3; ++z) model.push_back(Box3{{float(x), float(y), float(z)}, {x + 1.0f, y + 1.0f, z + 1.0f}});
    }
  }
  for (const AabbTree::Split split :
       {AabbTree::Split::kBinnedSah, AabbTree::Split::kMedian, AabbTree::Split::kSorted}) {
    AabbTree tree;
    build_from(tree, model, split);
    ASSERT_TRUE(tree.validate());
    BoxMaker maker{std::mt19937(11)};
    maker.world = 4.0f;
    check_against_brute(tree, model, maker, 400);
    // Rays along the lattice's faces and edges.
    for (float a : {0.0f, 1.0f, 2.5f, 6.0f}) {
      for (float b : {0.0f, 1.0f, 3.0f}) {
        for (const Ray3& r : {Ray3{{-1, a, b}, {1, 0, 0}, kInf}, Ray3{{a, 7, b}, {0, -1, 0}, 5.0f},
                              Ray3{{a, b, -3}, {0, 0, 2}, kInf}, Ray3{{a, b, 0}, {1, 1, 0}, kInf}}) {
          ASSERT_EQ(tree_ray(tree, r), brute_ray(model, r));
          const auto best = tree_closest(tree, r);
          const auto all = brute_ray(model, r);
          ASSERT_EQ(best.has_value(), !all.empty());
          if (best) {
            ASSERT_EQ(*best, all.front());
          }
        }
      }
    }
  }
}

TEST(AabbTree, InfiniteBoxes) {
  Model model = {
      Box3{{-kInf, -kInf, -1}, {kInf, kInf, 0}},             // ground slab
      Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}},       // everything
      Box3{{kInf, 0, 0}, {kInf, 1, 1}},                      // out at +inf
      Box3{{-FLT_MAX, -FLT_MAX, 5}, {FLT_MAX, FLT_MAX, 5}},  // a huge finite plane
      Box3{{3, 3, 3}, {4, 4, 4}},
      Box3{{-kInf, 0, 0}, {-kInf, 0, 0}},  // a point at -inf
      Box3{{0, -kInf, 0}, {0, kInf, 0}},   // a line
  };
  for (const AabbTree::Split split :
       {AabbTree::Split::kBinnedSah, AabbTree::Split::kMedian, AabbTree::Split::kSorted}) {
    AabbTree tree;
    build_from(tree, model, split);
    ASSERT_TRUE(tree.validate());
    BoxMaker maker{std::mt19937(5)};
    check_against_brute(tree, model, maker, 500);
    const Ray3 down{{0.5f, 0.5f, 10}, {0, 0, -1}, kInf};
    const std::vector<Hit> hits = tree_ray(tree, down);
    EXPECT_EQ(hits, (std::vector<Hit>{{0.0f, 1}, {5.0f, 3}, {10.0f, 0}}));
    const Ray3 along{{-5, 0, 0}, {1, 0, 0}, kInf};  // along the line's face: meets the line at x = 0
    EXPECT_EQ(tree_ray(tree, along), brute_ray(model, along));
  }
  // Inserted one by one, the same.
  AabbTree tree;
  for (Slot s = 0; s < model.size(); ++s) {
    tree.insert(s, *model[s]);
    ASSERT_TRUE(tree.validate());
  }
  BoxMaker maker{std::mt19937(6)};
  check_against_brute(tree, model, maker, 500);
}

// Build, then random inserts, removals and moves with validate() after each.
void churn(std::uint32_t seed, std::size_t n, int steps, int check_every, AabbTree::Split split) {
  SCOPED_TRACE(testing::Message() << "seed " << seed << " n " << n << " split " << int(split));
  BoxMaker maker{std::mt19937(seed)};
  Model model(2 * n + 4);
  for (std::size_t i = 0; i < n; ++i) model[i] = maker.make();
  AabbTree tree;
  build_from(tree, model, split, seed);
  ASSERT_TRUE(tree.validate());
  for (int step = 0; step < steps; ++step) {
    const auto s = static_cast<Slot>(std::uniform_int_distribution<std::size_t>(0, model.size() - 1)(maker.rng));
    const int op = std::uniform_int_distribution<int>(0, 2)(maker.rng);
    if (!model[s]) {
      model[s] = maker.make();
      tree.insert(s, *model[s]);
    } else if (op == 0) {
      model[s].reset();
      tree.remove(s);
    } else {
      model[s] = maker.make();
      tree.move(s, *model[s]);
    }
    ASSERT_TRUE(tree.validate()) << "step " << step;
    ASSERT_EQ(tree.contains(s), model[s].has_value());
    if (step % check_every == 0) {
      ASSERT_NO_FATAL_FAILURE(check_against_brute(tree, model, maker, 4)) << "step " << step;
    }
  }
  std::size_t live = 0;
  for (const auto& b : model) live += b.has_value();
  EXPECT_EQ(tree.size(), live);
  ASSERT_NO_FATAL_FAILURE(check_against_brute(tree, model, maker, 200));
}

TEST(AabbTree, ChurnSmall) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) churn(seed, seed % 5, 400, 1, AabbTree::Split::kBinnedSah);
}

TEST(AabbTree, ChurnMedium) {
  for (std::uint32_t seed = 21; seed <= 24; ++seed) {
    churn(seed, 200, 1500, 5,
          std::array{AabbTree::Split::kBinnedSah, AabbTree::Split::kMedian, AabbTree::Split::kSorted}[seed % 3]);
  }
}

// Moves in place (the query tree's refits): a few leaves (each path walked,
// stopping where a box comes out unchanged) and most of them (every node
// refit once), on built trees and on trees grown by inserts; validate() and
// brute force after each batch.
TEST(AabbTree, MoveInPlaceRefitsEveryAncestor) {
  for (std::uint32_t seed = 41; seed <= 46; ++seed) {
    BoxMaker maker{std::mt19937(seed)};
    Model model(300);
    AabbTree tree;
    for (Slot s = 0; s < model.size(); ++s) model[s] = maker.make();
    if (seed % 2 == 0) {
      build_from(tree, model, AabbTree::Split::kSorted, seed);
    } else {
      for (Slot s = 0; s < model.size(); ++s) tree.insert(s, *model[s]);
    }
    for (const std::size_t batch : {1, 3, 20, 150, 300}) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " batch " << batch);
      std::vector<Slot> slots(model.size());
      std::iota(slots.begin(), slots.end(), Slot{0});
      std::shuffle(slots.begin(), slots.end(), maker.rng);
      slots.resize(batch);
      std::vector<Box3> boxes;
      for (const Slot s : slots) {
        // Half jitter (a box the same or a little off), half travel anywhere.
        Box3 b = maker.make();
        if (maker.rng() % 2 == 0) {
          b = *model[s];
          if (std::isfinite(b.min[0]) && std::isfinite(b.max[0])) b.min[0] -= 0.25f, b.max[0] += 0.25f;
        }
        boxes.push_back(b);
        model[s] = b;
      }
      tree.move_in_place(slots, boxes);
      ASSERT_TRUE(tree.validate());
      ASSERT_NO_FATAL_FAILURE(check_against_brute(tree, model, maker, 60));
    }
  }
}

TEST(AabbTree, ChurnToEmptyAndBack) {
  BoxMaker maker{std::mt19937(31)};
  Model model(300);
  AabbTree tree;
  for (int round = 0; round < 3; ++round) {
    for (Slot s = 0; s < model.size(); ++s) {
      model[s] = maker.make();
      tree.insert(s, *model[s]);
    }
    ASSERT_TRUE(tree.validate());
    check_against_brute(tree, model, maker, 50);
    for (Slot s = 0; s < model.size(); ++s) {
      model[s].reset();
      tree.remove(s);
      ASSERT_TRUE(tree.validate());
    }
    EXPECT_EQ(tree.size(), 0u);
  }
  tree.clear();
  EXPECT_TRUE(tree.validate());
}

// Sorted inserts, the worst order for a naive tree: rotations keep it shallow.
TEST(AabbTree, SortedInsertsStayShallow) {
  AabbTree tree;
  const Slot n = 1 << 14;
  for (Slot s = 0; s < n; ++s) tree.insert(s, {{float(s), 0, 0}, {s + 1.0f, 1, 1}});
  ASSERT_TRUE(tree.validate());
  EXPECT_LE(tree.height(), 2 * 14u);
  std::vector<Slot> hits = tree_query(tree, {{100.5f, 0, 0}, {102, 1, 1}});
  EXPECT_EQ(hits, (std::vector<Slot>{100, 101, 102}));
  // Nested boxes, each containing the last.
  AabbTree nested;
  for (Slot s = 0; s < 4096; ++s) nested.insert(s, {{-float(s), -float(s), -float(s)}, {float(s), float(s), float(s)}});
  ASSERT_TRUE(nested.validate());
  EXPECT_LE(nested.height(), 2 * 12u);
  EXPECT_EQ(tree_query(nested, {{0, 0, 0}, {0, 0, 0}}).size(), 4096u);
}

// Boxes at x = 2^i, inserted by increasing distance: each new leaf is best
// paired with the whole tree so far, and the rotations undo that only in
// part, so the tree grows deeper than the walks' inline stack (64 entries):
// queries and rays then walk with a local vector, several threads at once.
TEST(AabbTree, DeepTreesWalkWithLocalStacks) {
  Model model;
  for (int i = 0; i < 250; ++i) {
    const float x = std::ldexp(1.0f, i - 125);
    model.push_back(Box3{{x, 0, 0}, {x, 1, 1}});
  }
  AabbTree tree;
  for (Slot s = 0; s < model.size(); ++s) tree.insert(s, *model[s]);
  ASSERT_TRUE(tree.validate());
  ASSERT_GT(tree.height(), 64u);
  BoxMaker maker{std::mt19937(12)};
  check_against_brute(tree, model, maker, 200);
  const Ray3 along{{0, 0.5f, 0.5f}, {1, 0, 0}, kInf};
  EXPECT_EQ(tree_ray(tree, along).size(), 250u);
  EXPECT_EQ(tree_query(tree, {{0, 0, 0}, {kInf, 1, 1}}).size(), 250u);
  // Walks share nothing: threads on the const tree, and a query from inside a visitor.
  std::vector<std::size_t> found(4, 0);
  std::vector<std::thread> threads;
  for (std::size_t k = 0; k < found.size(); ++k) {
    threads.emplace_back([&, k] {
      for (int round = 0; round < 200; ++round) {
        found[k] = tree_query(tree, {{0, 0, 0}, {kInf, 1, 1}}).size() + tree_ray(tree, along).size();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const std::size_t f : found) EXPECT_EQ(f, 500u);
  std::size_t nested = 0;
  tree.query({{1, 0, 0}, {1, 1, 1}}, [&](Slot) { nested += tree_query(tree, {{0, 0, 0}, {kInf, 1, 1}}).size(); });
  EXPECT_EQ(nested, 250u);
  for (Slot s = 0; s < model.size(); s += 2) {
    model[s].reset();
    tree.remove(s);
    ASSERT_TRUE(tree.validate());
  }
  check_against_brute(tree, model, maker, 200);
}

// A tree large enough for query_each() to interleave its walks (the trees
// above are answered a walk at a time): a grid of touching cubes, built
// sorted and then changed in place, queried with boxes of every size.
TEST(AabbTree, InterleavedWalksMatchQuery) {
  constexpr int kSide = 380;  // 144,400 leaves
  std::vector<Slot> slots;
  std::vector<Box3> boxes;
  for (int x = 0; x < kSide; ++x) {
    for (int y = 0; y < kSide; ++y) {
      slots.push_back(static_cast<Slot>(slots.size()));
      boxes.push_back(Box3{{float(x), float(y), 0}, {float(x + 1), float(y + 1), 1}});
    }
  }
  AabbTree tree;
  tree.build(slots, boxes, AabbTree::Split::kSorted);
  for (Slot s = 0; s < 2000; s += 3) tree.move(s, Box3{{-5, -5, -5}, {float(s % 17), 2, 2}});
  ASSERT_TRUE(tree.interleaves_queries());
  std::mt19937 rng(21);
  std::uniform_real_distribution<float> at(-10.0f, kSide + 10.0f), side(0.0f, 6.0f);
  std::vector<Box3> queries;
  for (int i = 0; i < 3000; ++i) {
    const float x = at(rng), y = at(rng), z = side(rng) - 3.0f;
    queries.push_back(Box3{{x, y, z}, {x + side(rng), y + side(rng), z + side(rng)}});
  }
  queries.push_back(Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}});  // every leaf
  queries.push_back(Box3{{1e9f, 1e9f, 1e9f}, {2e9f, 2e9f, 2e9f}});     // none
  check_query_each(tree, queries);
}

// The sorted build (Morton order) on a grid cuts it in halves and quarters;
// on boxes at exponentially growing distances, where the Morton cuts are
// lopsided, it falls back to the middle: shallow either way, and exact.
TEST(AabbTree, SortedBuildStaysShallow) {
  std::vector<Slot> slots;
  std::vector<Box3> grid;
  for (int y = 0; y < 128; ++y) {
    for (int x = 0; x < 128; ++x) {
      slots.push_back(static_cast<Slot>(grid.size()));
      grid.push_back({{float(x), float(y), 0}, {x + 1.02f, y + 1.02f, 0.5f + float((x * 7 + y * 3) % 10) / 10}});
    }
  }
  AabbTree tree;
  tree.build(slots, grid, AabbTree::Split::kSorted);
  ASSERT_TRUE(tree.validate());
  EXPECT_EQ(tree.height(), 14u);  // 2^14 tiles, every cut in the middle
  EXPECT_EQ(tree_query(tree, {{10.5f, 10.5f, 0}, {10.5f, 10.5f, 0}}).size(), 1u);
  EXPECT_EQ(tree_query(tree, {{10, 10, 0}, {10, 10, 0}}).size(), 4u);  // a corner of four tiles
  Model model;
  slots.clear();
  std::vector<Box3> spread;
  for (int i = 0; i < 250; ++i) {
    const float x = std::ldexp(1.0f, i - 125);
    slots.push_back(static_cast<Slot>(i));
    spread.push_back(Box3{{x, 0, 0}, {x, 1, 1}});
    model.push_back(spread.back());
  }
  tree.build(slots, spread, AabbTree::Split::kSorted);
  ASSERT_TRUE(tree.validate());
  EXPECT_LE(tree.height(), 42u);  // a cut leaves at least an eighth on each side: log_{8/7} 250 < 42
  BoxMaker maker{std::mt19937(13)};
  check_against_brute(tree, model, maker, 200);
}

TEST(AabbTree, MemoryPerLeaf) {
  BoxMaker maker{std::mt19937(3)};
  const std::size_t n = 100000;
  std::vector<Slot> slots(n);
  std::vector<Box3> boxes(n);
  for (std::size_t i = 0; i < n; ++i) slots[i] = static_cast<Slot>(i), boxes[i] = maker.make();
  AabbTree tree;
  tree.build(slots, boxes);
  ASSERT_TRUE(tree.validate());
  EXPECT_LT(tree.memory_bytes(), 90 * n);
  EXPECT_EQ(tree.box(5), boxes[5]);
  EXPECT_GE(tree.area_ratio(), 1.0);              // the root's own area counts
  EXPECT_TRUE(std::isfinite(tree.area_ratio()));  // infinite boxes included
  // Rebuilding replaces the content.
  tree.build(std::span<const Slot>(slots).first(10), std::span<const Box3>(boxes).first(10));
  ASSERT_TRUE(tree.validate());
  EXPECT_EQ(tree.size(), 10u);
  EXPECT_FALSE(tree.contains(10));
}

// The sorted build on a task system (from 2^15 boxes) lays the tree out in
// subtrees, one task each, at node numbers fixed by the input: the same tree,
// node for node, as the serial build, on 1, 2 or 3 threads. Three inputs:
// random boxes (infinite ones too), clusters of points at very different
// scales (lopsided Morton cuts), and few distinct boxes repeated (long runs
// of one code: middle cuts, and radix passes skipped). Slots are spread out
// and shuffled.
TEST(AabbTree, SortedBuildIsTheSameOnAnyThreadCount) {
  constexpr std::size_t n = 40000;
  std::mt19937 rng(31);
  std::vector<Slot> slots(n);
  for (std::size_t i = 0; i < n; ++i) slots[i] = static_cast<Slot>(3 * i + 1);
  std::shuffle(slots.begin(), slots.end(), rng);
  BoxMaker maker{std::mt19937(5)};
  std::vector<Box3> random(n), clustered(n), duplicates(n);
  for (Box3& b : random) b = maker.make();
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (std::size_t i = 0; i < n; ++i) {
    const float scale = std::ldexp(1.0f, static_cast<int>(i % 7) * 4 - 12);
    const float centre = static_cast<float>(i % 5) * 100.0f;
    Box3& b = clustered[i];
    for (int k = 0; k < 3; ++k) b.min[k] = b.max[k] = centre + scale * normal(rng);
    b.max[0] += scale;
  }
  for (std::size_t i = 0; i < n; ++i) {
    const auto k = static_cast<float>(i % 3);
    duplicates[i] = {{k, k, 0}, {k + 1, k + 1, 1}};
  }
  ThreadPool two(2), three(3);
  SerialTasks serial;
  for (const std::vector<Box3>* boxes : {&random, &clustered, &duplicates}) {
    AabbTree alone;
    alone.build(slots, *boxes, AabbTree::Split::kSorted);
    ASSERT_TRUE(alone.validate());
    for (TaskSystem* tasks : std::initializer_list<TaskSystem*>{&serial, &two, &three}) {
      AabbTree tree;
      tree.build(slots, *boxes, AabbTree::Split::kSorted, tasks);
      ASSERT_TRUE(tree.validate()) << tasks->concurrency() << " threads";
      EXPECT_TRUE(tree.identical(alone)) << tasks->concurrency() << " threads";
      EXPECT_EQ(tree.height(), alone.height());
      EXPECT_EQ(tree.area_ratio(), alone.area_ratio());
    }
    // And the tree answers as brute force does.
    Model model(3 * n + 1);
    for (std::size_t i = 0; i < n; ++i) model[slots[i]] = (*boxes)[i];
    AabbTree tree;
    tree.build(slots, *boxes, AabbTree::Split::kSorted, &three);
    BoxMaker queries{std::mt19937(7)};
    check_against_brute(tree, model, queries, 10);
  }
}

// parallel_radix_sort() is radix_sort(), item for item (stable), whatever
// the chunks: here chunks that do not divide n, on three threads, with a
// digit on which all keys agree (a pass skipped).
TEST(AabbTree, ParallelRadixSortIsStable) {
  std::mt19937 rng(17);
  const std::size_t n = 10007;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> items(n);  // (key, place)
  for (std::size_t i = 0; i < n; ++i) items[i] = {rng() & 0xff00ff, static_cast<std::uint32_t>(i)};
  auto expected = items;
  std::stable_sort(expected.begin(), expected.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  constexpr RadixDigits kDigits{.bits = 8, .passes = 3};
  const std::size_t chunk = 333;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> scratch(n);
  std::vector<std::uint32_t> counts(parallel_radix_counts(n, chunk, kDigits));
  ThreadPool three(3);
  const auto* sorted = parallel_radix_sort(
      items.data(), scratch.data(), n, [](const auto& x) { return x.first; }, kDigits, chunk, three, counts.data());
  EXPECT_TRUE(std::equal(expected.begin(), expected.end(), sorted));
}

}  // namespace
}  // namespace sapling::detail
