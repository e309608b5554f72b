// A JPH::BroadPhase backed by a sapling::BroadPhase; see sapling_broad_phase.h
// and docs/adapters/jolt.md. Only Jolt's public headers are used.
#include "sapling_broad_phase.h"

#include <Jolt/Geometry/OrientedBox.h>
#include <Jolt/Geometry/RayAABox.h>
#include <Jolt/Physics/Body/Body.h>
#include <Jolt/Physics/Body/BodyManager.h>
#include <Jolt/Physics/Body/BodyPair.h>
#include <Jolt/Physics/Collision/AABoxCast.h>
#include <Jolt/Physics/Collision/CastResult.h>
#include <Jolt/Physics/Collision/RayCast.h>

#include <sapling/broad_phase.hpp>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <mutex>

namespace sapling_jolt {
namespace {

using JPH::AABox;
using JPH::Body;
using JPH::BodyID;
using JPH::Vec3;

bool valid(const AABox& b) {
  // NaN fails every comparison: such a box, or min > max, is not valid.
  return b.mMin.GetX() <= b.mMax.GetX() && b.mMin.GetY() <= b.mMax.GetY() && b.mMin.GetZ() <= b.mMax.GetZ();
}

sapling::Box3 to_box(const AABox& b) {
  return sapling::Box3{{b.mMin.GetX(), b.mMin.GetY(), b.mMin.GetZ()}, {b.mMax.GetX(), b.mMax.GetY(), b.mMax.GetZ()}};
}

bool inside(const AABox& inner, const AABox& outer) {
  // Vec3's == compares all components; <= per component through GetX/Y/Z.
  return outer.mMin.GetX() <= inner.mMin.GetX() && outer.mMin.GetY() <= inner.mMin.GetY() &&
         outer.mMin.GetZ() <= inner.mMin.GetZ() && inner.mMax.GetX() <= outer.mMax.GetX() &&
         inner.mMax.GetY() <= outer.mMax.GetY() && inner.mMax.GetZ() <= outer.mMax.GetZ();
}

}  // namespace

SaplingBroadPhase::SaplingBroadPhase(std::string algorithm, unsigned threads, float margin, float margin_scale,
                                     float lookahead)
    : algorithm_(std::move(algorithm)),
      threads_(threads),
      margin_(margin),
      margin_scale_(margin_scale),
      lookahead_(lookahead) {}

AABox SaplingBroadPhase::Fatten(const Body& body, const AABox& box) const {
  const Vec3 extent = box.GetExtent();
  const float largest = std::max(extent.GetX(), std::max(extent.GetY(), extent.GetZ()));
  if (!std::isfinite(largest)) return box;
  AABox fat = box;
  const float m = std::min(margin_ + margin_scale_ * largest, 1.0f);
  if (m > 0.0f) fat.ExpandBy(Vec3::sReplicate(m));
  // Look ahead along the velocity, as Box2D's tree does with its
  // displacement: a body moving steadily stays inside for a few steps.
  if (lookahead_ > 0.0f && body.IsRigidBody() && !body.IsStatic()) {
    // At most the body's own size: a fast small body with a long box would
    // meet many others, and every query would visit it.
    Vec3 d = lookahead_ * body.GetLinearVelocity();
    const float len = d.Length(), cap = 2.0f * largest;
    if (len > cap) d *= cap / len;
    if (!d.IsNaN()) {
      fat.mMin += Vec3::sMin(d, Vec3::sZero());
      fat.mMax += Vec3::sMax(d, Vec3::sZero());
    }
  }
  return fat;
}

SaplingBroadPhase::~SaplingBroadPhase() = default;

void SaplingBroadPhase::Init(JPH::BodyManager* inBodyManager, const JPH::BroadPhaseLayerInterface& inLayerInterface) {
  JPH::BroadPhase::Init(inBodyManager, inLayerInterface);
  sapling::Options options;
  options.threads = threads_;
  sapling::Status why;
  bp_ = sapling::BroadPhase::create(algorithm_, options, &why);
  if (!bp_) {
    std::fprintf(stderr, "sapling-jolt: cannot create sapling broad phase '%s': %s\n", algorithm_.c_str(),
                 why.message().c_str());
    std::abort();
  }
  max_bodies_ = inBodyManager->GetMaxBodies();
  slots_.assign(max_bodies_, Slot{});
  for (std::uint32_t i = 0; i < max_bodies_; ++i) slots_[i].id = 2 * i;
  lists_.assign(max_bodies_, {});
  in_bp_.reset(new std::atomic<std::uint8_t>[max_bodies_]);
  dirty_.reset(new std::atomic<std::uint8_t>[max_bodies_]);
  dirty_list_.reset(new std::atomic<std::uint32_t>[max_bodies_]);
  for (std::uint32_t i = 0; i < max_bodies_; ++i) {
    in_bp_[i].store(0, std::memory_order_relaxed);
    dirty_[i].store(0, std::memory_order_relaxed);
    dirty_list_[i].store(kNone, std::memory_order_relaxed);
  }
}

std::string SaplingBroadPhase::algorithm_name() const { return bp_ ? std::string(bp_->algorithm_name()) : algorithm_; }

void SaplingBroadPhase::MarkDirty(std::uint32_t index) const {
  if (dirty_[index].exchange(1, std::memory_order_acq_rel) == 0) {
    const std::uint32_t k = dirty_count_.fetch_add(1, std::memory_order_relaxed);
    dirty_list_[k].store(index, std::memory_order_release);
  }
}

void SaplingBroadPhase::AddBodiesFinalize(BodyID* ioBodies, int inNumber, AddState) {
  std::shared_lock lock(mutex_);
  JPH::BodyVector& bodies = mBodyManager->GetBodies();
  for (int i = 0; i < inNumber; ++i) {
    const std::uint32_t index = ioBodies[i].GetIndex();
    Body& body = *bodies[index];
    in_bp_[index].store(1, std::memory_order_release);
    MarkDirty(index);
    body.SetInBroadPhaseInternal(true);
  }
}

void SaplingBroadPhase::RemoveBodies(BodyID* ioBodies, int inNumber) {
  std::shared_lock lock(mutex_);
  JPH::BodyVector& bodies = mBodyManager->GetBodies();
  for (int i = 0; i < inNumber; ++i) {
    const std::uint32_t index = ioBodies[i].GetIndex();
    Body& body = *bodies[index];
    in_bp_[index].store(0, std::memory_order_release);
    MarkDirty(index);
    body.SetInBroadPhaseInternal(false);
  }
}

void SaplingBroadPhase::NotifyBodiesAABBChanged(BodyID* ioBodies, int inNumber, bool) {
  // Called from the position solver's jobs, several at once. A body still
  // inside the fattened box sapling holds changes nothing (its pairs and
  // query hits are found by that box and cut exactly on its bounds); any
  // other gets an atomic mark, and sapling hears of it at the next update.
  std::shared_lock lock(mutex_);
  const JPH::BodyVector& bodies = mBodyManager->GetBodies();
  for (int i = 0; i < inNumber; ++i) {
    const std::uint32_t index = ioBodies[i].GetIndex();
    const Slot& s = slots_[index];
    if (s.live && inside(bodies[index]->GetWorldSpaceBounds(), s.box)) continue;
    MarkDirty(index);
  }
}

void SaplingBroadPhase::NotifyBodiesLayerChanged(BodyID* ioBodies, int inNumber) {
  // Layers are read from the bodies when pairs and queries are filtered;
  // the mark only makes queries test these bodies directly until the update.
  std::shared_lock lock(mutex_);
  for (int i = 0; i < inNumber; ++i) MarkDirty(ioBodies[i].GetIndex());
}

void SaplingBroadPhase::Optimize() {
  std::unique_lock lock(mutex_);
  Flush(distance_.load());
}

void SaplingBroadPhase::FrameSync() {
  if (dirty_count_.load(std::memory_order_acquire) == 0) return;
  std::unique_lock lock(mutex_);
  Flush(distance_.load());
}

void SaplingBroadPhase::UnlockModifications() {
  // PhysicsSystem::Update calls this last, after its jobs are done: the
  // bodies the step moved reach sapling now, so that queries between steps
  // (a character controller's) find sapling current instead of testing
  // every body moved since one by one.
  FrameSync();
}

void SaplingBroadPhase::Flush(float distance) const {
  const bool new_distance = distance != distance_.load();
  const std::uint32_t n = std::min(dirty_count_.load(std::memory_order_acquire), max_bodies_);
  if (n == 0 && !new_distance) return;
  const JPH::BodyVector& bodies = mBodyManager->GetBodies();

  thread_local std::vector<sapling::Id> remove_ids, move_ids, add_dyn_ids, add_static_ids;
  thread_local std::vector<sapling::Box3> move_boxes, add_dyn_boxes, add_static_boxes;
  thread_local std::vector<float> move_dist, add_dyn_dist;
  remove_ids.clear(), move_ids.clear(), add_dyn_ids.clear(), add_static_ids.clear();
  move_boxes.clear(), add_dyn_boxes.clear(), add_static_boxes.clear(), move_dist.clear(), add_dyn_dist.clear();

  auto visit = [&](std::uint32_t index) {
    Slot& s = slots_[index];
    const Body* body = in_bp_[index].load(std::memory_order_acquire) ? bodies[index] : nullptr;
    const AABox* box = body ? &body->GetWorldSpaceBounds() : nullptr;
    const bool keep = body && valid(*box);  // a NaN or inverted box is parked
    if (s.live) {
      if (keep && body->GetID() == s.body && body->IsStatic() == s.is_static) {
        if (!inside(*box, s.box) || (new_distance && !s.is_static)) {
          s.box = s.is_static ? *box : Fatten(*body, *box);
          move_ids.push_back(s.id);
          move_boxes.push_back(to_box(s.box));
          move_dist.push_back(s.is_static ? 0.0f : distance);
        }
        return;
      }
      remove_ids.push_back(s.id);
      lists_[index].clear();  // its pairs are deleted under the old id this frame
      s.live = false;
      s.id ^= 1u;  // the next body in this slot comes back under the other id
    }
    if (keep) {
      s.live = true;
      s.body = body->GetID();
      s.is_static = body->IsStatic();
      s.box = s.is_static ? *box : Fatten(*body, *box);
      if (s.is_static) {
        add_static_ids.push_back(s.id);
        add_static_boxes.push_back(to_box(s.box));
      } else {
        add_dyn_ids.push_back(s.id);
        add_dyn_boxes.push_back(to_box(s.box));
        add_dyn_dist.push_back(distance);
      }
    }
  };

  if (new_distance) {
    // Every body carries the new distance: all of them are visited.
    for (std::uint32_t i = 0; i < max_bodies_; ++i) visit(i);
  } else {
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint32_t index = dirty_list_[k].load(std::memory_order_acquire);
      if (index != kNone) visit(index);
    }
  }
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t index = dirty_list_[k].exchange(kNone, std::memory_order_relaxed);
    if (index != kNone) dirty_[index].store(0, std::memory_order_relaxed);
  }
  dirty_count_.store(0, std::memory_order_release);
  distance_.store(distance, std::memory_order_release);

  sapling::Status s;
  if (!remove_ids.empty()) s = bp_->remove(remove_ids);
  if (s && !move_ids.empty()) s = bp_->move(move_ids, move_boxes, move_dist);
  if (s && !add_dyn_ids.empty()) s = bp_->add(add_dyn_ids, add_dyn_boxes, {}, sapling::Motion::kDynamic, add_dyn_dist);
  if (s && !add_static_ids.empty()) s = bp_->add(add_static_ids, add_static_boxes, {}, sapling::Motion::kStatic);
  if (!s) {
    std::fprintf(stderr, "sapling-jolt: sapling refused a batch: %s\n", s.message().c_str());
    std::abort();
  }
  const sapling::FrameDelta& delta = bp_->update();
  if (!delta.status) {
    std::fprintf(stderr, "sapling-jolt: sapling refused the frame: %s\n", delta.status.message().c_str());
    std::abort();
  }
  ++updates_;
  if (!delta.created.empty() || !delta.deleted.empty()) UpdateNeighbours(delta.created, delta.deleted);
}

