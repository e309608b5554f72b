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

namespace {
std::uint64_t key_of(Id owner, bool is_max) { return std::uint64_t{owner} << 1 | std::uint64_t{is_max}; }
}  // namespace

// An endpoint was swapped this frame when its rank among the endpoints
// present in both frames changed: ranks among all of them would also shift
// with every addition and removal before it.
void StructureLines::collect(const BroadPhase& bp) {
  endpoints.clear();
  boxes.clear();
  bp.debug_draw(*this);
  std::unordered_map<std::uint64_t, std::uint32_t> now;
  now.reserve(endpoints.size());
  for (std::uint32_t i = 0; i < endpoints.size(); ++i) now.emplace(key_of(endpoints[i].owner, endpoints[i].is_max), i);
  rank_.clear();
  std::uint32_t kept = 0;
  for (std::uint64_t k : previous_) {
    if (now.count(k)) rank_.emplace(k, kept++);
  }
  kept = 0;
  for (Endpoint& e : endpoints) {
    const auto it = rank_.find(key_of(e.owner, e.is_max));
    if (it == rank_.end()) continue;
    e.swapped = it->second != kept++;
  }
  previous_.clear();
  for (const Endpoint& e : endpoints) previous_.push_back(key_of(e.owner, e.is_max));
}

void StructureLines::reset() {
  endpoints.clear();
  boxes.clear();
  previous_.clear();
  rank_.clear();
}

void StructureLines::line(const DebugPoint& a, const DebugPoint&, DebugCategory category, Id owner) {
  if (category == DebugCategory::kMinEndpoint || category == DebugCategory::kMaxEndpoint) {
    endpoints.push_back({a[0], category == DebugCategory::kMaxEndpoint, false, owner});
  }
}

void StructureLines::box(const Box3& b, DebugCategory, Id) { boxes.push_back(b); }

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
