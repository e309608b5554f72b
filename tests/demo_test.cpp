// sapling-demo's pieces without a display: the headless renderer draws a
// frame that is not blank and that changes as the world moves; switching
// algorithm mid-run keeps exactly the same pairs; the physics is the same
// frame by frame whichever algorithm runs the broad phase; PNG output.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <vector>

#include "canvas.hpp"
#include "demo.hpp"
#include "png_writer.hpp"
#include "renderer.hpp"
#include "sapling/registry.hpp"
#include "scenes.hpp"
#include "world.hpp"

namespace sapling::demo {
namespace {

std::vector<Uint32> pixels(const Canvas& c) {
  SDL_Surface* s = c.surface();
  std::vector<Uint32> out(static_cast<std::size_t>(s->w) * static_cast<std::size_t>(s->h));
  for (int y = 0; y < s->h; ++y) {
    std::memcpy(out.data() + static_cast<std::size_t>(y) * static_cast<std::size_t>(s->w),
                static_cast<const Uint8*>(s->pixels) + y * s->pitch, static_cast<std::size_t>(s->w) * 4);
  }
  return out;
}

TEST(DemoRender, HeadlessFrameIsNotBlankAndChanges) {
  Demo demo({"pile", 300, -1, 1}, "sap");
  Canvas canvas(640, 360);
  demo.advance();
  render(canvas, demo);
  const auto first = pixels(canvas);
  const std::set<Uint32> colours(first.begin(), first.end());
  EXPECT_GT(colours.size(), 8u) << "a frame of 300 bodies, counters and overlays has more colours than that";
  for (int i = 0; i < 20; ++i) demo.advance();
  render(canvas, demo);
  const auto later = pixels(canvas);
  std::size_t changed = 0;
  for (std::size_t i = 0; i < first.size(); ++i) changed += first[i] != later[i];
  EXPECT_GT(changed, first.size() / 1000) << "20 frames later the movers have moved";
}

// Every scene: run a while on sap, switch through every registered
// algorithm; each switch either keeps exactly the same pairs or is refused
// (unisize with boxes of several sizes), never different pairs.
TEST(DemoSwitch, SwitchingAlgorithmKeepsThePairs) {
  for (std::string_view scene : scene_names()) {
    World world("sap", 100, 56.25f);
    std::string why;
    ASSERT_TRUE(build_scene(world, {std::string(scene), 200, -1, 7}, &why)) << why;
    for (const AlgorithmInfo& info : algorithms()) {
      for (int i = 0; i < 15; ++i) world.step();
      const std::vector<Pair> before = world.pairs();
      const std::string result = world.set_algorithm(info.name);
      SCOPED_TRACE(std::string(scene) + " -> " + info.name + ", frame " + std::to_string(world.frame()));
      if (result.empty()) {
        EXPECT_EQ(world.algorithm(), info.name);
      } else {
        EXPECT_FALSE(info.accepts_any_box) << result;
        EXPECT_EQ(result.find("reports"), std::string::npos) << result;
      }
      EXPECT_EQ(world.pairs(), before);
      std::vector<Pair> now;
      world.broad_phase().sorted_pairs(now);
      EXPECT_EQ(now, before);
    }
  }
}

// The narrow phase walks the pairs sorted, so every algorithm drives the
// same simulation, bit for bit.
TEST(DemoWorld, SameFramesOnEveryAlgorithm) {
  for (std::string_view scene : {"pile", "mixed", "spawn", "ground"}) {
    World ref("brute", 100, 56.25f), other("box-pruning", 100, 56.25f), sap("sap", 100, 56.25f);
    const SceneSettings s{std::string(scene), 150, -1, 3};
    ASSERT_TRUE(build_scene(ref, s, nullptr));
    ASSERT_TRUE(build_scene(other, s, nullptr));
    ASSERT_TRUE(build_scene(sap, s, nullptr));
    Rng r1(9), r2(9), r3(9);
    for (int f = 0; f < 40; ++f) {
      tick_scene(ref, s, r1);
      tick_scene(other, s, r2);
      tick_scene(sap, s, r3);
      ref.step();
      other.step();
      sap.step();
      ASSERT_EQ(ref.pairs(), other.pairs()) << scene << " frame " << f;
      ASSERT_EQ(ref.pairs(), sap.pairs()) << scene << " frame " << f;
      ASSERT_EQ(ref.created(), sap.created()) << scene << " frame " << f;
      ASSERT_EQ(ref.deleted(), sap.deleted()) << scene << " frame " << f;
    }
    ASSERT_EQ(ref.bodies().size(), sap.bodies().size());
    for (std::size_t i = 0; i < ref.bodies().size(); ++i) {
      EXPECT_EQ(ref.bodies()[i].x, sap.bodies()[i].x) << scene << " body " << i;
      EXPECT_EQ(ref.bodies()[i].y, sap.bodies()[i].y) << scene << " body " << i;
    }
  }
}

TEST(DemoWorld, RefusedAlgorithmKeepsTheOldOne) {
  World world("sap", 100, 56.25f);
  ASSERT_TRUE(build_scene(world, {"mixed", 50, -1, 1}, nullptr));
  world.step();
  EXPECT_NE(world.set_algorithm("no-such-algorithm"), "");
  EXPECT_NE(world.set_algorithm("unisize"), "");
  EXPECT_EQ(world.algorithm(), "sap");
  std::string why;
  EXPECT_FALSE(build_scene(world, {"nowhere", 0, -1, 1}, &why));
  EXPECT_NE(why.find("unknown scene"), std::string::npos);
}

// Issue 29: a refusal is never silent. unisize takes only boxes of one
// size: the mixed scene is refused before any step (accepts_pending, a dry
// run that changes nothing), and a body of another size added later is
// dropped with the refusal in last_error() and last_refusal().
TEST(DemoWorld, RefusalsAreReported) {
  World mixed("unisize", 100, 56.25f);
  ASSERT_TRUE(build_scene(mixed, {"mixed", 50, -1, 1}, nullptr));
  const Status refused = mixed.accepts_pending();
  EXPECT_EQ(refused.code(), StatusCode::kUnsupported) << refused.message();
  mixed.step();
  EXPECT_EQ(mixed.last_refusal().code(), StatusCode::kUnsupported);
  EXPECT_NE(mixed.last_error().find("unisize refused new bodies"), std::string::npos) << mixed.last_error();

  World particles("unisize", 100, 56.25f), reference("sap", 100, 56.25f);
  ASSERT_TRUE(build_scene(particles, {"particles", 100, -1, 1}, nullptr));
  ASSERT_TRUE(build_scene(reference, {"particles", 100, -1, 1}, nullptr));
  EXPECT_TRUE(particles.accepts_pending());
  for (int f = 0; f < 3; ++f) {
    particles.step();
    reference.step();
  }
  EXPECT_EQ(particles.last_error(), "");
  EXPECT_TRUE(particles.last_refusal());
  EXPECT_EQ(particles.pairs(), reference.pairs()) << "the dry run changed nothing";
  Body big;
  big.shape = Shape::kBox;
  big.x = big.y = 20;
  big.half[0] = big.half[1] = 3;
  particles.add(big);
  const std::size_t before = particles.bodies().size();
  particles.step();
  EXPECT_EQ(particles.last_refusal().code(), StatusCode::kUnsupported);
  EXPECT_EQ(particles.bodies().size(), before - 1) << "the refused body is dropped";
  particles.step();
  EXPECT_EQ(particles.last_error(), "") << "a later frame without refusals clears it";
}

// "NAME:" (settings lost after the colon) is refused, not taken as NAME.
TEST(DemoWorld, EmptySettingsAreRefused) {
  try {
    World world("sap:", 100, 56.25f);
    ADD_FAILURE() << "World(\"sap:\") was made";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("settings"), std::string::npos) << e.what();
  }
  World world("sap", 100, 56.25f);
  ASSERT_TRUE(build_scene(world, {"pile", 100, -1, 1}, nullptr));
  world.step();
  EXPECT_NE(world.set_algorithm("box-pruning:"), "");
  EXPECT_EQ(world.algorithm(), "sap");
}

TEST(DemoRender, WritesPng) {
  Demo demo({"particles", 100, -1, 1}, "sap");
  demo.advance();
  Canvas canvas(320, 200);
  render(canvas, demo);
  const auto path = std::filesystem::temp_directory_path() / "sapling-demo-test.png";
  ASSERT_EQ(write_png(path.string(), canvas.surface()), "");
  std::ifstream in(path, std::ios::binary);
  char magic[8] = {};
  in.read(magic, 8);
  EXPECT_EQ(std::memcmp(magic, "\x89PNG\r\n\x1a\n", 8), 0);
  EXPECT_GT(std::filesystem::file_size(path), 1000u);
  std::filesystem::remove(path);
  EXPECT_NE(write_png("/nonexistent-dir/x.png", canvas.surface()), "");
}

}  // namespace
}  // namespace sapling::demo