void SaplingBroadPhase::UpdateNeighbours(std::span<const sapling::Pair> created,
                                         std::span<const sapling::Pair> deleted) const {
  // Each non-static body's neighbours, by slot, kept sorted (so that the
  // pairs reported do not depend on sapling's order), from the frame's
  // delta: deletions first (a slot that changed hands this frame had its
  // list cleared in Flush, and its old pairs are deleted under its old id),
  // then creations. Statics keep no list: they are never the active body.
  auto erase = [&](std::uint32_t slot, std::uint32_t other) {
    std::vector<std::uint32_t>& l = lists_[slot];
    const auto it = std::lower_bound(l.begin(), l.end(), other);
    if (it != l.end() && *it == other) l.erase(it);
  };
  auto insert = [&](std::uint32_t slot, std::uint32_t other) {
    if (slots_[slot].is_static) return;
    std::vector<std::uint32_t>& l = lists_[slot];
    l.insert(std::lower_bound(l.begin(), l.end(), other), other);
  };
  for (const sapling::Pair& p : deleted) {
    erase(p.a >> 1, p.b >> 1);
    erase(p.b >> 1, p.a >> 1);
  }
  for (const sapling::Pair& p : created) {
    insert(p.a >> 1, p.b >> 1);
    insert(p.b >> 1, p.a >> 1);
  }
}

