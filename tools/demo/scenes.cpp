// The scene presets (scenes.hpp).
#include "scenes.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace sapling::demo {
namespace {

constexpr std::array<std::string_view, 6> kScenes = {"particles", "pile", "flat", "mixed", "spawn", "ground"};
constexpr float kHeight = 56.25f;  // 16:9 with the default width
constexpr float kWidth = 100.0f;
constexpr int kSpawnLife = 240;  // frames a spawned body lives

std::size_t resolved_count(const SceneSettings& s) { return s.count ? s.count : default_count(s.name); }
float resolved_moving(const SceneSettings& s) {
  return std::clamp(s.moving >= 0 ? s.moving : default_moving(s.name), 0.0f, 1.0f);
}

Body circle(float x, float y, float r) {
  Body b;
  b.shape = Shape::kCircle;
  b.x = x;
  b.y = y;
  b.half[0] = b.half[1] = r;
  b.inv_mass = 1.0f / (r * r);
  return b;
}

Body box(float x, float y, float hx, float hy) {
  Body b;
  b.shape = Shape::kBox;
  b.x = x;
  b.y = y;
  b.half[0] = hx;
  b.half[1] = hy;
  b.inv_mass = 1.0f / (4 * hx * hy);
  return b;
}

// Makes `b` static with probability 1 - moving, else gives it a random velocity up to `speed`.
void set_motion(Body& b, float moving, float speed, Rng& rng) {
  if (rng.uniform(0, 1) >= moving) {
    b.inv_mass = 0;
    return;
  }
  b.vx = rng.uniform(-speed, speed);
  b.vy = rng.uniform(-speed, speed);
}

Body random_body(Rng& rng, float x, float y, float min_half, float max_half) {
  const float h = min_half * std::pow(max_half / min_half, rng.uniform(0, 1));
  if (rng.uniform(0, 1) < 0.5f) return circle(x, y, h);
  return box(x, y, h, h * rng.uniform(0.5f, 1.5f));
}

}  // namespace

std::span<const std::string_view> scene_names() { return kScenes; }

std::size_t default_count(std::string_view scene) {
  if (scene == "pile") return 800;
  if (scene == "mixed") return 250;
  return 500;
}

float default_moving(std::string_view scene) { return scene == "pile" ? 0.1f : 1.0f; }

bool build_scene(World& world, const SceneSettings& s, std::string* why) {
  if (std::find(kScenes.begin(), kScenes.end(), s.name) == kScenes.end()) {
    if (why) *why = "unknown scene '" + s.name + "' (particles, pile, flat, mixed, spawn, ground)";
    return false;
  }
  Rng rng(s.seed);
  const std::size_t n = resolved_count(s);
  const float moving = resolved_moving(s);
  world.set_gravity(-9.8f);
  if (s.name == "particles") {
    world.reset(kWidth, kHeight);
    world.set_gravity(-1.0f);
    for (std::size_t i = 0; i < n; ++i) {
      Body b = circle(rng.uniform(1, kWidth - 1), rng.uniform(1, kHeight - 1), 0.4f);
      set_motion(b, moving, 8, rng);
      world.add(b);
    }
  } else if (s.name == "pile") {
    // The static pile: a mound of boxes on the floor, stacked in rows that
    // narrow upwards; the movers fall on it.
    world.reset(kWidth, kHeight);
    const std::size_t movers = static_cast<std::size_t>(std::lround(moving * static_cast<float>(n)));
    const std::size_t piled = n - movers;
    const float size = 0.9f;
    std::size_t placed = 0;
    for (int row = 0; placed < piled; ++row) {
      const float y = size * 0.5f + static_cast<float>(row) * size;
      const float half_width = std::max(kWidth * 0.45f - static_cast<float>(row) * size * 1.2f, 4 * size);
      for (float x = kWidth * 0.5f - half_width; x <= kWidth * 0.5f + half_width && placed < piled; x += size) {
        Body b = (row + static_cast<int>(x)) % 3 == 0 ? circle(x, y, size * 0.5f) : box(x, y, size * 0.5f, size * 0.5f);
        b.inv_mass = 0;
        world.add(b);
        ++placed;
      }
    }
    for (std::size_t i = 0; i < movers; ++i) {
      Body b = random_body(rng, rng.uniform(2, kWidth - 2), rng.uniform(kHeight * 0.6f, kHeight - 2), 0.4f, 1.2f);
      b.vx = rng.uniform(-10, 10);
      b.vy = rng.uniform(-5, 5);
      world.add(b);
    }
  } else if (s.name == "flat") {
    const float width = 2 * kWidth, height = kHeight / 2.5f;
    world.reset(width, height);
    for (std::size_t i = 0; i < n; ++i) {
      Body b = random_body(rng, rng.uniform(1, width - 1), rng.uniform(1, height - 1), 0.3f, 0.8f);
      set_motion(b, moving, 12, rng);
      world.add(b);
    }
  } else if (s.name == "mixed") {
    world.reset(kWidth, kHeight);
    for (std::size_t i = 0; i < n; ++i) {
      Body b = random_body(rng, rng.uniform(4, kWidth - 4), rng.uniform(4, kHeight - 4), 0.25f, 2.5f);
      set_motion(b, moving, 6, rng);
      world.add(b);
    }
  } else if (s.name == "spawn") {
    world.reset(kWidth, kHeight);
    for (std::size_t i = 0; i < n / 2; ++i) {
      Body b = random_body(rng, rng.uniform(2, kWidth - 2), rng.uniform(2, kHeight - 2), 0.3f, 0.9f);
      set_motion(b, moving, 6, rng);
      b.life = 1 + static_cast<int>(rng.next() % kSpawnLife);
      world.add(b);
    }
  } else {  // ground
    world.reset(kWidth, kHeight);
    Body ground = box(kWidth * 0.5f, 1.5f, kWidth * 0.5f, 1.5f);
    ground.inv_mass = 0;
    world.add(ground);
    for (std::size_t i = 1; i < n; ++i) {
      Body b = random_body(rng, rng.uniform(2, kWidth - 2), rng.uniform(4, kHeight - 2), 0.3f, 1.0f);
      set_motion(b, moving, 4, rng);
      world.add(b);
    }
  }
  return true;
}

void tick_scene(World& world, const SceneSettings& s, Rng& rng) {
  if (s.name != "spawn") return;
  // Steady state: about `count` bodies, as many born per frame as die.
  const std::size_t n = resolved_count(s);
  const std::size_t per_frame = std::max<std::size_t>(1, n / kSpawnLife);
  const float moving = resolved_moving(s);
  for (std::size_t i = 0; i < per_frame; ++i) {
    Body b = random_body(rng, rng.uniform(2, world.width() - 2), world.height() - 1.5f, 0.3f, 0.9f);
    set_motion(b, moving, 6, rng);
    b.life = kSpawnLife;
    world.add(b);
  }
}

void spawn_burst(World& world, float x, float y, int n, Rng& rng) {
  for (int i = 0; i < n; ++i) {
    const float angle = rng.uniform(0, 6.2831853f), speed = rng.uniform(4, 16);
    Body b = circle(std::clamp(x, 1.0f, world.width() - 1), std::clamp(y, 1.0f, world.height() - 1), 0.4f);
    b.vx = speed * std::cos(angle);
    b.vy = speed * std::sin(angle);
    world.add(b);
  }
}

}  // namespace sapling::demo
