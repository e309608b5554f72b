// The demo's state and keys (demo.hpp).
#include "demo.hpp"

#include <algorithm>
#include <stdexcept>

#include "sapling/registry.hpp"

namespace sapling::demo {

Demo::Demo(SceneSettings scene, const std::string& algorithm)
    : scene_(std::move(scene)), world_(algorithm, 100, 56.25f), rng_(scene_.seed ^ 0x5eedull) {
  std::string why;
  if (!build_scene(world_, scene_, &why)) throw std::invalid_argument(why);
  message_ = "scene " + scene_.name + " on " + algorithm;
}

float Demo::moving() const noexcept {
  return std::clamp(scene_.moving >= 0 ? scene_.moving : default_moving(scene_.name), 0.0f, 1.0f);
}

void Demo::rebuild() {
  std::string why;
  build_scene(world_, scene_, &why);
  trails_.clear();
  graph_.clear();
  structure_.reset();
  rng_ = Rng(scene_.seed ^ 0x5eedull);
}

std::string Demo::switch_algorithm(const std::string& name) {
  const std::string from = world_.algorithm();
  std::string why = world_.set_algorithm(name);
  if (why.empty()) {
    message_ = "switched " + from + " -> " + name + ": " + std::to_string(world_.pairs().size()) + " pairs, the same";
    structure_.collect(world_.broad_phase());
  } else {
    message_ = why;
  }
  return why;
}

void Demo::cycle_algorithm(int direction) {
  const auto all = algorithms();
  if (all.empty()) return;
  auto it = std::find_if(all.begin(), all.end(), [&](const AlgorithmInfo& a) { return a.name == world_.algorithm(); });
  std::size_t i = it == all.end() ? 0 : static_cast<std::size_t>(it - all.begin());
  // Tries each other algorithm in turn; one that refuses the world (unisize
  // with boxes of several sizes) is skipped, and the message says why.
  for (std::size_t tries = 1; tries < all.size(); ++tries) {
    i = (i + all.size() + static_cast<std::size_t>(direction > 0 ? 1 : all.size() - 1)) % all.size();
    if (switch_algorithm(all[i].name).empty()) return;
  }
}

void Demo::burst(float x, float y) { spawn_burst(world_, x, y, 40, rng_); }

void Demo::apply(const Command& c) {
  switch (c.action) {
    case Action::kNone:
      break;
    case Action::kQuit:
      quit_ = true;
      break;
    case Action::kNextAlgorithm:
      cycle_algorithm(+1);
      break;
    case Action::kPreviousAlgorithm:
      cycle_algorithm(-1);
      break;
    case Action::kPause:
      paused_ = !paused_;
      break;
    case Action::kStep:
      paused_ = true;
      step_ = true;
      break;
    case Action::kScene:
      if (c.value >= 0 && static_cast<std::size_t>(c.value) < scene_names().size()) {
        scene_.name = std::string(scene_names()[static_cast<std::size_t>(c.value)]);
        scene_.count = 0;
        scene_.moving = -1;
        rebuild();
        message_ = "scene " + scene_.name;
      }
      break;
    case Action::kMore:
    case Action::kFewer: {
      const std::size_t n = scene_.count ? scene_.count : default_count(scene_.name);
      scene_.count = c.action == Action::kMore ? std::min<std::size_t>(n * 2, 64000) : std::max<std::size_t>(n / 2, 10);
      rebuild();
      message_ = std::to_string(scene_.count) + " objects";
      break;
    }
    case Action::kMoreMoving:
    case Action::kLessMoving:
      scene_.moving = std::clamp(moving() + (c.action == Action::kMoreMoving ? 0.1f : -0.1f), 0.0f, 1.0f);
      rebuild();
      message_ = "moving fraction " + std::to_string(static_cast<int>(scene_.moving * 100 + 0.5f)) + "%";
      break;
    case Action::kTogglePairs:
      flags_.pairs = !flags_.pairs;
      break;
    case Action::kToggleStructure:
      flags_.structure = !flags_.structure;
      break;
    case Action::kToggleGraph:
      flags_.graph = !flags_.graph;
      break;
    case Action::kToggleHelp:
      flags_.help = !flags_.help;
      break;
    case Action::kBurst:
      burst(mouse_x_, mouse_y_);
      break;
    case Action::kReset:
      rebuild();
      message_ = "scene " + scene_.name + " reset";
      break;
  }
}

void Demo::advance() {
  if (paused_ && !step_) return;
  step_ = false;
  tick_scene(world_, scene_, rng_);
  world_.step();
  if (!world_.last_error().empty()) message_ = world_.last_error();
  trails_.update(world_);
  graph_.push(world_.stats().broad_phase_ms);
  structure_.collect(world_.broad_phase());
}

}  // namespace sapling::demo
