// The demo's overlays (overlays.hpp).
#include "overlays.hpp"

#include <algorithm>
#include <numeric>

namespace sapling::demo {

void PairTrails::update(const World& world) {
  for (Trail& t : trails_) ++t.age;
  std::erase_if(trails_, [](const Trail& t) { return t.age >= kFadeFrames; });
  auto add = [&](const Pair& p, bool created) {
    const Body* a = world.find(p.a);
    const Body* b = world.find(p.b);
    if (!a || !b) return;  // a despawned body: nothing to draw between
    trails_.push_back({a->x, a->y, b->x, b->y, 0, created});
  };
  for (const Pair& p : world.created()) add(p, true);
  for (const Pair& p : world.deleted()) add(p, false);
}

void StructureLines::collect(const BroadPhase& bp) {
  endpoints.clear();
  boxes.clear();
  bp.debug_draw(*this);
}

void StructureLines::line(const DebugPoint& a, const DebugPoint&, DebugCategory category) {
  if (category == DebugCategory::kMinEndpoint || category == DebugCategory::kMaxEndpoint) {
    endpoints.push_back({a[0], category == DebugCategory::kMaxEndpoint});
  }
}

void StructureLines::box(const Box3& b, DebugCategory) { boxes.push_back(b); }

void TimeGraph::push(double ms) {
  if (values_.size() == kFrames) values_.erase(values_.begin());
  values_.push_back(ms);
}

double TimeGraph::mean() const noexcept {
  return values_.empty() ? 0 : std::accumulate(values_.begin(), values_.end(), 0.0) / double(values_.size());
}

double TimeGraph::max() const noexcept {
  return values_.empty() ? 0 : *std::max_element(values_.begin(), values_.end());
}

}  // namespace sapling::demo