void SaplingBroadPhase::FindCollidingPairs(BodyID* ioActiveBodies, int inNumActiveBodies,
                                           float inSpeculativeContactDistance,
                                           const JPH::ObjectVsBroadPhaseLayerFilter& inObjectVsBroadPhaseLayerFilter,
                                           const JPH::ObjectLayerPairFilter& inObjectLayerPairFilter,
                                           JPH::BodyPairCollector& ioPairCollector) const {
  // Normally the update ran at FrameSync; a change since (a second collision
  // step in one PhysicsSystem::Update) or another speculative distance is
  // applied here, once, by the first job to arrive.
  if (dirty_count_.load(std::memory_order_acquire) != 0 ||
      inSpeculativeContactDistance > distance_.load(std::memory_order_acquire)) {
    std::unique_lock lock(mutex_);
    if (dirty_count_.load(std::memory_order_acquire) != 0 ||
        inSpeculativeContactDistance > distance_.load(std::memory_order_acquire))
      Flush(std::max(inSpeculativeContactDistance, distance_.load()));
  }
  // No lock: like BroadPhaseQuadTree, this relies on PhysicsSystem::Update
  // changing nothing while pairs are found.
  const JPH::BodyVector& bodies = mBodyManager->GetBodies();
  for (int i = 0; i < inNumActiveBodies; ++i) {
    const BodyID id1 = ioActiveBodies[i];
    const std::uint32_t index1 = id1.GetIndex();
    const Body& body1 = *bodies[index1];
    const JPH::ObjectLayer layer1 = body1.GetObjectLayer();
    AABox bounds1 = body1.GetWorldSpaceBounds();
    bounds1.ExpandBy(Vec3::sReplicate(inSpeculativeContactDistance));
    for (const std::uint32_t index2 : lists_[index1]) {
      const Body& body2 = *bodies[index2];
      if (inObjectVsBroadPhaseLayerFilter.ShouldCollide(layer1, body2.GetBroadPhaseLayer()) &&
          inObjectLayerPairFilter.ShouldCollide(layer1, body2.GetObjectLayer()) &&
          Body::sFindCollidingPairsCanCollide(body1, body2) && bounds1.Overlaps(body2.GetWorldSpaceBounds()))
        ioPairCollector.AddHit({id1, body2.GetID()});
    }
  }
}

