// A JPH::BroadPhase backed by a sapling::BroadPhase (issue 30, item 4).
// Benchmark only: compiled into Jolt's library by jolt_performance_test.sh,
// never by this repository's build. docs/adapters/jolt.md explains it.
//
// Bodies live in sapling under the id 2 * body index + a flip bit (flipped
// whenever a slot's body is replaced, or turns static or back, so that a
// removal and an addition in one sapling frame never share an id). Static
// bodies are sapling statics; every other body carries Jolt's speculative
// contact distance as its sapling contact distance, so that sapling's pairs
// are a superset of the pairs Jolt's FindCollidingPairs asks for, which are
// then cut exactly as BroadPhaseQuadTree cuts them (layer filters,
// Body::sFindCollidingPairsCanCollide, the expanded-box overlap).
//
// Where sapling's update() runs: at UnlockModifications(), which
// PhysicsSystem::Update calls last, after its jobs; at FrameSync() (start of
// PhysicsSystem::Update, no job running, no body lock held) for changes
// made between steps; in Optimize(); and, should bodies have changed since (a second collision
// step in one Update), lazily at the first FindCollidingPairs() of a step,
// under the exclusive lock. Changes between updates (NotifyBodiesAABBChanged
// from the position solver's jobs, bodies added or removed) only mark the
// body dirty (an atomic flag and an append to a preallocated list), so that
// they cost almost nothing on the job threads; queries answer from sapling
// for clean bodies and test the dirty ones directly on their current bounds,
// so that they always see the bodies as they are now (Jolt's CCD casts run
// after the positions moved).
#pragma once

#include <Jolt/Jolt.h>
#include <Jolt/Physics/Collision/BroadPhase/BroadPhase.h>
#include <Jolt/Geometry/AABox.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <shared_mutex>
#include <string>
#include <vector>

namespace sapling {
class BroadPhase;
struct Pair;
}

namespace sapling_jolt {

class SaplingBroadPhase final : public JPH::BroadPhase {
 public:
  /// `algorithm`: any name sapling::BroadPhase::create() takes ("auto" by
  /// default); `threads`: sapling's Options::threads for its update().
  /// Non-static bodies are held in sapling fattened by `margin` +
  /// `margin_scale` x their largest half extent (at most 1), and stretched
  /// by their linear velocity x `lookahead` seconds: a body that stays
  /// inside its fattened box costs sapling nothing, as a body that stays
  /// inside its node costs Jolt's quadtree nothing. All 0: exact boxes,
  /// every change a sapling move.
  explicit SaplingBroadPhase(std::string algorithm = "auto", unsigned threads = 1, float margin = 0.02f,
                             float margin_scale = 0.05f, float lookahead = 0.05f);
  ~SaplingBroadPhase() override;

  void Init(JPH::BodyManager* inBodyManager, const JPH::BroadPhaseLayerInterface& inLayerInterface) override;
  void Optimize() override;
  void FrameSync() override;
  void LockModifications() override {}
  UpdateState UpdatePrepare() override { return UpdateState(); }
  void UpdateFinalize(const UpdateState&) override {}
  void UnlockModifications() override;
  AddState AddBodiesPrepare(JPH::BodyID*, int) override { return nullptr; }
  void AddBodiesFinalize(JPH::BodyID* ioBodies, int inNumber, AddState inAddState) override;
  void AddBodiesAbort(JPH::BodyID*, int, AddState) override {}
  void RemoveBodies(JPH::BodyID* ioBodies, int inNumber) override;
  void NotifyBodiesAABBChanged(JPH::BodyID* ioBodies, int inNumber, bool inTakeLock) override;
  void NotifyBodiesLayerChanged(JPH::BodyID* ioBodies, int inNumber) override;
  void FindCollidingPairs(JPH::BodyID* ioActiveBodies, int inNumActiveBodies, float inSpeculativeContactDistance,
                          const JPH::ObjectVsBroadPhaseLayerFilter& inObjectVsBroadPhaseLayerFilter,
                          const JPH::ObjectLayerPairFilter& inObjectLayerPairFilter,
                          JPH::BodyPairCollector& ioPairCollector) const override;
  void CastAABoxNoLock(const JPH::AABoxCast& inBox, JPH::CastShapeBodyCollector& ioCollector,
                       const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                       const JPH::ObjectLayerFilter& inObjectLayerFilter) const override;

