// Correctness check of sapling_jolt::SaplingBroadPhase against Jolt's own
// BroadPhaseBruteForce (exact: it tests every body's current bounds) and
// BroadPhaseQuadTree, on the same bodies (one BodyManager shared by all):
// random boxes (static, kinematic and dynamic, two object layers) moved,
// removed and added again over many rounds; every round compares
//   - FindCollidingPairs over all active bodies (the exact set of (active,
//     other) pairs, through the layer filters and the speculative distance),
//   - CollideAABox, CollideSphere, CollidePoint, CollideOrientedBox (body
//     sets), CastRay and CastAABox (body and fraction), with and without a
//     layer filter,
// both before FrameSync (bodies moved since the last update: the adapter's
// dirty path) and after it. Pairs must equal both Jolt broad phases';
// query answers must equal brute force's (bodies and fractions) and be a
// subset of the quadtree's (whose leaves keep fattened bounds, so it answers
// a superset). Exits 1 on a difference.
//
//   jolt_check [rounds=60] [bodies=3000] [seed=1]
#include "sapling_broad_phase.h"

#include <Jolt/Core/Factory.h>
#include <Jolt/Geometry/OrientedBox.h>
#include <Jolt/Jolt.h>
#include <Jolt/Physics/Body/Body.h>
#include <Jolt/Physics/Body/BodyCreationSettings.h>
#include <Jolt/Physics/Body/BodyManager.h>
#include <Jolt/Physics/Body/BodyPair.h>
#include <Jolt/Physics/Collision/AABoxCast.h>
#include <Jolt/Physics/Collision/BroadPhase/BroadPhaseBruteForce.h>
#include <Jolt/Physics/Collision/BroadPhase/BroadPhaseQuadTree.h>
#include <Jolt/Physics/Collision/CastResult.h>
#include <Jolt/Physics/Collision/CollisionCollectorImpl.h>
#include <Jolt/Physics/Collision/RayCast.h>
#include <Jolt/Physics/Collision/Shape/BoxShape.h>
#include <Jolt/RegisterTypes.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <tuple>
#include <type_traits>
#include <vector>

using namespace JPH;