bool SaplingBroadPhase::LayerOk(const Body& body, const JPH::BroadPhaseLayerFilter& bp,
                                const JPH::ObjectLayerFilter& ol) const {
  return bp.ShouldCollide(body.GetBroadPhaseLayer()) && ol.ShouldCollide(body.GetObjectLayer());
}

template <class Visit>
void SaplingBroadPhase::ForCandidates(const AABox& box, Visit&& visit) const {
  std::shared_lock lock(mutex_);
  thread_local std::vector<sapling::Id> hits;
  hits.clear();
  if (box.mMin.GetX() <= box.mMax.GetX() && box.mMin.GetY() <= box.mMax.GetY() && box.mMin.GetZ() <= box.mMax.GetZ())
    (void)bp_->query(to_box(box), hits);  // refused (NaN) means no hit
  for (const sapling::Id id : hits) {
    const std::uint32_t index = id >> 1;
    if (dirty_[index].load(std::memory_order_acquire)) continue;  // tested below on its current box
    if (!visit(index)) return;
  }
  const std::uint32_t n = std::min(dirty_count_.load(std::memory_order_acquire), max_bodies_);
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint32_t index = dirty_list_[k].load(std::memory_order_acquire);
    if (index == kNone || !in_bp_[index].load(std::memory_order_acquire)) continue;
    if (!visit(index)) return;
  }
}

