// sapling::bullet::BroadPhase: see the header for the contract and
// docs/adapters/bullet.md for the design.
#include "sapling/bullet/broadphase.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <new>
#include <string>
#include <utility>

#include <BulletCollision/BroadphaseCollision/btDispatcher.h>

namespace sapling::bullet {
namespace {

constexpr std::size_t kChunk = 256;       // proxies per pool chunk
constexpr std::size_t kQuarantine = 256;  // destroyed proxies waiting before reuse
constexpr double kInfinity = std::numeric_limits<double>::infinity();

// A Bullet AABB as a float box: exact for a float btScalar; for a double
// one, rounded outward (box.hpp's round_down, round_up: min down, max up)
// so that no overlap is lost.
Box3 to_box(const btVector3& lo, const btVector3& hi) noexcept {
  return Box3{{round_down(lo.x()), round_down(lo.y()), round_down(lo.z())},
              {round_up(hi.x()), round_up(hi.y()), round_up(hi.z())}};
}

// The AABB's fault as sapling sees it (NaN, min > max), or none.
bool valid_aabb(const btVector3& lo, const btVector3& hi) noexcept {
  for (int k = 0; k < 3; ++k) {
    if (!(lo[k] <= hi[k])) return false;  // NaN on either side, or min > max
  }
  return true;
}

bool overlaps(const btVector3& a_lo, const btVector3& a_hi, const btVector3& b_lo, const btVector3& b_hi) noexcept {
  for (int k = 0; k < 3; ++k) {
    if (!(a_lo[k] <= b_hi[k] && b_lo[k] <= a_hi[k])) return false;
  }
  return true;
}

std::uint64_t pair_key(const btBroadphaseProxy* a, const btBroadphaseProxy* b) noexcept {
  auto x = static_cast<std::uint32_t>(a->m_uniqueId), y = static_cast<std::uint32_t>(b->m_uniqueId);
  if (x > y) std::swap(x, y);
  return (std::uint64_t{x} << 32) | y;
}

// The segment of a rayTest() in double precision.
struct Segment {
  double origin[3];
  double direction[3];
  double max_t;
  double grow_lo[3], grow_hi[3];  // the cast shape's aabbMin/aabbMax
};

// sapling's ray rule (include/sapling/ray.hpp) against the box
// [lo - grow_hi, hi - grow_lo], in double; the entry parameter into `t`.
bool segment_hits(const Segment& s, const btVector3& lo, const btVector3& hi, double& t) noexcept {
  double enter = 0.0, leave = s.max_t;
  for (int k = 0; k < 3; ++k) {
    const double o = s.origin[k], d = s.direction[k];
    const double box_lo = static_cast<double>(lo[k]) - s.grow_hi[k];
    const double box_hi = static_cast<double>(hi[k]) - s.grow_lo[k];
    if (d == 0.0) {
      if (o < box_lo || o > box_hi) return false;
      continue;
    }
    double near = (box_lo - o) / d, far = (box_hi - o) / d;
    if (d < 0.0) std::swap(near, far);
    enter = std::max(enter, near);
    leave = std::min(leave, far);
  }
  if (!(enter <= leave) || enter == kInfinity) return false;
  t = enter;
  return true;
}

[[noreturn]] void internal_error(const Status& s) {
  std::fprintf(stderr, "sapling::bullet: internal error: %s\n", s.message().c_str());
  std::abort();
}

}  // namespace

std::unique_ptr<BroadPhase> BroadPhase::create(Options options, btOverlappingPairCache* cache, Status* why) {
  if (options.broad_phase.max_pairs != 0) {
    if (why) *why = Status::invalid_argument(Operation::kCreate, "sapling::bullet needs max_pairs = 0");
    return nullptr;
  }
  if (options.broad_phase.dims != 3) {
    if (why) *why = Status::invalid_argument(Operation::kCreate, "sapling::bullet needs dims = 3");
    return nullptr;
  }
  Status status;
  auto bp = sapling::BroadPhase::create(options.algorithm, options.broad_phase, &status);
  if (!bp) {
    if (why) *why = status;
    return nullptr;
  }
  if (why) *why = Status();
  return std::unique_ptr<BroadPhase>(new BroadPhase(std::move(options), std::move(bp), cache));
}

std::unique_ptr<BroadPhase> BroadPhase::create(std::string_view algorithm, Status* why) {
  Options options;
  options.algorithm = std::string(algorithm);
  return create(std::move(options), nullptr, why);
}

BroadPhase::BroadPhase(Options options, std::unique_ptr<sapling::BroadPhase> bp, btOverlappingPairCache* cache)
    : options_(std::move(options)), bp_(std::move(bp)), cache_(cache), owns_cache_(cache == nullptr) {
  if (owns_cache_) {
    void* memory = btAlignedAlloc(sizeof(btHashedOverlappingPairCache), 16);
    cache_ = new (memory) btHashedOverlappingPairCache();
  }
}

BroadPhase::~BroadPhase() {
  if (owns_cache_) {
    cache_->~btOverlappingPairCache();
    btAlignedFree(cache_);
  }
}

void BroadPhase::warn(std::string_view message) const {
  if (options_.warn) {
    options_.warn(message);
  } else {
    std::fprintf(stderr, "sapling::bullet: %.*s\n", static_cast<int>(message.size()), message.data());
  }
}

Proxy* BroadPhase::held(const btBroadphaseProxy* proxy, const char* operation) const {
  const auto address = reinterpret_cast<std::uintptr_t>(proxy);
  auto it = std::upper_bound(
      chunk_index_.begin(), chunk_index_.end(), address,
      [](std::uintptr_t a, const auto& entry) { return a < reinterpret_cast<std::uintptr_t>(entry.first); });
  Proxy* p = nullptr;
  if (proxy != nullptr && it != chunk_index_.begin()) {
    --it;
    const auto first = reinterpret_cast<std::uintptr_t>(it->first);
    const std::uintptr_t offset = address - first;
    if (offset < kChunk * sizeof(Proxy) && offset % sizeof(Proxy) == 0) {
      p = &chunks_[it->second][offset / sizeof(Proxy)];
      if (static_cast<const btBroadphaseProxy*>(p) != proxy) p = nullptr;  // not at a proxy's start
    }
  }
  if (p != nullptr && p->state == Proxy::State::kLive) return p;
  misuse_++;
  std::string message = std::string(operation) + ": ";
  message += p != nullptr ? "this proxy was destroyed already (the call is ignored)"
                          : "this proxy does not belong to this broad phase (the call is ignored)";
  warn(message);
  return nullptr;
}

Proxy* BroadPhase::allocate() {
  if (free_.size() - free_head_ <= kQuarantine) {
    chunks_.push_back(std::make_unique<Proxy[]>(kChunk));
    Proxy* first = chunks_.back().get();
    const std::pair<const Proxy*, std::size_t> entry{first, chunks_.size() - 1};
    chunk_index_.insert(std::upper_bound(chunk_index_.begin(), chunk_index_.end(), entry,
                                         [](const auto& a, const auto& b) {
                                           return reinterpret_cast<std::uintptr_t>(a.first) <
                                                  reinterpret_cast<std::uintptr_t>(b.first);
                                         }),
                        entry);
    for (std::size_t i = 0; i < kChunk; ++i) free_.push_back(first + i);
  }
  Proxy* p = free_[free_head_++];
  if (free_head_ >= 4096 && free_head_ * 2 >= free_.size()) {  // drop the consumed front now and then
    free_.erase(free_.begin(), free_.begin() + static_cast<std::ptrdiff_t>(free_head_));
    free_head_ = 0;
  }
  return p;
}

Filter BroadPhase::filter_for(const Proxy* p) const noexcept {
  if (options_.filter == FilterMode::kCache) return Filter{};
  return Filter{static_cast<std::uint32_t>(p->m_collisionFilterGroup),
                static_cast<std::uint32_t>(p->m_collisionFilterMask)};
}

Motion BroadPhase::motion_for(const Proxy* p) const noexcept {
  if (options_.filter == FilterMode::kCache || !options_.statics) return Motion::kDynamic;
  // Two such proxies never pass the group/mask test: sapling may skip them.
  const auto group = static_cast<std::uint32_t>(p->m_collisionFilterGroup);
  const auto mask = static_cast<std::uint32_t>(p->m_collisionFilterMask);
  constexpr auto kStatic = static_cast<std::uint32_t>(btBroadphaseProxy::StaticFilter);
  return (group & ~kStatic) == 0 && (mask & kStatic) == 0 ? Motion::kStatic : Motion::kDynamic;
}

void BroadPhase::mark_dirty(Proxy* p) {
  if (!p->dirty) {
    p->dirty = true;
    dirty_.push_back(p);
  }
}

btBroadphaseProxy* BroadPhase::createProxy(const btVector3& aabbMin, const btVector3& aabbMax, int /*shapeType*/,
                                           void* userPtr, int collisionFilterGroup, int collisionFilterMask,
                                           btDispatcher* /*dispatcher*/) {
  Proxy* p = allocate();
  p->m_clientObject = userPtr;
  p->m_collisionFilterGroup = collisionFilterGroup;
  p->m_collisionFilterMask = collisionFilterMask;
  p->m_uniqueId = next_unique_id_++;
  p->m_aabbMin = aabbMin;
  p->m_aabbMax = aabbMax;
  p->id = Proxy::kNoId;
  p->state = Proxy::State::kLive;
  p->dirty = false;
  p->parked = false;
  p->index = static_cast<std::uint32_t>(live_.size());
  live_.push_back(p);
  mark_dirty(p);
  return p;
}

void BroadPhase::destroyProxy(btBroadphaseProxy* proxy, btDispatcher* dispatcher) {
  Proxy* p = held(proxy, "destroyProxy");
  if (p == nullptr) return;
  // At once, as btDbvtBroadphase: the dispatcher must not meet these pairs again.
  cache_->removeOverlappingPairsContainingProxy(p, dispatcher);
  p->state = Proxy::State::kDead;
  live_[p->index] = live_.back();
  live_[p->index]->index = p->index;
  live_.pop_back();
  if (p->id != Proxy::kNoId) removed_ids_.push_back(p->id);  // its id is released after the frame
  dead_.push_back(p);
}

void BroadPhase::setAabb(btBroadphaseProxy* proxy, const btVector3& aabbMin, const btVector3& aabbMax,
                         btDispatcher* /*dispatcher*/) {
  Proxy* p = held(proxy, "setAabb");
  if (p == nullptr) return;
  p->m_aabbMin = aabbMin;
  p->m_aabbMax = aabbMax;
  if (p->dirty) return;
  // Bullet sets every object's AABB each step by default: an unchanged box costs nothing.
  if (p->id != Proxy::kNoId && to_box(aabbMin, aabbMax) == p->box) return;
  mark_dirty(p);
}

void BroadPhase::getAabb(btBroadphaseProxy* proxy, btVector3& aabbMin, btVector3& aabbMax) const {
  const Proxy* p = held(proxy, "getAabb");
  if (p == nullptr) {
    aabbMin.setValue(0, 0, 0);
    aabbMax.setValue(0, 0, 0);
    return;
  }
  aabbMin = p->m_aabbMin;
  aabbMax = p->m_aabbMax;
}

Id BroadPhase::take_id(Proxy* p) {
  Id id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = static_cast<Id>(proxy_of_id_.size());
    proxy_of_id_.push_back(nullptr);
  }
  proxy_of_id_[id] = p;
  p->id = id;
  return id;
}