  void CastRay(const JPH::RayCast& inRay, JPH::RayCastBodyCollector& ioCollector,
               const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
               const JPH::ObjectLayerFilter& inObjectLayerFilter) const override;
  void CollideAABox(const JPH::AABox& inBox, JPH::CollideShapeBodyCollector& ioCollector,
                    const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                    const JPH::ObjectLayerFilter& inObjectLayerFilter) const override;
  void CollideSphere(JPH::Vec3Arg inCenter, float inRadius, JPH::CollideShapeBodyCollector& ioCollector,
                     const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                     const JPH::ObjectLayerFilter& inObjectLayerFilter) const override;
  void CollidePoint(JPH::Vec3Arg inPoint, JPH::CollideShapeBodyCollector& ioCollector,
                    const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                    const JPH::ObjectLayerFilter& inObjectLayerFilter) const override;
  void CollideOrientedBox(const JPH::OrientedBox& inBox, JPH::CollideShapeBodyCollector& ioCollector,
                          const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                          const JPH::ObjectLayerFilter& inObjectLayerFilter) const override;
  void CastAABox(const JPH::AABoxCast& inBox, JPH::CastShapeBodyCollector& ioCollector,
                 const JPH::BroadPhaseLayerFilter& inBroadPhaseLayerFilter,
                 const JPH::ObjectLayerFilter& inObjectLayerFilter) const override;
  JPH::AABox GetBounds() const override;

  /// The sapling algorithm running (after auto's choice).
  std::string algorithm_name() const;
  /// Number of sapling updates so far, and bodies parked for an invalid box.
  std::uint64_t updates() const { return updates_; }

 private:
  struct Slot {
    std::uint32_t id = 0;       // sapling id: 2 * index + flip bit
    bool live = false;          // in sapling under `id` since the last update
    bool is_static = false;     // added to sapling as a static
    JPH::BodyID body;           // the body it was added for
    JPH::AABox box;             // the box sapling holds (fattened, but for statics)
  };
  static constexpr std::uint32_t kNone = 0xffffffffu;

  void MarkDirty(std::uint32_t index) const;
  JPH::AABox Fatten(const JPH::Body& body, const JPH::AABox& box) const;
  // Applies every change since the last update to sapling (exclusive lock held).
  void Flush(float distance) const;
  void UpdateNeighbours(std::span<const sapling::Pair> created, std::span<const sapling::Pair> deleted) const;
  // Calls `visit(index)` for every body in the broad phase whose box may
  // overlap `box`: sapling's answer for clean bodies, and every dirty body;
  // `visit` tests exactly and returns false to stop.
  template <class Visit>
  void ForCandidates(const JPH::AABox& box, Visit&& visit) const;
  // The Collide* queries: every body passing the layer filters whose box
  // `overlaps` (Jolt's own test) among the candidates of `region` goes to
  // the collector, until it asks to stop.
  template <class Overlaps>
  void CollideBodies(const JPH::AABox& region, JPH::CollideShapeBodyCollector& collector,
                     const JPH::BroadPhaseLayerFilter& bp, const JPH::ObjectLayerFilter& ol,
                     Overlaps&& overlaps) const;
  bool LayerOk(const JPH::Body& body, const JPH::BroadPhaseLayerFilter& bp,
               const JPH::ObjectLayerFilter& ol) const;

  std::string algorithm_;
  unsigned threads_;
  float margin_, margin_scale_, lookahead_;
  std::unique_ptr<sapling::BroadPhase> bp_;
  std::uint32_t max_bodies_ = 0;

  // Written only under the exclusive lock (Flush), read under the shared one.
  mutable std::shared_mutex mutex_;
  mutable std::vector<Slot> slots_;
  mutable std::vector<std::vector<std::uint32_t>> lists_;  // each non-static slot's sapling neighbours, sorted
  mutable std::atomic<float> distance_{0.02f};      // contact distance the sapling boxes carry (Jolt's default)
  mutable std::uint64_t updates_ = 0;

  // Changed since the last update: flags and the list of their indices.
  std::unique_ptr<std::atomic<std::uint8_t>[]> in_bp_;
  mutable std::unique_ptr<std::atomic<std::uint8_t>[]> dirty_;
  mutable std::unique_ptr<std::atomic<std::uint32_t>[]> dirty_list_;
  mutable std::atomic<std::uint32_t> dirty_count_{0};
};

}  // namespace sapling_jolt