namespace {
// Hands the casts' hits to the collector nearest first (by fraction, then
// body index, as the quadtree orders its nodes) while they are nearer than
// its early-out fraction, which each hit may lower (`positive`: the
// collector's positive early-out fraction, as CastAABox reads it); false
// when the collector asks to stop.
template <class Collector>
bool DeliverNearestFirst(std::vector<std::pair<float, std::uint32_t>>& found, const JPH::BodyVector& bodies,
                         Collector& collector, float& early_out, bool positive) {
  std::sort(found.begin(), found.end());
  for (const auto& [fraction, index] : found) {
    if (!(fraction < early_out)) break;
    JPH::BroadPhaseCastResult result{bodies[index]->GetID(), fraction};
    collector.AddHit(result);
    if (collector.ShouldEarlyOut()) return false;
    early_out = positive ? collector.GetPositiveEarlyOutFraction() : collector.GetEarlyOutFraction();
  }
  return true;
}
}  // namespace

template <class Overlaps>
void SaplingBroadPhase::CollideBodies(const AABox& region, JPH::CollideShapeBodyCollector& collector,
                                      const JPH::BroadPhaseLayerFilter& bp, const JPH::ObjectLayerFilter& ol,
                                      Overlaps&& overlaps) const {
  const JPH::BodyVector& bodies = mBodyManager->GetBodies();
  ForCandidates(region, [&](std::uint32_t index) {
    const Body& body = *bodies[index];
    if (LayerOk(body, bp, ol) && overlaps(body.GetWorldSpaceBounds())) {
      collector.AddHit(body.GetID());
      if (collector.ShouldEarlyOut()) return false;
    }
    return true;
  });
}

void SaplingBroadPhase::CollideAABox(const AABox& inBox, JPH::CollideShapeBodyCollector& ioCollector,
                                     const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                                     const JPH::ObjectLayerFilter& inObjectLayerFilter) const {
  CollideBodies(inBox, ioCollector, inBroadPhaseLayerFilter, inObjectLayerFilter,
                [&](const AABox& bounds) { return bounds.Overlaps(inBox); });
}

void SaplingBroadPhase::CollideSphere(JPH::Vec3Arg inCenter, float inRadius,
                                      JPH::CollideShapeBodyCollector& ioCollector,
                                      const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                                      const JPH::ObjectLayerFilter& inObjectLayerFilter) const {
  const float radius_sq = inRadius * inRadius;
  // The sphere's box, with room for the rounding of centre +- radius.
  const Vec3 r = Vec3::sReplicate(inRadius * (1.0f + 1.0e-6f)) + 1.0e-6f * inCenter.Abs();
  CollideBodies(AABox(inCenter - r, inCenter + r), ioCollector, inBroadPhaseLayerFilter, inObjectLayerFilter,
                [&](const AABox& bounds) { return bounds.GetSqDistanceTo(inCenter) <= radius_sq; });
}

void SaplingBroadPhase::CollidePoint(JPH::Vec3Arg inPoint, JPH::CollideShapeBodyCollector& ioCollector,
                                     const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                                     const JPH::ObjectLayerFilter& inObjectLayerFilter) const {
  CollideBodies(AABox(inPoint, inPoint), ioCollector, inBroadPhaseLayerFilter, inObjectLayerFilter,
                [&](const AABox& bounds) { return bounds.Contains(inPoint); });
}

