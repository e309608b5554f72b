// The version-2 layer of the scenarios (docs/trace-format.md, "Version 2"):
// static objects, filter groups, regrouping and region queries laid over a
// scenario's frames. sapling's own extension: docs/scenarios.md defines the
// motion, and this layer never changes it; it only decides attributes.
//
// Every decision is a hash of the seed and the id (static, group) or of the
// seed, the frame and the id or query (regroup, queries), so a frame is made
// from the scenario's state alone and a reused id keeps its motion and first
// group. Static ids' moves are left out: a static object stays where it was
// added, as scenery does (removing it is allowed and kept). Cost: one hash per
// add and move; with regrouping, one per live id per frame.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "sapling/filter.hpp"
#include "scenarios/scenario.hpp"

namespace sapling {
namespace {

// Salts that keep the draws of one (seed, id) apart.
enum class Draw : std::uint64_t { kStatic = 1, kGroup, kRegroup, kNewGroup, kQueryId, kQueryMask };

std::uint64_t draw(std::uint64_t seed, Draw what, std::uint64_t a, std::uint64_t b = 0) noexcept {
  std::uint64_t state = seed ^ (static_cast<std::uint64_t>(what) * 0xD1B54A32D192ED03ull);
  scenario_math::splitmix64(state);
  state ^= a * 0x9E3779B97F4A7C15ull;
  scenario_math::splitmix64(state);
  state ^= b;
  return scenario_math::splitmix64(state);
}

bool is_static(const ScenarioParams& p, Id id) noexcept {
  return p.static_pm != 0 && draw(*p.seed, Draw::kStatic, id) % 1000 < p.static_pm;
}

/// Group g: category bit g; a group g >= 1 ignores itself.
Filter group_filter(std::uint32_t group) noexcept {
  const std::uint32_t bit = std::uint32_t{1} << group;
  return Filter{bit, group == 0 ? kAllCategories : kAllCategories & ~bit};
}

/// A query box around `box`: grown by its own size on every side.
Box3 around(const Box3& box, int dims) noexcept {
  Box3 out = box;
  for (int k = 0; k < dims; ++k) {
    const float size = box.max[k] - box.min[k];
    out.min[k] = box.min[k] - size;
    out.max[k] = box.max[k] + size;
  }
  return out;
}

}  // namespace

void fill_version_2(const Scenario& scenario, TraceFrame& frame) {
  const ScenarioParams& p = scenario.params();
  frame.added_filters.clear();
  frame.added_static.clear();
  frame.filtered.clear();
  frame.filters.clear();
  frame.queries.clear();
  if (!p.uses_version_2()) return;
  const std::uint64_t seed = *p.seed;

  // Static ids keep their first box: their moves are dropped.
  if (p.static_pm != 0) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < frame.moved.size(); ++i) {
      if (is_static(p, frame.moved[i])) continue;
      frame.moved[kept] = frame.moved[i];
      frame.moved_boxes[kept] = frame.moved_boxes[i];
      ++kept;
    }
    frame.moved.resize(kept);
    frame.moved_boxes.resize(kept);
    frame.added_static.resize(frame.added.size());
    for (std::size_t i = 0; i < frame.added.size(); ++i) frame.added_static[i] = is_static(p, frame.added[i]) ? 1 : 0;
  }
  if (p.groups != 0) {
    frame.added_filters.resize(frame.added.size());
    for (std::size_t i = 0; i < frame.added.size(); ++i) {
      frame.added_filters[i] =
          group_filter(static_cast<std::uint32_t>(draw(seed, Draw::kGroup, frame.added[i]) % p.groups));
    }
  }

  const std::uint64_t f = scenario.frame();
  // Regrouping: live ids without another operation this frame (frame 0 adds all).
  if (p.regroup_pm != 0 && f > 0) {
    std::vector<std::uint8_t> touched(scenario.capacity(), 0);
    for (const Id id : scenario.removed()) touched[id] = 1;
    for (const Id id : frame.moved) touched[id] = 1;
    for (const Id id : frame.added) touched[id] = 1;
    for (const Id id : scenario.alive_ids()) {
      if (touched[id] || draw(seed, Draw::kRegroup, f, id) % 1000 >= p.regroup_pm) continue;
      frame.filtered.push_back(id);
      frame.filters.push_back(group_filter(static_cast<std::uint32_t>(draw(seed, Draw::kNewGroup, f, id) % p.groups)));
    }
  }

  // Queries around live objects (their scenario boxes; a static one's may
  // have moved on since it was added, which only shifts the query).
  const auto alive = scenario.alive_ids();
  for (std::uint32_t q = 0; q < p.queries && !alive.empty(); ++q) {
    const Id id = alive[draw(seed, Draw::kQueryId, f, q) % alive.size()];
    Box3 box = around(scenario.boxes()[id], scenario.dims());
    if (scenario.dims() == 2) box.min[2] = box.max[2] = 0.0f;
    std::uint32_t mask = kAllCategories;
    if (p.groups != 0 && q % 2 == 1) {
      mask = std::uint32_t{1} << (draw(seed, Draw::kQueryMask, f, q) % p.groups);
    }
    frame.queries.push_back(TraceQuery{static_cast<std::uint32_t>(f * p.queries + q), box, mask});
  }
}

}  // namespace sapling
