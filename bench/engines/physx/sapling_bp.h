// sapling as PhysX 5's CPU broad phase: a physx::Bp::BroadPhase (PhysX's
// internal interface, physx/source/lowlevelaabb/include/BpBroadPhase.h) on a
// sapling::BroadPhase, selected by one branch in PhysX's factory
// Bp::BroadPhase::create (physx_factory.patch) when SAPLING_PHYSX_BP is set.
// Benchmark only (issue 30, item 4); compiled against a PhysX source tree
// exported outside the repository by physx_engine.sh. Design and
// limitations: docs/adapters/physx.md.
//
// SAPLING_PHYSX_BP (read at each Bp::BroadPhase::create):
//   unset            PhysX's own broad phase, untouched
//   <algorithm>      sapling, e.g. "auto", "sap", "multi-sap:mode=witness"
//   native           PhysX's own broad phase of the requested type, timed
//   check:<algorithm>  sapling reports the pairs; PhysX's ABP runs beside it
//                    on the same update data and every frame's pair set is
//                    compared with ABP's (and, every SAPLING_PHYSX_BRUTE
//                    frames (default 25), with an exact all-pairs test)
// SAPLING_PHYSX_STATICS=static: PhysX's static objects in sapling's static
// set (Motion::kStatic) rather than as dynamics that the filter keeps apart
// (the default, faster on the measured scenes: docs/adapters/physx.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "BpBroadPhase.h"
#include "sapling/broad_phase.hpp"

namespace sapling_physx {

// What the driver reads after each step: the broad phase's update() time and
// the checks' counters, summed over every broad phase this factory made.
struct Stats {
  double update_seconds = 0;   // time in Bp::BroadPhase::update (thread CPU or wall, see set_clock)
  double staging_seconds = 0;  // sapling: of which reading PhysX's lists and staging the batches
  double sapling_seconds = 0;  // sapling: of which sapling::BroadPhase::update()
  std::uint64_t updates = 0;   // update() calls
  std::uint64_t created = 0;   // pairs reported created / deleted to PhysX
  std::uint64_t deleted = 0;
  std::uint64_t pairs = 0;     // pairs current after the last update (sapling and check modes)
  // check mode only
  std::uint64_t checked_frames = 0;
  std::uint64_t mismatched_frames = 0;  // frames whose pair set differs from ABP's
  std::uint64_t brute_frames = 0;
  std::uint64_t brute_mismatches = 0;   // frames whose pair set differs from the exact all-pairs set
  std::uint64_t bad_deltas = 0;         // created pair already current, deleted pair not current
  std::uint64_t refused = 0;            // sapling calls refused (a Status not ok)
};
Stats& stats();
void reset_stats();
// true: CLOCK_THREAD_CPUTIME_ID (default), false: steady_clock.
void set_thread_clock(bool thread_cpu);
double now_seconds();

// PhysX's rule for one pair, as ABP applies it (BpFiltering.h groupFiltering
// and the static/kinematic/dynamic managers): different groups and the
// filter LUT of the two types (group & 7).
inline bool physx_may_pair(physx::Bp::FilterGroup::Enum g0, physx::Bp::FilterGroup::Enum g1, const bool* lut) {
  return physx::Bp::groupFiltering(g0, g1, lut);
}

// The box PhysX's broad phases test: the bounds grown by the contact
// distance in float arithmetic (ABP: V4Sub / V4Add of the same floats).
sapling::Box3 fattened(const physx::PxBounds3& b, float distance);

class SaplingBroadPhase final : public physx::Bp::BroadPhase {
 public:
  // `reported` is what getType() answers (the type the scene asked for).
  SaplingBroadPhase(std::unique_ptr<sapling::BroadPhase> bp, physx::PxBroadPhaseType::Enum reported);
  ~SaplingBroadPhase() override;

  physx::PxBroadPhaseType::Enum getType() const override { return reported_; }
  void release() override;
  void update(physx::PxcScratchAllocator* scratch, const physx::Bp::BroadPhaseUpdateData& data,
              physx::PxBaseTask* continuation) override;
  void preBroadPhase(const physx::Bp::BroadPhaseUpdateData&) override {}
  void fetchBroadPhaseResults() override {}
  const physx::Bp::BroadPhasePair* getCreatedPairs(physx::PxU32& n) const override;
  const physx::Bp::BroadPhasePair* getDeletedPairs(physx::PxU32& n) const override;
  void freeBuffers() override;
  void shiftOrigin(const physx::PxVec3& shift, const physx::PxBounds3* bounds, const physx::PxReal* distances) override;
#if PX_CHECKED
  bool isValid(const physx::Bp::BroadPhaseUpdateData& data) const override;
#endif

  const sapling::BroadPhase& sapling() const { return *bp_; }
  bool live(physx::PxU32 handle) const { return handle < live_.size() && live_[handle]; }

 private:
  void grow(std::size_t capacity);
  void fail(const sapling::Status& s, const char* what);
  void add_batch(const std::vector<sapling::Id>& ids, const std::vector<sapling::Box3>& boxes,
                 const std::vector<sapling::Filter>& filters, sapling::Motion motion);

  std::unique_ptr<sapling::BroadPhase> bp_;
  physx::PxBroadPhaseType::Enum reported_;
  // per handle
  std::vector<std::uint8_t> live_;
  std::vector<physx::Bp::FilterGroup::Enum> groups_;  // the group at creation (immutable while live)
  std::vector<std::uint32_t> op_stamp_;               // last frame in which the handle was created / updated / removed
  std::uint32_t frame_ = 0;
  bool refresh_ = false;
  bool statics_apart_ = false;  // PhysX's statics as sapling statics (default: dynamic, kept apart by the filter alone)  // shiftOrigin(): every live box is re-read at the next update
  // this frame's batches (kept to reuse their memory)
  std::vector<sapling::Id> ids_, static_ids_;
  std::vector<sapling::Box3> boxes_, static_boxes_;
  std::vector<sapling::Filter> filters_, static_filters_;
  std::vector<physx::Bp::BroadPhasePair> created_, deleted_;
};

}  // namespace sapling_physx