namespace {

constexpr ObjectLayer kStatic = 0, kMoving = 1;

class Layers final : public BroadPhaseLayerInterface {
 public:
  uint GetNumBroadPhaseLayers() const override { return 2; }
  BroadPhaseLayer GetBroadPhaseLayer(ObjectLayer l) const override { return BroadPhaseLayer(BroadPhaseLayer::Type(l)); }
#if defined(JPH_EXTERNAL_PROFILE) || defined(JPH_PROFILE_ENABLED)
  const char* GetBroadPhaseLayerName(BroadPhaseLayer l) const override {
    return l == BroadPhaseLayer(0) ? "static" : "moving";
  }
#endif
};
class ObjectVsBp final : public ObjectVsBroadPhaseLayerFilter {
 public:
  bool ShouldCollide(ObjectLayer a, BroadPhaseLayer b) const override {
    return a == kMoving || b == BroadPhaseLayer(kMoving);
  }
};
class ObjectPairs final : public ObjectLayerPairFilter {
 public:
  bool ShouldCollide(ObjectLayer a, ObjectLayer b) const override { return a == kMoving || b == kMoving; }
};
class OnlyMoving final : public ObjectLayerFilter {
 public:
  bool ShouldCollide(ObjectLayer l) const override { return l == kMoving; }
};

class Pairs final : public BodyPairCollector {
 public:
  void AddHit(const BodyPair& p) override {
    pairs.emplace_back(p.mBodyA.GetIndexAndSequenceNumber(), p.mBodyB.GetIndexAndSequenceNumber());
  }
  std::vector<std::pair<uint32, uint32>> pairs;
};

int failures = 0;

template <class T>
bool same(const char* what, int round, std::vector<T> a, std::vector<T> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  if (a == b) return true;
  std::printf("round %d: %s differ: quadtree %zu, sapling %zu\n", round, what, a.size(), b.size());
  ++failures;
  return false;
}

// Query answers: sapling's ([2]) equal brute force's ([1]) and are among
// the quadtree's ([0]) bodies.
template <class T>
void check(const char* what, int round, std::vector<T> (&r)[3]) {
  if (!same(what, round, r[1], r[2])) return;
  auto id = [](const T& t) {
    if constexpr (std::is_same_v<T, uint32>)
      return t;
    else
      return t.first;
  };
  std::vector<uint32> q, s;
  for (const T& t : r[0]) q.push_back(id(t));
  for (const T& t : r[2]) s.push_back(id(t));
  std::sort(q.begin(), q.end());
  std::sort(s.begin(), s.end());
  if (!std::includes(q.begin(), q.end(), s.begin(), s.end())) {
    std::printf("round %d: %s: sapling reports a body the quadtree does not\n", round, what);
    ++failures;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 60;
  const int count = argc > 2 ? std::atoi(argv[2]) : 3000;
  const unsigned seed = argc > 3 ? unsigned(std::atoi(argv[3])) : 1u;

  RegisterDefaultAllocator();
  Factory::sInstance = new Factory();
  RegisterTypes();

  Layers layers;
  ObjectVsBp object_vs_bp;
  ObjectPairs object_pairs;
  BodyManager manager;
  manager.Init(count + 16, 0, layers);
  BroadPhaseQuadTree quadtree;
  quadtree.Init(&manager, layers);
  BroadPhaseBruteForce brute;
  brute.Init(&manager, layers);
  sapling_jolt::SaplingBroadPhase sapling_bp;
  sapling_bp.Init(&manager, layers);
  BroadPhase* both[3] = {&quadtree, &brute, &sapling_bp};  // [2] is sapling

  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> coord(-40.0f, 40.0f), size(0.05f, 2.0f), unit(0.0f, 1.0f);
  auto random_rotation = [&] {
    return Quat::sRotation(Vec3(unit(rng) - 0.5f, unit(rng) - 0.5f, unit(rng) - 0.5f).Normalized(), 6.28f * unit(rng));
  };

  std::vector<BodyID> ids;
  for (int i = 0; i < count; ++i) {
    const float r = unit(rng);
    const EMotionType motion = r < 0.2f   ? EMotionType::Static
                               : r < 0.3f ? EMotionType::Kinematic
                                          : EMotionType::Dynamic;
    BodyCreationSettings settings(new BoxShape(Vec3(size(rng), size(rng), size(rng)), 0.0f),
                                  RVec3(coord(rng), coord(rng), coord(rng)), random_rotation(), motion,
                                  motion == EMotionType::Static ? kStatic : kMoving);
    Body* body = manager.AllocateBody(settings);
    if (!manager.AddBody(body)) return 2;
    ids.push_back(body->GetID());
  }
  auto add = [&](std::vector<BodyID> batch) {
    for (BroadPhase* bp : both) {
      std::vector<BodyID> copy = batch;
      BroadPhase::AddState s = bp->AddBodiesPrepare(copy.data(), int(copy.size()));
      bp->AddBodiesFinalize(copy.data(), int(copy.size()), s);
    }
  };
  add(ids);
  for (BroadPhase* bp : both) bp->Optimize();
  std::vector<BodyID> movers;
  for (BodyID id : ids)
    if (!manager.GetBody(id).IsStatic()) movers.push_back(id);
  manager.ActivateBodies(movers.data(), int(movers.size()));

  std::vector<BodyID> removed;
  OnlyMoving only_moving;
  const BroadPhaseLayerFilter any_bp;
  const ObjectLayerFilter any_object;

  auto compare_queries = [&](int round, const char* when) {
    for (int q = 0; q < 40; ++q) {
      const ObjectLayerFilter& filter = q % 4 == 3 ? static_cast<const ObjectLayerFilter&>(only_moving) : any_object;
      const Vec3 c(coord(rng), coord(rng), coord(rng));
      const Vec3 h(3.0f * size(rng), 3.0f * size(rng), 3.0f * size(rng));
      std::vector<uint32> hits[3];
      auto ids_of = [](const AllHitCollisionCollector<CollideShapeBodyCollector>& col) {
        std::vector<uint32> v;
        for (BodyID b : col.mHits) v.push_back(b.GetIndexAndSequenceNumber());
        return v;
      };
      for (int k = 0; k < 3; ++k) {
        AllHitCollisionCollector<CollideShapeBodyCollector> col;
        both[k]->CollideAABox(AABox(c - h, c + h), col, any_bp, filter);
        hits[k] = ids_of(col);
      }
      check("CollideAABox", round, hits);
      for (int k = 0; k < 3; ++k) {
        AllHitCollisionCollector<CollideShapeBodyCollector> col;
        both[k]->CollideSphere(c, h.GetX(), col, any_bp, filter);
        hits[k] = ids_of(col);
      }
      check("CollideSphere", round, hits);
      for (int k = 0; k < 3; ++k) {
        AllHitCollisionCollector<CollideShapeBodyCollector> col;
        both[k]->CollidePoint(c, col, any_bp, filter);
        hits[k] = ids_of(col);
      }
      check("CollidePoint", round, hits);
      const OrientedBox obox(Mat44::sRotationTranslation(random_rotation(), c), h);
      for (int k = 0; k < 3; ++k) {
        AllHitCollisionCollector<CollideShapeBodyCollector> col;
        both[k]->CollideOrientedBox(obox, col, any_bp, filter);
        hits[k] = ids_of(col);
      }
      check("CollideOrientedBox", round, hits);

      const Vec3 d = Vec3(coord(rng), coord(rng), coord(rng)) * (q % 5 == 0 ? 0.05f : 1.5f);
      std::vector<std::pair<uint32, float>> cast[3];
      for (int k = 0; k < 3; ++k) {
        AllHitCollisionCollector<RayCastBodyCollector> col;
        both[k]->CastRay(RayCast{c, d}, col, any_bp, filter);
        for (const BroadPhaseCastResult& r : col.mHits)
          cast[k].emplace_back(r.mBodyID.GetIndexAndSequenceNumber(), r.mFraction);
      }
      check("CastRay", round, cast);
      for (int k = 0; k < 3; ++k) {
        cast[k].clear();
        AllHitCollisionCollector<CastShapeBodyCollector> col;
        both[k]->CastAABox(AABoxCast{AABox(c - 0.3f * h, c + 0.3f * h), d}, col, any_bp, filter);
        for (const BroadPhaseCastResult& r : col.mHits)
          cast[k].emplace_back(r.mBodyID.GetIndexAndSequenceNumber(), r.mFraction);
      }
      check("CastAABox", round, cast);
      // The closest hit only: the same body at the same fraction.
      float closest[3];
      for (int k = 0; k < 3; ++k) {
        ClosestHitCollisionCollector<RayCastBodyCollector> col;
        both[k]->CastRay(RayCast{c, d}, col, any_bp, filter);
        closest[k] = col.HadHit() ? col.mHit.mFraction : NAN;
      }
      // A hit at a fraction <= 0 (the origin inside the box) ends a closest-hit
      // query in every Jolt broad phase, whichever such box comes first.
      const bool agree = closest[1] == closest[2] || (std::isnan(closest[1]) && std::isnan(closest[2])) ||
                         (closest[1] <= 0.0f && closest[2] <= 0.0f);
      if (!agree) {
        std::printf("round %d (%s): closest ray hit differs: brute force %g, sapling %g\n", round, when, closest[1],
                    closest[2]);
        ++failures;
      }
    }
  };

  std::size_t total_pairs = 0;
  for (int round = 0; round < rounds; ++round) {
    // Move about a third of the movers, some far.
    std::vector<BodyID> moved;
    for (BodyID id : movers) {
      if (std::find(removed.begin(), removed.end(), id) != removed.end() || unit(rng) > 0.35f) continue;
      Body& body = manager.GetBody(id);
      const float step = unit(rng) < 0.05f ? 30.0f : 0.5f;
      RVec3 p = body.GetPosition() + Vec3(unit(rng) - 0.5f, unit(rng) - 0.5f, unit(rng) - 0.5f) * step;
      body.SetPositionAndRotationInternal(p, unit(rng) < 0.3f ? random_rotation() : body.GetRotation());
      moved.push_back(id);
    }
    for (BroadPhase* bp : both) {
      std::vector<BodyID> copy = moved;
      bp->NotifyBodiesAABBChanged(copy.data(), int(copy.size()), true);
    }
    // Take some bodies out, bring earlier ones back.
    if (round % 3 == 1) {
      std::vector<BodyID> back = removed;
      removed.clear();
      if (!back.empty()) add(back);
      for (int i = 0; i < 40; ++i) {
        const BodyID id = ids[std::size_t(unit(rng) * float(ids.size() - 1))];
        if (std::find(removed.begin(), removed.end(), id) == removed.end()) removed.push_back(id);
      }
      for (BroadPhase* bp : both) {
        std::vector<BodyID> copy = removed;
        bp->RemoveBodies(copy.data(), int(copy.size()));
      }
    }
    compare_queries(round, "before the update");

    for (BroadPhase* bp : both) {
      bp->FrameSync();
      bp->LockModifications();
      BroadPhase::UpdateState s = bp->UpdatePrepare();
      bp->UpdateFinalize(s);
      bp->UnlockModifications();
    }
    // Pairs of every active body still in the broad phase.
    std::vector<BodyID> active;
    for (BodyID id : movers)
      if (std::find(removed.begin(), removed.end(), id) == removed.end()) active.push_back(id);
    std::vector<std::pair<uint32, uint32>> pairs[3];
    for (int k = 0; k < 3; ++k) {
      Pairs collector;
      for (std::size_t i = 0; i < active.size(); i += 16) {  // in batches, as PhysicsSystem does
        std::vector<BodyID> batch(active.begin() + long(i), active.begin() + long(std::min(active.size(), i + 16)));
        both[k]->FindCollidingPairs(batch.data(), int(batch.size()), 0.02f + 0.01f * float(round % 2), object_vs_bp,
                                    object_pairs, collector);
      }
      pairs[k] = collector.pairs;
    }
    total_pairs += pairs[0].size();
    same("FindCollidingPairs (quadtree, sapling)", round, pairs[0], pairs[2]);
    same("FindCollidingPairs (brute force, sapling)", round, pairs[1], pairs[2]);
    compare_queries(round, "after the update");
    if (failures > 20) break;
  }
  std::printf("jolt_check: %d rounds, %d bodies, %zu pairs compared, sapling algorithm %s: %s\n", rounds, count,
              total_pairs, sapling_bp.algorithm_name().c_str(), failures ? "FAILED" : "ok");
  UnregisterTypes();
  delete Factory::sInstance;
  Factory::sInstance = nullptr;
  return failures ? 1 : 0;
}
