// The demo's scene presets, each showing one algorithm's strength:
//   particles  one size of circle everywhere (unisize, box-pruning)
//   pile       a resting pile with a few movers (sap: little moves)
//   flat       a wide, low world (dual-axis, sort-sweep along x)
//   mixed      sizes over a factor of 16, circles and boxes
//   spawn      bodies appear at the top and despawn after a few seconds
//   ground     one huge static ground box under everything
// A body is static with probability 1 - moving (the pile: the pile is the
// static part), so the moving fraction is how much the broad phase sees move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "rng.hpp"
#include "world.hpp"

namespace sapling::demo {

/// What a scene is built from.
struct SceneSettings {
  std::string name = "pile";  ///< one of scene_names()
  std::size_t count = 0;      ///< bodies; 0 for the scene's default
  float moving = -1;          ///< fraction of dynamic bodies, 0..1; negative for the scene's default
  std::uint64_t seed = 1;     ///< the scene's random seed
};

/// The scenes' names, in the order of the keys 1..6.
std::span<const std::string_view> scene_names();
/// The scene's default body count and moving fraction.
std::size_t default_count(std::string_view scene);
float default_moving(std::string_view scene);

/// Empties `world` and fills it with the scene; false (and the reason in
/// `*why`) for an unknown scene.
bool build_scene(World& world, const SceneSettings& settings, std::string* why);
/// The scene's work each frame (the spawn scene's emitter); call before World::step().
void tick_scene(World& world, const SceneSettings& settings, Rng& rng);
/// `n` small circles flung out from (x, y).
void spawn_burst(World& world, float x, float y, int n, Rng& rng);

}  // namespace sapling::demo
