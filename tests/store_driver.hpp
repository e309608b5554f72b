// Drives an algorithm directly, the way the BroadPhase does, with or
// without the BroadPhase's store of boxes (FrameOps::store): 40 frames of
// removals, moves and additions over 400 slots, freed slots reused from
// the next frame on, one frame moving every live box far and adding none,
// and one removing every box and adding a new world (frames whose own list
// is the whole world). After each frame the store takes the frame's boxes, as
// the BroadPhase commits them, and the pairs must be brute force's, the
// algorithm valid. For sap, which keeps no copy of the boxes (it reads the
// store: live_boxes.hpp), and the recompute adapter.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "sapling/algorithm.hpp"
#include "sapling/pair_manager.hpp"

namespace sapling {

inline void drive_through_store(Algorithm& algorithm, bool with_store) {
  constexpr Slot kSlots = 400;
  std::vector<Box3> store(kSlots);  // by slot, as the BroadPhase keeps it
  std::vector<bool> live(kSlots, false);
  std::vector<Id> ids(kSlots);
  for (Slot s = 0; s < kSlots; ++s) ids[s] = 7 * s + 3;
  PairManager pairs;
  std::vector<Pair> created, deleted;
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> at(0.0f, 12.0f), step(-0.3f, 0.3f);
  const auto cube = [&] {
    const float x = at(rng), y = at(rng), z = at(rng);
    return Box3{{x, y, z}, {x + 1, y + 1, z + 1}};
  };
  std::vector<Slot> freed;  // reusable from the next frame on
  for (int frame = 0; frame < 40; ++frame) {
    const bool move_all = frame == 17, new_world = frame == 29;
    std::vector<Slot> removed, moved, added;
    std::vector<Box3> moved_boxes, added_boxes;
    std::vector<Slot> free_now = freed;
    freed.clear();
    for (Slot s = 0; s < kSlots; ++s) {
      if (!live[s]) {
        const bool reusable = std::find(free_now.begin(), free_now.end(), s) == free_now.end();
        if (frame == 0 ? s < 300 : (!move_all && !new_world && rng() % 8 == 0 && reusable))
          added.push_back(s), added_boxes.push_back(cube());
        continue;
      }
      const unsigned roll = move_all ? 5 : rng() % 10;
      if (roll == 0 || new_world) {
        removed.push_back(s), freed.push_back(s);
      } else if (roll < (frame % 2 == 0 ? 3u : 9u)) {
        Box3 b = store[s];
        const float dx = step(rng), dy = step(rng), dz = step(rng);
        b.min[0] += dx, b.max[0] += dx, b.min[1] += dy, b.max[1] += dy, b.min[2] += dz, b.max[2] += dz;
        moved.push_back(s), moved_boxes.push_back(move_all ? cube() : b);  // all of them far: sap recomputes
      }
    }
    if (move_all) std::reverse(moved.begin(), moved.end()), std::reverse(moved_boxes.begin(), moved_boxes.end());
    if (new_world) {
      for (Slot s = 0; s < kSlots; s += 2) {
        if (std::find(free_now.begin(), free_now.end(), s) == free_now.end() && !live[s] &&
            std::find(removed.begin(), removed.end(), s) == removed.end())
          added.push_back(s), added_boxes.push_back(cube());
      }
    }
    FrameOps ops{removed, moved, moved_boxes, added, added_boxes, store, {}};
    if (with_store) ops.store = &store;
    algorithm.update(ops, ids, pairs);
    // The BroadPhase's commit: the store takes the frame's boxes.
    for (const Slot s : removed) live[s] = false;
    for (std::size_t j = 0; j < moved.size(); ++j) store[moved[j]] = moved_boxes[j];
    for (std::size_t k = 0; k < added.size(); ++k) store[added[k]] = added_boxes[k], live[added[k]] = true;
    pairs.end_frame(created, deleted);
    std::vector<Pair> expected, got(pairs.pairs().begin(), pairs.pairs().end());
    for (Slot a = 0; a < kSlots; ++a)
      for (Slot b = a + 1; b < kSlots; ++b)
        if (live[a] && live[b] && overlaps(store[a], store[b])) expected.push_back(make_pair(ids[a], ids[b]));
    std::sort(expected.begin(), expected.end());
    std::sort(got.begin(), got.end());
    ASSERT_EQ(got, expected) << "frame " << frame;
    ASSERT_TRUE(algorithm.validate()) << "frame " << frame;
    if (new_world) {
      ASSERT_EQ(std::count(live.begin(), live.end(), true), std::ptrdiff_t(added.size()));
    }
    if (move_all) {
      ASSERT_TRUE(added.empty() && !moved.empty());
    }
  }
}

}  // namespace sapling
