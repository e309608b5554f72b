// Peer: PhysX 5's standalone CPU broad phases (PxBroadPhase, PxCreateBroadPhase):
// ABP ("automatic box pruning"), MBP ("multi box pruning", regions given by
// the user) and SAP (three-axis sweep and prune). Compiled only when CMake
// is given a PhysX source tree (SAPLING_PHYSX_ROOT; how to fetch and build
// it: shared/peers/README.md). Driven as that README says the issues'
// figures were measured:
// - one thread: update(data, nullptr), then fetchResults();
// - bounds in an array of ours indexed by handle (the scenario's id), 6
//   floats min then max like Box3, one spare entry (PhysX may read past the
//   last box); per frame the moved and added boxes are written and their
//   handles passed as updated and created, the removed ones as removed;
// - contact distances 0 (no fattening), every object in its own dynamic
//   filter group so that every overlapping pair is reported;
// - MBP's regions: a grid of kRegionsPerAxis^2 cells over the scene's world
//   bounds on x and y (the scenes' worlds are cubes; scenes without world
//   bounds are not run).
// PhysX reports created and lost pairs but not the pairs of a removed
// object. The timed frame is PhysX's update and fetch and a copy of the
// delta; keeping the pair set (applying the delta, dropping the pairs of
// removed objects) is done outside the timed part, which favours PhysX.
// ABP encodes x losslessly and keeps y, z as floats: exact pairs. MBP and
// SAP snap integer-encoded bounds outward: their pairs are a superset.
#include <PxBroadPhase.h>
#include <foundation/PxAllocatorCallback.h>
#include <foundation/PxErrorCallback.h>
#include <foundation/PxFoundation.h>
#include <foundation/PxPhysicsVersion.h>

#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "harness/contender.hpp"
#include "harness/peers.hpp"

namespace sapling::bench {
namespace {

using physx::PxBpIndex;
using physx::PxBroadPhaseType;

class Allocator final : public physx::PxAllocatorCallback {
 public:
  void* allocate(size_t size, const char*, const char*, int) override {
    void* p = nullptr;
    return posix_memalign(&p, 16, size == 0 ? 16 : size) == 0 ? p : nullptr;
  }
  void deallocate(void* ptr) override { std::free(ptr); }
};

class ErrorReporter final : public physx::PxErrorCallback {
 public:
  void reportError(physx::PxErrorCode::Enum code, const char* message, const char* file, int line) override {
    std::fprintf(stderr, "PhysX error %d: %s (%s:%d)\n", int(code), message, file, line);
  }
};

// PhysX's foundation, created once for the process.
void ensure_foundation() {
  static Allocator allocator;
  static ErrorReporter errors;
  static physx::PxFoundation* foundation = PxCreateFoundation(PX_PHYSICS_VERSION, allocator, errors);
  if (foundation == nullptr) throw std::runtime_error("PxCreateFoundation failed");
}

constexpr int kRegionsPerAxis = 8;

class PhysxContender final : public Contender {
 public:
  explicit PhysxContender(PxBroadPhaseType::Enum type) : type_(type) {}
  ~PhysxContender() override { release(); }

  std::string name() const override {
    return type_ == PxBroadPhaseType::eABP ? "physx-abp" : type_ == PxBroadPhaseType::eMBP ? "physx-mbp" : "physx-sap";
  }
  Exactness exactness() const override {
    return type_ == PxBroadPhaseType::eABP ? Exactness::kExact : Exactness::kSuperset;
  }
  std::string note() const override {
    std::string n = "PxBroadPhase, one thread, distances 0; pair-set upkeep untimed";
    if (type_ == PxBroadPhaseType::eMBP) n += "; " + std::to_string(kRegionsPerAxis * kRegionsPerAxis) + " regions";
    if (type_ != PxBroadPhaseType::eABP) n += "; bounds snapped outward";
    return n;
  }
  bool supports(const SceneShape& shape, std::string* why) const override {
    if (shape.bipartite()) {
      if (why) *why = "complete queries only";
      return false;
    }
    if (type_ == PxBroadPhaseType::eMBP && !shape.world) {
      if (why) *why = "MBP needs regions: the scene has no world bounds";
      return false;
    }
    return true;
  }

  void reset(const SceneShape& shape) override {
    release();
    ensure_foundation();
    broad_phase_ = physx::PxCreateBroadPhase(physx::PxBroadPhaseDesc(type_));
    if (broad_phase_ == nullptr) throw std::runtime_error("PxCreateBroadPhase failed");
    if (type_ == PxBroadPhaseType::eMBP) add_regions(*shape.world);
    bounds_.clear();
    groups_.clear();
    distances_.clear();
    pairs_.clear();
    known_.clear();
    pending_.clear();
  }

  void frame(const Scenario& s) override {
    const std::span<const Box3> boxes = s.boxes();
    const std::size_t capacity = s.capacity();
    if (bounds_.size() < capacity + 1) grow(capacity + 1);
    for (const Id id : s.moved()) write(id, boxes[id]);
    for (const Id id : s.added()) write(id, boxes[id]);
    const physx::PxBroadPhaseUpdateData data(s.added().data(), count(s.added()), s.moved().data(), count(s.moved()),
                                             s.removed().data(), count(s.removed()), bounds_.data(), groups_.data(),
                                             distances_.data(), static_cast<physx::PxU32>(capacity));
    broad_phase_->update(data, nullptr);
    physx::PxBroadPhaseResults results;
    broad_phase_->fetchResults(results);
    Delta& d = pending_.emplace_back();
    d.removed.assign(s.removed().begin(), s.removed().end());
    d.deleted.assign(results.mDeletedPairs, results.mDeletedPairs + results.mNbDeletedPairs);
    d.created.assign(results.mCreatedPairs, results.mCreatedPairs + results.mNbCreatedPairs);
  }

