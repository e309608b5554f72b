// sapling as PhysX 5's CPU broad phase (see sapling_bp.h and
// docs/adapters/physx.md). Written against PhysX's interface
// (BpBroadPhase.h, BpBroadPhaseUpdate.h, BpFiltering.h); no PhysX code here.
#include "sapling_bp.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "foundation/PxAllocator.h"

using physx::PxBounds3;
using physx::PxBroadPhaseType;
using physx::PxU32;
using physx::PxU64;
namespace Bp = physx::Bp;

namespace sapling_physx {

namespace {
Stats g_stats;
bool g_thread_clock = true;
}  // namespace

Stats& stats() { return g_stats; }
void reset_stats() { g_stats = Stats{}; }
void set_thread_clock(bool thread_cpu) { g_thread_clock = thread_cpu; }
double now_seconds() {
  if (g_thread_clock) {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

sapling::Box3 fattened(const PxBounds3& b, float d) {
  // Same float operations as ABP/MBP (bounds - distance, bounds + distance).
  return sapling::Box3{{b.minimum.x - d, b.minimum.y - d, b.minimum.z - d},
                       {b.maximum.x + d, b.maximum.y + d, b.maximum.z + d}};
}

namespace {

constexpr int kTypes = Bp::FilterType::COUNT;

// PhysX's pair rule as a sapling filter, for the part that depends on the
// objects' types: category = the type's bit, mask = the types the LUT pairs
// it with. (The LUT is symmetric, so sapling's two-sided test is the LUT's.)
// Equal groups (shapes of one actor, one aggregate) are dropped from the
// deltas instead: a sapling filter cannot say "not the same id".
sapling::Filter type_filter(Bp::FilterGroup::Enum group, const bool* lut) {
  const int type = int(group & BP_FILTERING_TYPE_MASK);
  std::uint32_t mask = 0;
  for (int j = 0; j < kTypes; ++j) {
    if (lut[type * kTypes + j]) mask |= 1u << j;
  }
  return sapling::Filter{1u << type, mask};
}

std::uint64_t key(PxU32 a, PxU32 b) { return a < b ? (std::uint64_t(a) << 32) | b : (std::uint64_t(b) << 32) | a; }

}  // namespace

SaplingBroadPhase::SaplingBroadPhase(std::unique_ptr<sapling::BroadPhase> bp, PxBroadPhaseType::Enum reported)
    : bp_(std::move(bp)), reported_(reported) {
  // PhysX's statics go in as sapling dynamics by default, the filter alone
  // keeping them from pairing with each other (their type's mask lacks the
  // STATIC bit): on the deep pile this is 1.7x faster than sapling's
  // static objects (Motion::kStatic), whose per-frame pass over the
  // dynamics that overlap a static (every box on the ground) costs more than
  // the resting objects of the algorithms' own structures.
  // SAPLING_PHYSX_STATICS=static puts them in sapling's static set instead.
  const char* e = std::getenv("SAPLING_PHYSX_STATICS");
  statics_apart_ = e != nullptr && std::strcmp(e, "static") == 0;
}

SaplingBroadPhase::~SaplingBroadPhase() = default;

void SaplingBroadPhase::release() { PX_DELETE_THIS; }

void SaplingBroadPhase::grow(std::size_t capacity) {
  if (live_.size() >= capacity) return;
  live_.resize(capacity, 0);
  groups_.resize(capacity, Bp::FilterGroup::eINVALID);
  op_stamp_.resize(capacity, 0);
}

void SaplingBroadPhase::fail(const sapling::Status& s, const char* what) {
  ++g_stats.refused;
  std::fprintf(stderr, "sapling_bp: %s refused: %s\n", what, s.message().c_str());
}

void SaplingBroadPhase::add_batch(const std::vector<sapling::Id>& ids, const std::vector<sapling::Box3>& boxes,
                                  const std::vector<sapling::Filter>& filters, sapling::Motion motion) {
  if (ids.empty() || bp_->add(ids, boxes, filters, motion)) return;
  // One by one: an object whose box is refused (NaN, min > max) stays out of
  // sapling, and its later moves and removal are skipped.
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (const sapling::Status s = bp_->add(ids[i], boxes[i], filters[i], motion); !s) {
      fail(s, "add");
      live_[ids[i]] = 0;
    }
  }
}

void SaplingBroadPhase::update(physx::PxcScratchAllocator*, const Bp::BroadPhaseUpdateData& data, physx::PxBaseTask*) {
  const double t0 = now_seconds();
  created_.clear();
  deleted_.clear();
  ++frame_;
  grow(data.getCapacity());
  const PxBounds3* bounds = data.getAABBs();
  const Bp::FilterGroup::Enum* groups = data.getGroups();
  const float* distances = data.getContactDistance();
  const bool* lut = data.getFilter().getLUT();

  // Removals.
  ids_.clear();
  for (PxU32 i = 0, n = data.getNumRemovedHandles(); i < n; ++i) {
    const PxU32 h = data.getRemovedHandles()[i];
    op_stamp_[h] = frame_;
    if (!live_[h]) continue;  // its add was refused
    ids_.push_back(h);
    live_[h] = 0;
  }
  if (!ids_.empty() && !bp_->remove(ids_)) {
    for (const sapling::Id id : ids_) {
      if (const sapling::Status s = bp_->remove(id); !s) fail(s, "remove");
    }
  }
  // Moves (and, after shiftOrigin, every other live box too).
  ids_.clear();
  boxes_.clear();
  for (PxU32 i = 0, n = data.getNumUpdatedHandles(); i < n; ++i) {
    const PxU32 h = data.getUpdatedHandles()[i];
    op_stamp_[h] = frame_;
    if (!live_[h]) continue;  // its add was refused
    ids_.push_back(h);
    boxes_.push_back(fattened(bounds[h], distances[h]));
  }
  for (PxU32 i = 0, n = data.getNumCreatedHandles(); i < n; ++i) op_stamp_[data.getCreatedHandles()[i]] = frame_;
  if (refresh_) {
    for (PxU32 h = 0; h < live_.size(); ++h) {
      if (live_[h] && op_stamp_[h] != frame_) {
        ids_.push_back(h);
        boxes_.push_back(fattened(bounds[h], distances[h]));
      }
    }
    refresh_ = false;
  }
  if (!ids_.empty() && !bp_->move(ids_, boxes_)) {
    // A batch is taken whole or not at all: one by one, the bad box alone is
    // refused (the object keeps its previous box and pairs).
    for (std::size_t i = 0; i < ids_.size(); ++i) {
      if (const sapling::Status s = bp_->move(ids_[i], boxes_[i]); !s) fail(s, "move");
    }
  }
  // Additions, each with its type's filter; with SAPLING_PHYSX_STATICS=static,
  // PhysX's statics (group 0, type STATIC) as sapling statics.
  ids_.clear();
  boxes_.clear();
  filters_.clear();
  static_ids_.clear();
  static_boxes_.clear();
  static_filters_.clear();
  for (PxU32 i = 0, n = data.getNumCreatedHandles(); i < n; ++i) {
    const PxU32 h = data.getCreatedHandles()[i];
    const Bp::FilterGroup::Enum g = groups[h];
    groups_[h] = g;
    live_[h] = 1;
    const bool is_static = statics_apart_ && (g & BP_FILTERING_TYPE_MASK) == Bp::FilterType::STATIC;
    (is_static ? static_ids_ : ids_).push_back(h);
    (is_static ? static_boxes_ : boxes_).push_back(fattened(bounds[h], distances[h]));
    (is_static ? static_filters_ : filters_).push_back(type_filter(g, lut));
  }
  add_batch(ids_, boxes_, filters_, sapling::Motion::kDynamic);
  add_batch(static_ids_, static_boxes_, static_filters_, sapling::Motion::kStatic);

  const double t1 = now_seconds();
  const sapling::FrameDelta& d = bp_->update();
  g_stats.sapling_seconds += now_seconds() - t1;
  g_stats.staging_seconds += t1 - t0;
  if (!d.status) fail(d.status, "update");
  g_stats.pairs = bp_->pairs().size();
  // PhysX's deltas: no pair of one group; no deleted pair of a removed object
  // (PhysX drops those itself). sapling's lists are sorted by (a, b), a < b,
  // which is BroadPhasePair's order (mVolA < mVolB).
  for (const sapling::Pair& p : d.deleted) {
    if (!live_[p.a] || !live_[p.b] || groups_[p.a] == groups_[p.b]) continue;
    deleted_.emplace_back(p.a, p.b);
  }
  for (const sapling::Pair& p : d.created) {
    if (groups_[p.a] == groups_[p.b]) continue;
    created_.emplace_back(p.a, p.b);
  }
}

const Bp::BroadPhasePair* SaplingBroadPhase::getCreatedPairs(PxU32& n) const {
  n = PxU32(created_.size());
  return created_.data();
}

const Bp::BroadPhasePair* SaplingBroadPhase::getDeletedPairs(PxU32& n) const {
  n = PxU32(deleted_.size());
  return deleted_.data();
}

void SaplingBroadPhase::freeBuffers() {
  // PhysX reads the deltas between update() and freeBuffers(); a frame
  // without update() (nothing changed) must report none.
  created_.clear();
  deleted_.clear();
}

void SaplingBroadPhase::shiftOrigin(const physx::PxVec3&, const PxBounds3*, const physx::PxReal*) {
  // PhysX recomputes every bound from the shifted poses (it does not
  // subtract the shift from the old bounds), so sapling's shift_origin(),
  // which re-rounds the stored boxes, would not give PhysX's boxes: the
  // next update() re-reads every live box from PhysX's array instead (the
  // AABB manager also lists them all as updated after a shift).
  refresh_ = true;
}

#if PX_CHECKED
bool SaplingBroadPhase::isValid(const Bp::BroadPhaseUpdateData& data) const {
  for (PxU32 i = 0; i < data.getNumCreatedHandles(); ++i) {
    if (live(data.getCreatedHandles()[i])) return false;
  }
  for (PxU32 i = 0; i < data.getNumUpdatedHandles(); ++i) {
    if (!live(data.getUpdatedHandles()[i])) return false;
  }
  for (PxU32 i = 0; i < data.getNumRemovedHandles(); ++i) {
    if (!live(data.getRemovedHandles()[i])) return false;
  }
  return true;
}
#endif

namespace {

// The factory's own broad phases need it not to answer (no recursion).
thread_local bool g_inside_factory = false;

Bp::BroadPhase* create_native(PxBroadPhaseType::Enum type, PxU32 regions, PxU32 overlaps, PxU32 statics, PxU32 dynamics,
                              PxU64 context) {
  g_inside_factory = true;
  Bp::BroadPhase* bp = Bp::BroadPhase::create(type, regions, overlaps, statics, dynamics, context);
  g_inside_factory = false;
  return bp;
}

// Forwards everything to `inner`; times update() and counts the deltas.
class Forwarding : public Bp::BroadPhase {
 public:
  explicit Forwarding(Bp::BroadPhase* inner) : inner_(inner) {}
  ~Forwarding() override {
    if (inner_ != nullptr) inner_->release();
  }
  PxBroadPhaseType::Enum getType() const override { return inner_->getType(); }
  void release() override { PX_DELETE_THIS; }
  void getCaps(physx::PxBroadPhaseCaps& caps) const override { inner_->getCaps(caps); }
  PxU32 getNbRegions() const override { return inner_->getNbRegions(); }
  PxU32 getRegions(physx::PxBroadPhaseRegionInfo* info, PxU32 size, PxU32 start) const override {
    return inner_->getRegions(info, size, start);
  }
  PxU32 addRegion(const physx::PxBroadPhaseRegion& r, bool populate, const PxBounds3* b, const float* d) override {
    return inner_->addRegion(r, populate, b, d);
  }
  bool removeRegion(PxU32 handle) override { return inner_->removeRegion(handle); }
  PxU32 getNbOutOfBoundsObjects() const override { return inner_->getNbOutOfBoundsObjects(); }
  const PxU32* getOutOfBoundsObjects() const override { return inner_->getOutOfBoundsObjects(); }
  void update(physx::PxcScratchAllocator* scratch, const Bp::BroadPhaseUpdateData& data,
              physx::PxBaseTask* continuation) override {
    const double t0 = now_seconds();
    inner_->update(scratch, data, continuation);
    g_stats.update_seconds += now_seconds() - t0;
    ++g_stats.updates;
    after_update(scratch, data);
  }
  void preBroadPhase(const Bp::BroadPhaseUpdateData& data) override { inner_->preBroadPhase(data); }
  void fetchBroadPhaseResults() override { inner_->fetchBroadPhaseResults(); }
  const Bp::BroadPhasePair* getCreatedPairs(PxU32& n) const override { return inner_->getCreatedPairs(n); }
  const Bp::BroadPhasePair* getDeletedPairs(PxU32& n) const override { return inner_->getDeletedPairs(n); }
  void freeBuffers() override { inner_->freeBuffers(); }
  void shiftOrigin(const physx::PxVec3& s, const PxBounds3* b, const physx::PxReal* d) override {
    inner_->shiftOrigin(s, b, d);
  }
#if PX_CHECKED
  bool isValid(const Bp::BroadPhaseUpdateData& data) const override { return inner_->isValid(data); }
#endif

 protected:
  virtual void after_update(physx::PxcScratchAllocator*, const Bp::BroadPhaseUpdateData&) {
    PxU32 n = 0;
    inner_->getCreatedPairs(n);
    g_stats.created += n;
    inner_->getDeletedPairs(n);
    g_stats.deleted += n;
  }
  Bp::BroadPhase* inner_;
};

// A pair set kept from a broad phase's deltas, PhysX's way (the pairs of a
// removed object go without being reported).
struct PairSet {
  std::unordered_set<std::uint64_t> set;
  std::uint64_t bad = 0;  // created twice / deleted while absent
  void apply(const Bp::BroadPhase& bp, const std::vector<std::uint8_t>& removed) {
    PxU32 n = 0;
    const Bp::BroadPhasePair* p = bp.getDeletedPairs(n);
    for (PxU32 i = 0; i < n; ++i) bad += set.erase(key(p[i].mVolA, p[i].mVolB)) == 1 ? 0 : 1;
    if (!removed.empty()) {
      for (auto it = set.begin(); it != set.end();) {
        const PxU32 a = PxU32(*it >> 32), b = PxU32(*it);
        it = (a < removed.size() && removed[a]) || (b < removed.size() && removed[b]) ? set.erase(it) : std::next(it);
      }
    }
    p = bp.getCreatedPairs(n);
    for (PxU32 i = 0; i < n; ++i) bad += set.insert(key(p[i].mVolA, p[i].mVolB)).second ? 0 : 1;
  }
};

// sapling reports; ABP runs beside it on the same data and the two pair sets
// are compared every frame (and with an exact all-pairs test now and then).
class Checked final : public Forwarding {
 public:
  Checked(SaplingBroadPhase* sapling, Bp::BroadPhase* abp, unsigned brute_every)
      : Forwarding(sapling), sapling_(sapling), abp_(abp), brute_every_(brute_every) {}
  ~Checked() override { abp_->release(); }
  void freeBuffers() override {
    inner_->freeBuffers();
    abp_->freeBuffers();
  }
  void shiftOrigin(const physx::PxVec3& s, const PxBounds3* b, const physx::PxReal* d) override {
    inner_->shiftOrigin(s, b, d);
    abp_->shiftOrigin(s, b, d);
  }

 private:
  void after_update(physx::PxcScratchAllocator* scratch, const Bp::BroadPhaseUpdateData& data) override {
    Forwarding::after_update(scratch, data);
    abp_->update(scratch, data, nullptr);
    removed_.assign(data.getCapacity(), 0);
    bool any_removed = false;
    for (PxU32 i = 0; i < data.getNumRemovedHandles(); ++i) removed_[data.getRemovedHandles()[i]] = any_removed = 1;
    static const std::vector<std::uint8_t> none;
    mine_.apply(*inner_, any_removed ? removed_ : none);
    theirs_.apply(*abp_, any_removed ? removed_ : none);
    g_stats.bad_deltas = mine_.bad;
    g_stats.pairs = mine_.set.size();
    ++g_stats.checked_frames;
    if (mine_.set != theirs_.set) {
      ++g_stats.mismatched_frames;
      report("ABP", mine_.set, theirs_.set);
    }
    if (brute_every_ != 0 && ++frames_ % brute_every_ == 1) brute(data);
  }

  void brute(const Bp::BroadPhaseUpdateData& data) {
    const PxBounds3* bounds = data.getAABBs();
    const float* distances = data.getContactDistance();
    const Bp::FilterGroup::Enum* groups = data.getGroups();
    const bool* lut = data.getFilter().getLUT();
    std::vector<PxU32> live;
    std::vector<sapling::Box3> boxes;
    for (PxU32 h = 0; h < data.getCapacity(); ++h) {
      if (sapling_->live(h)) {
        live.push_back(h);
        boxes.push_back(fattened(bounds[h], distances[h]));
      }
    }
    std::unordered_set<std::uint64_t> exact;
    for (std::size_t i = 0; i < live.size(); ++i) {
      for (std::size_t j = i + 1; j < live.size(); ++j) {
        if (sapling::overlaps(boxes[i], boxes[j]) && physx_may_pair(groups[live[i]], groups[live[j]], lut)) {
          exact.insert(key(live[i], live[j]));
        }
      }
    }
    ++g_stats.brute_frames;
    if (exact != mine_.set) {
      ++g_stats.brute_mismatches;
      report("the exact all-pairs set", mine_.set, exact);
    }
  }

  static void report(const char* whom, const std::unordered_set<std::uint64_t>& mine,
                     const std::unordered_set<std::uint64_t>& theirs) {
    int shown = 0;
    std::fprintf(stderr, "sapling_bp check: %zu pairs, %s has %zu\n", mine.size(), whom, theirs.size());
    for (const std::uint64_t k : mine) {
      if (!theirs.count(k) && shown++ < 5) std::fprintf(stderr, "  only sapling: (%u, %u)\n", PxU32(k >> 32), PxU32(k));
    }
    for (const std::uint64_t k : theirs) {
      if (!mine.count(k) && shown++ < 10) std::fprintf(stderr, "  only %s: (%u, %u)\n", whom, PxU32(k >> 32), PxU32(k));
    }
  }

  SaplingBroadPhase* sapling_;
  Bp::BroadPhase* abp_;
  unsigned brute_every_;
  unsigned frames_ = 0;
  std::vector<std::uint8_t> removed_;
  PairSet mine_, theirs_;
};

}  // namespace

}  // namespace sapling_physx

namespace physx::Bp {

// Called first by the patched Bp::BroadPhase::create (physx_factory.patch);
// NULL lets PhysX's own branches run.
BroadPhase* saplingCreateBroadPhase(PxBroadPhaseType::Enum type, PxU32 regions, PxU32 overlaps, PxU32 statics,
                                    PxU32 dynamics, PxU64 context) {
  using namespace sapling_physx;
  const char* env = std::getenv("SAPLING_PHYSX_BP");
  if (g_inside_factory || env == nullptr || *env == '\0' || type == PxBroadPhaseType::eGPU) return nullptr;
  std::string_view spec(env);
  if (spec == "native") {
    Bp::BroadPhase* inner = create_native(type, regions, overlaps, statics, dynamics, context);
    return inner == nullptr ? nullptr : PX_NEW(Forwarding)(inner);
  }
  const bool check = spec.substr(0, 6) == "check:";
  if (check) spec.remove_prefix(6);
  sapling::Status why;
  std::unique_ptr<sapling::BroadPhase> bp = sapling::BroadPhase::create(spec, sapling::Options{}, &why);
  if (bp == nullptr) {
    std::fprintf(stderr, "sapling_bp: SAPLING_PHYSX_BP=%s: %s\n", env, why.message().c_str());
    std::abort();
  }
  bp->reserve(std::size_t(statics) + dynamics, overlaps);
  SaplingBroadPhase* sapling = PX_NEW(SaplingBroadPhase)(std::move(bp), type);
  if (!check) return PX_NEW(Forwarding)(sapling);
  const char* every = std::getenv("SAPLING_PHYSX_BRUTE");
  Bp::BroadPhase* abp = create_native(PxBroadPhaseType::eABP, regions, overlaps, statics, dynamics, context);
  return PX_NEW(Checked)(sapling, abp, every != nullptr ? unsigned(std::atoi(every)) : 25u);
}

}  // namespace physx::Bp