namespace sapling::demo {
namespace {

// An endpoint flashes when this frame's swaps moved it: box 1 walks right
// past box 2's endpoints; box 3, far away, and box 2's own order stay.
TEST(DemoOverlay, SwappedEndpointsAreThoseWhoseOrderChanged) {
  Options options;
  options.dims = 2;
  auto bp = BroadPhase::create("sap", options);
  const std::vector<Id> ids{1, 2, 3};
  std::vector<Box2> boxes{{{0, 0}, {1, 1}}, {{2, 0}, {3, 1}}, {{10, 0}, {11, 1}}};
  ASSERT_TRUE(bp->add(ids, boxes));
  bp->update();
  ASSERT_TRUE(bp->move(Id{3}, Box2{{10.5f, 0}, {11.5f, 1}}));  // a walk, so the arrays are current
  bp->update();
  StructureLines lines;
  lines.collect(*bp);
  ASSERT_EQ(lines.endpoints.size(), 6u);
  for (const auto& e : lines.endpoints) EXPECT_FALSE(e.swapped);
  ASSERT_TRUE(bp->move(Id{1}, Box2{{3.5f, 0}, {4.5f, 1}}));  // 1 passes both endpoints of 2
  bp->update();
  lines.collect(*bp);
  ASSERT_EQ(lines.endpoints.size(), 6u);
  for (const auto& e : lines.endpoints) EXPECT_EQ(e.swapped, e.owner != 3) << "owner " << e.owner;
}

}  // namespace
}  // namespace sapling::demo