  void pairs(std::vector<Pair>& out) override {
    apply_pending();
    out = pairs_;
    detail::sort_pairs(out);
  }
  std::size_t pair_count() override {
    apply_pending();
    return pairs_.size();
  }

 private:
  struct Delta {
    std::vector<Id> removed;
    std::vector<physx::PxBroadPhasePair> deleted, created;
  };

  static physx::PxU32 count(std::span<const Id> ids) { return static_cast<physx::PxU32>(ids.size()); }

  void grow(std::size_t size) {
    const std::size_t old = groups_.size();
    bounds_.resize(size);
    distances_.resize(size, 0.0f);
    groups_.resize(size);
    for (std::size_t id = old; id < size; ++id) {
      groups_[id] = physx::PxGetBroadPhaseDynamicFilterGroup(static_cast<physx::PxU32>(id));
    }
  }

  void write(Id id, const Box3& b) {
    bounds_[id] =
        physx::PxBounds3(physx::PxVec3(b.min[0], b.min[1], b.min[2]), physx::PxVec3(b.max[0], b.max[1], b.max[2]));
  }

  // A kRegionsPerAxis^2 grid over the world on x and y (every box stays in the world).
  void add_regions(const Box3& world) {
    physx::PxBroadPhaseRegions* regions = broad_phase_->getRegions();
    if (regions == nullptr) throw std::runtime_error("PhysX MBP without regions");
    const float dx = (world.max[0] - world.min[0]) / kRegionsPerAxis;
    const float dy = (world.max[1] - world.min[1]) / kRegionsPerAxis;
    for (int i = 0; i < kRegionsPerAxis; ++i) {
      for (int j = 0; j < kRegionsPerAxis; ++j) {
        physx::PxBroadPhaseRegion region;
        region.mBounds =
            physx::PxBounds3(physx::PxVec3(world.min[0] + dx * i, world.min[1] + dy * j, world.min[2]),
                             physx::PxVec3(world.min[0] + dx * (i + 1), world.min[1] + dy * (j + 1), world.max[2]));
        region.mUserData = nullptr;
        regions->addRegion(region, false, nullptr, nullptr);
      }
    }
  }

  void apply_pending() {
    for (const Delta& d : pending_) {
      for (const physx::PxBroadPhasePair& p : d.deleted) known_.erase(pair_key(make_pair(p.mID0, p.mID1)));
      if (!d.removed.empty()) {
        const std::unordered_set<Id> gone(d.removed.begin(), d.removed.end());
        for (auto it = known_.begin(); it != known_.end();) {
          const bool drop = gone.count(static_cast<Id>(*it >> 32)) != 0 || gone.count(static_cast<Id>(*it)) != 0;
          it = drop ? known_.erase(it) : std::next(it);
        }
      }
      for (const physx::PxBroadPhasePair& p : d.created) known_.insert(pair_key(make_pair(p.mID0, p.mID1)));
    }
    if (!pending_.empty()) {
      pairs_.clear();
      for (const std::uint64_t key : known_) pairs_.push_back(Pair{static_cast<Id>(key >> 32), static_cast<Id>(key)});
    }
    pending_.clear();
  }

  void release() {
    if (broad_phase_ != nullptr) broad_phase_->release();
    broad_phase_ = nullptr;
  }

  PxBroadPhaseType::Enum type_;
  physx::PxBroadPhase* broad_phase_ = nullptr;
  std::vector<physx::PxBounds3> bounds_;  // by handle (scenario id), one spare
  std::vector<physx::PxBpFilterGroup> groups_;
  std::vector<float> distances_;
  std::vector<Delta> pending_;  // frames whose delta is not yet in pairs_
  std::unordered_set<std::uint64_t> known_;
  std::vector<Pair> pairs_;
};

}  // namespace

std::string physx_version() {
  return std::to_string(PX_PHYSICS_VERSION_MAJOR) + "." + std::to_string(PX_PHYSICS_VERSION_MINOR) + "." +
         std::to_string(PX_PHYSICS_VERSION_BUGFIX);
}

void add_physx_contenders(std::vector<ContenderInfo>& out) {
  const auto add = [&](const char* name, const char* what, PxBroadPhaseType::Enum type) {
    out.push_back(
        {name, "PhysX", what, Query::kComplete, [type](const ContenderOptions&) -> std::unique_ptr<Contender> {
           return std::make_unique<PhysxContender>(type);
         }});
  };
  add("physx-abp", "PhysX 5 PxBroadPhase eABP (automatic box pruning), one thread", PxBroadPhaseType::eABP);
  add("physx-mbp", "PhysX 5 PxBroadPhase eMBP (multi box pruning, 8x8 regions), one thread; superset",
      PxBroadPhaseType::eMBP);
  add("physx-sap", "PhysX 5 PxBroadPhase eSAP (three-axis sweep and prune), one thread; superset",
      PxBroadPhaseType::eSAP);
}

}  // namespace sapling::bench