void SaplingBroadPhase::CollideOrientedBox(const JPH::OrientedBox& inBox, JPH::CollideShapeBodyCollector& ioCollector,
                                           const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                                           const JPH::ObjectLayerFilter& inObjectLayerFilter) const {
  // The oriented box's world AABB, grown by more than OrientedBox::Overlaps'
  // tolerance (1e-6), holds every box that test accepts.
  AABox region = AABox(-inBox.mHalfExtents, inBox.mHalfExtents).Transformed(inBox.mOrientation);
  region.ExpandBy(Vec3::sReplicate(1.0e-4f) + 1.0e-6f * region.GetExtent());
  CollideBodies(region, ioCollector, inBroadPhaseLayerFilter, inObjectLayerFilter,
                [&](const AABox& bounds) { return inBox.Overlaps(bounds); });
}

void SaplingBroadPhase::CastRay(const JPH::RayCast& inRay, JPH::RayCastBodyCollector& ioCollector,
                                const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                                const JPH::ObjectLayerFilter& inObjectLayerFilter) const {
  const JPH::BodyVector& bodies = mBodyManager->GetBodies();
  const Vec3 origin(inRay.mOrigin);
  const Vec3 direction(inRay.mDirection);
  const JPH::RayInvDirection inv_direction(direction);
  float early_out = ioCollector.GetEarlyOutFraction();
  // Jolt's own slab test decides each hit and its fraction; sapling supplies
  // the candidates; they reach the collector nearest first (by Jolt's
  // fraction, then body index), as the quadtree orders its nodes.
  thread_local std::vector<std::pair<float, std::uint32_t>> found;
  found.clear();
  auto visit = [&](std::uint32_t index) {
    const Body& body = *bodies[index];
    if (!LayerOk(body, inBroadPhaseLayerFilter, inObjectLayerFilter)) return true;
    const AABox& bounds = body.GetWorldSpaceBounds();
    const float fraction = JPH::RayAABox(origin, inv_direction, bounds.mMin, bounds.mMax);
    if (fraction < early_out) found.emplace_back(fraction, index);
    return true;
  };
  auto deliver = [&] { DeliverNearestFirst(found, bodies, ioCollector, early_out, false); };
  const sapling::Ray3 ray{
      {origin.GetX(), origin.GetY(), origin.GetZ()},
      {direction.GetX(), direction.GetY(), direction.GetZ()},
      std::isfinite(early_out) && early_out < FLT_MAX ? std::nextafter(std::max(early_out, 0.0f), INFINITY) : INFINITY};
  if (!sapling::check_ray(ray)) {
    // A zero direction: the boxes holding the origin. Anything else
    // sapling refuses (a NaN or infinite ray) hits nothing in Jolt either.
    if (direction.IsNearZero(0.0f) && !origin.IsNaN()) {
      const AABox point(origin, origin);
      ForCandidates(point, visit);
      deliver();
    }
    return;
  }
  {
    std::shared_lock lock(mutex_);
    thread_local std::vector<sapling::RayHit> hits;
    (void)bp_->ray_cast(ray, hits);
    for (const sapling::RayHit& h : hits) {
      const std::uint32_t index = h.id >> 1;
      if (!dirty_[index].load(std::memory_order_acquire)) visit(index);
    }
    const std::uint32_t n = std::min(dirty_count_.load(std::memory_order_acquire), max_bodies_);
    for (std::uint32_t k = 0; k < n; ++k) {
      const std::uint32_t index = dirty_list_[k].load(std::memory_order_acquire);
      if (index != kNone && in_bp_[index].load(std::memory_order_acquire)) visit(index);
    }
  }
  deliver();  // outside the lock: the collector may run queries of its own
}

