// The demo's state between frames: the world, the scene and its settings,
// the overlays' memory, pause and step, the message line, and what each key
// does to them. The window and the headless loop (main.cpp) both drive it.
#pragma once

#include <string>
#include <vector>

#include "input.hpp"
#include "overlays.hpp"
#include "rng.hpp"
#include "scenes.hpp"
#include "world.hpp"

namespace sapling::demo {

class Demo {
 public:
  /// The scene on the algorithm; throws std::invalid_argument with the reason
  /// for an unknown scene or algorithm.
  Demo(SceneSettings scene, const std::string& algorithm);

  /// Does what a key asks (a burst lands at the last mouse position).
  void apply(const Command& command);
  /// Runs one frame unless paused (a single step runs one while paused).
  void advance();
  /// Switches algorithm keeping the world; "" on success, else the reason
  /// (then the world stays on the old one). Either way it is on the message line.
  std::string switch_algorithm(const std::string& name);
  /// Flings a burst of circles from a world point.
  void burst(float x, float y);
  /// Where the mouse is, in world coordinates (for a burst from the keyboard).
  void set_mouse(float x, float y) noexcept { mouse_x_ = x, mouse_y_ = y; }

  bool quit() const noexcept { return quit_; }
  bool paused() const noexcept { return paused_; }
  const World& world() const noexcept { return world_; }
  const SceneSettings& scene() const noexcept { return scene_; }
  /// The moving fraction in effect.
  float moving() const noexcept;
  const std::string& message() const noexcept { return message_; }
  const OverlayFlags& flags() const noexcept { return flags_; }
  const PairTrails& trails() const noexcept { return trails_; }
  const TimeGraph& graph() const noexcept { return graph_; }
  const StructureLines& structure() const noexcept { return structure_; }

 private:
  void rebuild();
  void cycle_algorithm(int direction);

  SceneSettings scene_;
  World world_;
  Rng rng_;
  OverlayFlags flags_;
  PairTrails trails_;
  TimeGraph graph_;
  StructureLines structure_;
  std::string message_;
  bool paused_ = false, step_ = false, quit_ = false;
  float mouse_x_ = 0, mouse_y_ = 0;
};

}  // namespace sapling::demo