void BroadPhase::stage_adds(std::vector<Proxy*>& proxies, Motion motion) {
  if (proxies.empty()) return;
  add_ids_.clear();
  add_boxes_.clear();
  add_filters_.clear();
  for (Proxy* p : proxies) {
    add_ids_.push_back(p->id);
    add_boxes_.push_back(p->box);
    add_filters_.push_back(p->filter);
  }
  if (bp_->add(add_ids_, add_boxes_, add_filters_, motion)) return;
  // The algorithm refuses a box (unisize's one size, say): stage one by one,
  // parking those it refuses.
  for (Proxy* p : proxies) {
    const Status s = bp_->add(p->id, p->box, p->filter, motion);
    if (s) continue;
    if (s.code() != StatusCode::kUnsupported) internal_error(s);
    warn("proxy " + std::to_string(p->m_uniqueId) + " parked: the algorithm refuses its box: " + s.message());
    released_ids_.push_back(p->id);
    p->id = Proxy::kNoId;
    p->parked = true;
  }
}

void BroadPhase::calculateOverlappingPairs(btDispatcher* dispatcher) {
  const auto start = std::chrono::steady_clock::now();
  // Filters written into proxies since the last step.
  if (options_.filter == FilterMode::kGroupMask) {
    for (Proxy* p : live_) {
      if (p->m_collisionFilterGroup != p->seen_group || p->m_collisionFilterMask != p->seen_mask) mark_dirty(p);
    }
  }

  move_ids_.clear();
  move_boxes_.clear();
  add_dynamic_.clear();
  add_static_.clear();
  bool renamed = false;  // a proxy left sapling under one id and came back under another
  for (Proxy* p : dirty_) {
    p->dirty = false;
    if (p->state != Proxy::State::kLive) continue;
    p->seen_group = p->m_collisionFilterGroup;
    p->seen_mask = p->m_collisionFilterMask;
    const bool valid = valid_aabb(p->m_aabbMin, p->m_aabbMax);
    const Box3 box = valid ? to_box(p->m_aabbMin, p->m_aabbMax) : Box3{};
    const Filter filter = filter_for(p);
    const Motion motion = motion_for(p);
    if (p->id != Proxy::kNoId) {
      if (valid && filter == p->filter && motion == p->motion) {
        if (box != p->box) {
          move_ids_.push_back(p->id);
          move_boxes_.push_back(box);
          p->box = box;
        }
        continue;
      }
      // Leaves sapling: parked, or back at once under a new id with its new filter or motion.
      removed_ids_.push_back(p->id);
      p->id = Proxy::kNoId;
      renamed |= valid;
    }
    if (!valid) {
      if (!p->parked) {
        char message[256];
        std::snprintf(message, sizeof message,
                      "proxy %d parked: AABB [%g %g %g] - [%g %g %g] has NaN or min > max; no pairs until a valid "
                      "AABB is set",
                      p->m_uniqueId, static_cast<double>(p->m_aabbMin.x()), static_cast<double>(p->m_aabbMin.y()),
                      static_cast<double>(p->m_aabbMin.z()), static_cast<double>(p->m_aabbMax.x()),
                      static_cast<double>(p->m_aabbMax.y()), static_cast<double>(p->m_aabbMax.z()));
        warn(message);
      }
      p->parked = true;
      continue;
    }
    p->parked = false;
    p->box = box;
    p->filter = filter;
    p->motion = motion;
    take_id(p);
    (motion == Motion::kStatic ? add_static_ : add_dynamic_).push_back(p);
  }
  dirty_.clear();

  if (Status s = bp_->remove(removed_ids_); !s) internal_error(s);
  if (Status s = bp_->move(move_ids_, move_boxes_); !s) internal_error(s);
  stage_adds(add_dynamic_, Motion::kDynamic);
  stage_adds(add_static_, Motion::kStatic);
  const FrameDelta& delta = bp_->update();
  if (!delta.status) internal_error(delta.status);
  apply_delta(delta, dispatcher, renamed);

  // Offer again the pairs the cache refused (its filter callback may accept them now).
  for (auto it = refused_.begin(); it != refused_.end();) {
    if (cache_->addOverlappingPair(it->second.first, it->second.second) != nullptr) {
      it = refused_.erase(it);
    } else {
      ++it;
    }
  }

  for (Id id : removed_ids_) {
    proxy_of_id_[id] = nullptr;
    free_ids_.push_back(id);
  }
  for (Id id : released_ids_) {
    proxy_of_id_[id] = nullptr;
    free_ids_.push_back(id);
  }
  removed_ids_.clear();
  released_ids_.clear();
  for (Proxy* p : dead_) {
    p->state = Proxy::State::kFree;
    p->id = Proxy::kNoId;
    free_.push_back(p);
  }
  dead_.clear();
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void BroadPhase::apply_delta(const FrameDelta& delta, btDispatcher* dispatcher, bool net) {
  auto add = [&](Proxy* a, Proxy* b) {
    if (cache_->addOverlappingPair(a, b) == nullptr) refused_.emplace(pair_key(a, b), std::make_pair(a, b));
  };
  // A cache with deferred removal (btSortedOverlappingPairCache) ignores
  // removeOverlappingPair(): its broad phase removes the pairs itself.
  const bool deferred = cache_->hasDeferredRemoval();
  gone_.clear();
  auto remove = [&](Proxy* a, Proxy* b) {
    if (refused_.erase(pair_key(a, b)) != 0) return;  // never reached the cache
    // A destroyed proxy's pairs left the cache when it was destroyed.
    if (a->state != Proxy::State::kLive || b->state != Proxy::State::kLive) return;
    if (deferred) {
      gone_.insert(pair_key(a, b));
    } else {
      cache_->removeOverlappingPair(a, b, dispatcher);
    }
  };
  if (!net) {
    for (const Pair& d : delta.deleted) remove(proxy_of_id_[d.a], proxy_of_id_[d.b]);
    if (deferred) remove_deferred(dispatcher);
    for (const Pair& c : delta.created) add(proxy_of_id_[c.a], proxy_of_id_[c.b]);
    return;
  }
  // A proxy renamed this step: its pairs that persist come back as deleted
  // under the old id and created under the new one; they stay in the cache.
  net_.clear();
  for (const Pair& d : delta.deleted) {
    Proxy* a = proxy_of_id_[d.a];
    Proxy* b = proxy_of_id_[d.b];
    net_.emplace(pair_key(a, b), std::make_pair(a, b));
  }
  for (const Pair& c : delta.created) {
    Proxy* a = proxy_of_id_[c.a];
    Proxy* b = proxy_of_id_[c.b];
    if (net_.erase(pair_key(a, b)) == 0) add(a, b);
  }
  for (const auto& [key, proxies] : net_) remove(proxies.first, proxies.second);
  if (deferred) remove_deferred(dispatcher);
}

void BroadPhase::remove_deferred(btDispatcher* dispatcher) {
  if (gone_.empty()) return;
  btBroadphasePairArray& pairs = cache_->getOverlappingPairArray();
  int kept = 0;
  for (int i = 0; i < pairs.size(); ++i) {
    if (gone_.count(pair_key(pairs[i].m_pProxy0, pairs[i].m_pProxy1)) != 0) {
      cache_->cleanOverlappingPair(pairs[i], dispatcher);
      continue;
    }
    if (kept != i) pairs[kept] = pairs[i];
    ++kept;
  }
  pairs.resize(kept);
  gone_.clear();
}

template <class Visit>
void BroadPhase::for_each_hit(const btVector3& lo, const btVector3& hi, Visit&& visit) const {
  // sapling answers as of the last step; proxies changed since are tested here.
  if (!valid_aabb(lo, hi)) return;
  if (Status s = bp_->query(to_box(lo, hi), hits_); !s) return;
  for (Id id : hits_) {
    Proxy* p = proxy_of_id_[id];
    if (p->state == Proxy::State::kLive && !p->dirty) visit(p);
  }
  for (Proxy* p : dirty_) {
    if (p->state == Proxy::State::kLive) visit(p);
  }
}

void BroadPhase::aabbTest(const btVector3& aabbMin, const btVector3& aabbMax, btBroadphaseAabbCallback& callback) {
  ordered_.clear();
  for_each_hit(aabbMin, aabbMax, [&](Proxy* p) {
    // Exact in btScalar (sapling's float boxes are rounded outward for a double btScalar).
    if (overlaps(p->m_aabbMin, p->m_aabbMax, aabbMin, aabbMax)) ordered_.emplace_back(0.0, p);
  });
  // The callback may change the broad phase (scratch is copied first).
  const std::vector<std::pair<double, Proxy*>> found(ordered_);
  for (const auto& [t, p] : found) callback.process(p);
}

void BroadPhase::rayTest(const btVector3& rayFrom, const btVector3& /*rayTo*/, btBroadphaseRayCallback& rayCallback,
                         const btVector3& aabbMin, const btVector3& aabbMax) {
  Segment s{};
  bool moving = false;
  for (int k = 0; k < 3; ++k) {
    s.origin[k] = static_cast<double>(rayFrom[k]);
    const double inverse = static_cast<double>(rayCallback.m_rayDirectionInverse[k]);
    double d = std::abs(inverse) >= static_cast<double>(BT_LARGE_FLOAT) ? 0.0 : 1.0 / inverse;
#ifndef BT_USE_DOUBLE_PRECISION
    d = static_cast<float>(d);  // the direction sapling's float ray carries
#endif
    s.direction[k] = d;
    moving |= d != 0.0;
    s.grow_lo[k] = static_cast<double>(aabbMin[k]);
    s.grow_hi[k] = static_cast<double>(aabbMax[k]);
    if (!std::isfinite(s.origin[k]) || std::isnan(d) || !std::isfinite(s.grow_lo[k]) || !std::isfinite(s.grow_hi[k])) {
      return;  // no segment: nothing is met
    }
  }
  s.max_t = static_cast<double>(rayCallback.m_lambda_max);
  if (!(s.max_t >= 0.0)) return;
  const bool grown = aabbMin != btVector3(0, 0, 0) || aabbMax != btVector3(0, 0, 0);

  ordered_.clear();
  auto test = [&](Proxy* p) {
    double t;
    if (segment_hits(s, p->m_aabbMin, p->m_aabbMax, t)) ordered_.emplace_back(t, p);
  };
  bool done = false;
#ifndef BT_USE_DOUBLE_PRECISION
  if (moving && !grown) {
    // sapling's own ray cast: the same rule on the same float numbers.
    const Ray3 ray{
        {static_cast<float>(s.origin[0]), static_cast<float>(s.origin[1]), static_cast<float>(s.origin[2])},
        {static_cast<float>(s.direction[0]), static_cast<float>(s.direction[1]), static_cast<float>(s.direction[2])},
        static_cast<float>(s.max_t)};
    if (bp_->ray_cast(ray, ray_hits_)) {
      for (const RayHit& h : ray_hits_) {
        Proxy* p = proxy_of_id_[h.id];
        if (p->state == Proxy::State::kLive && !p->dirty) test(p);
      }
      for (Proxy* p : dirty_) {
        if (p->state == Proxy::State::kLive) test(p);
      }
      done = true;
    }
  }
#else
  (void)moving;
#endif
  if (!done) {
    // The box the grown segment sweeps, then the exact test on each proxy in it.
    btVector3 lo, hi;
    for (int k = 0; k < 3; ++k) {
      const double end = s.direction[k] == 0.0 ? s.origin[k] : s.origin[k] + s.max_t * s.direction[k];
      const double want_lo = std::min(s.origin[k], end) + s.grow_lo[k];
      const double want_hi = std::max(s.origin[k], end) + s.grow_hi[k];
      lo[k] = static_cast<btScalar>(want_lo);
      hi[k] = static_cast<btScalar>(want_hi);
      // btScalar rounding must not shrink the box.
      if (static_cast<double>(lo[k]) > want_lo)
        lo[k] = std::nextafter(lo[k], -std::numeric_limits<btScalar>::infinity());
      if (static_cast<double>(hi[k]) < want_hi)
        hi[k] = std::nextafter(hi[k], std::numeric_limits<btScalar>::infinity());
    }
    // A box the grown segment meets overlaps this box: the query's superset is then cut exactly.
    for_each_hit(lo, hi, test);
  }
  std::stable_sort(ordered_.begin(), ordered_.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  const std::vector<std::pair<double, Proxy*>> found(ordered_);
  for (const auto& [t, p] : found) rayCallback.process(p);
}

void BroadPhase::getBroadphaseAabb(btVector3& aabbMin, btVector3& aabbMax) const {
  bool any = false;
  for (const Proxy* p : live_) {
    if (p->parked || !valid_aabb(p->m_aabbMin, p->m_aabbMax)) continue;
    if (!any) {
      aabbMin = p->m_aabbMin;
      aabbMax = p->m_aabbMax;
      any = true;
    } else {
      aabbMin.setMin(p->m_aabbMin);
      aabbMax.setMax(p->m_aabbMax);
    }
  }
  if (!any) {
    aabbMin.setValue(0, 0, 0);
    aabbMax.setValue(0, 0, 0);
  }
}

void BroadPhase::resetPool(btDispatcher* /*dispatcher*/) {
  if (!live_.empty() || !dead_.empty()) return;
  Status status;
  auto fresh = sapling::BroadPhase::create(options_.algorithm, options_.broad_phase, &status);
  if (!fresh) return;  // cannot happen: the same name and options made bp_
  bp_ = std::move(fresh);
  chunks_.clear();
  chunk_index_.clear();
  free_.clear();
  free_head_ = 0;
  dirty_.clear();
  proxy_of_id_.clear();
  free_ids_.clear();
  removed_ids_.clear();
  released_ids_.clear();
  refused_.clear();
  next_unique_id_ = 0;
}

std::size_t BroadPhase::parked_count() const noexcept {
  std::size_t n = 0;
  for (const Proxy* p : live_) n += p->parked ? 1 : 0;
  return n;
}

bool BroadPhase::is_parked(const btBroadphaseProxy* proxy) const {
  const Proxy* p = held(proxy, "is_parked");
  return p != nullptr && p->parked;
}

void BroadPhase::printStats() {
  std::printf(
      "sapling::bullet: algorithm %.*s, %zu proxies (%zu parked), %zu pairs in sapling, %d in the cache, %zu "
      "refused by the cache, %llu steps, last step %.3f ms\n",
      static_cast<int>(bp_->algorithm_name().size()), bp_->algorithm_name().data(), live_.size(), parked_count(),
      bp_->pairs().size(), cache_->getNumOverlappingPairs(), refused_.size(),
      static_cast<unsigned long long>(bp_->frame()), last_seconds_ * 1e3);
}

}  // namespace sapling::bullet