void SaplingBroadPhase::CastAABoxNoLock(const JPH::AABoxCast& inBox, JPH::CastShapeBodyCollector& ioCollector,
                                        const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                                        const JPH::ObjectLayerFilter& inObjectLayerFilter) const {
  const JPH::BodyVector& bodies = mBodyManager->GetBodies();
  const Vec3 origin = inBox.mBox.GetCenter();
  const Vec3 extent = inBox.mBox.GetExtent();
  const Vec3 dir = inBox.mDirection;
  const JPH::RayInvDirection inv_direction(dir);
  float early_out = ioCollector.GetPositiveEarlyOutFraction();
  // Each candidate is decided by Jolt's slab test of the cast box's centre
  // against the body's bounds grown by the box's extent, as Jolt's broad
  // phases decide it; a body is visited once (stamps per thread).
  thread_local std::vector<std::uint32_t> stamp;
  thread_local std::uint32_t generation = 0;
  if (stamp.size() < max_bodies_) stamp.assign(max_bodies_, 0);
  if (++generation == 0) std::fill(stamp.begin(), stamp.end(), 0u), generation = 1;
  // A piece's hits go to the collector nearest first, as the quadtree
  // visits its nodes: a closest-hit collector (a character's shape cast, a
  // CCD cast) then lowers its early-out fraction before the farther bodies,
  // whose narrow-phase casts it skips.
  thread_local std::vector<std::pair<float, std::uint32_t>> found;
  bool stop = false;
  auto visit = [&](std::uint32_t index) {
    if (stamp[index] == generation) return true;
    stamp[index] = generation;
    const Body& body = *bodies[index];
    if (!LayerOk(body, inBroadPhaseLayerFilter, inObjectLayerFilter)) return true;
    const AABox& bounds = body.GetWorldSpaceBounds();
    const float fraction = JPH::RayAABox(origin, inv_direction, bounds.mMin - extent, bounds.mMax + extent);
    if (fraction < early_out) found.emplace_back(fraction, index);
    return true;
  };
  auto deliver = [&] {
    stop = !DeliverNearestFirst(found, bodies, ioCollector, early_out, true);
    found.clear();
  };
  found.clear();
  if (!(early_out < 1.0e6f)) {
    // No useful bound on the fraction: the half-space the cast heads into.
    AABox swept = inBox.mBox;
    swept.ExpandBy(Vec3::sReplicate(1.0e-4f) + 1.0e-6f * swept.GetExtent());
    for (int k = 0; k < 3; ++k) {
      if (dir[k] > 0.0f) swept.mMax.SetComponent(k, INFINITY);
      if (dir[k] < 0.0f) swept.mMin.SetComponent(k, -INFINITY);
    }
    ForCandidates(swept, visit);
    deliver();
    return;
  }
  // The sweep up to the early-out fraction, cut into pieces about four box
  // sizes long (at most 32), nearest first: a long diagonal cast queries a
  // thin chain of boxes rather than the box around all of it, and stops at
  // the piece that starts beyond the collector's early-out fraction.
  const float reach = early_out;
  const float length = (dir * reach).Length();
  const float size = 2.0f * std::max(extent.ReduceMax(), 1.0e-3f);
  const int pieces = std::clamp(int(std::ceil(length / (4.0f * size))), 1, 32);
  for (int i = 0; i < pieces && !stop; ++i) {
    const float t0 = reach * float(i) / float(pieces), t1 = reach * float(i + 1) / float(pieces);
    if (t0 > early_out) break;
    AABox piece(inBox.mBox.mMin + t0 * dir, inBox.mBox.mMax + t0 * dir);
    piece.Encapsulate(AABox(inBox.mBox.mMin + t1 * dir, inBox.mBox.mMax + t1 * dir));
    piece.ExpandBy(Vec3::sReplicate(1.0e-4f) + 1.0e-5f * (piece.GetExtent() + piece.GetCenter().Abs()));
    ForCandidates(piece, visit);
    deliver();
  }
}

void SaplingBroadPhase::CastAABox(const JPH::AABoxCast& inBox, JPH::CastShapeBodyCollector& ioCollector,
                                  const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                                  const JPH::ObjectLayerFilter& inObjectLayerFilter) const {
  CastAABoxNoLock(inBox, ioCollector, inBroadPhaseLayerFilter, inObjectLayerFilter);
}

AABox SaplingBroadPhase::GetBounds() const {
  std::shared_lock lock(mutex_);
  const JPH::BodyVector& bodies = mBodyManager->GetBodies();
  AABox bounds;
  for (std::uint32_t i = 0; i < max_bodies_; ++i)
    if (in_bp_[i].load(std::memory_order_acquire)) bounds.Encapsulate(bodies[i]->GetWorldSpaceBounds());
  return bounds;
}

}  // namespace sapling_jolt
