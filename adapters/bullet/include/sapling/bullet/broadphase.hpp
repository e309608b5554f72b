// sapling::bullet: a Bullet btBroadphaseInterface backed by a sapling
// BroadPhase (any registered algorithm; "auto" by default).
//
//   auto broadphase = sapling::bullet::BroadPhase::create();  // instead of new btDbvtBroadphase()
//   btDiscreteDynamicsWorld world(&dispatcher, broadphase.get(), &solver, &configuration);
//
// How Bullet's calls map onto sapling's frames (docs/adapters/bullet.md):
//
// - createProxy / setAabb / destroyProxy only record the change; the one
//   call per step to calculateOverlappingPairs() hands the step's changes to
//   sapling as one frame (removals, moves, additions; a proxy moved several
//   times in the step is moved once, to its last box) and applies the
//   frame's delta to the pair cache: addOverlappingPair() for each created
//   pair, removeOverlappingPair(..., dispatcher) for each deleted one (for a
//   cache with deferred removal, btSortedOverlappingPairCache, the adapter
//   takes the deleted pairs out of its array itself, as Bullet's broad
//   phases do, keeping the others' order). After
//   it, the cache holds exactly the pairs whose current AABBs overlap (closed
//   intervals: touching boxes overlap) and that the cache's
//   needsBroadphaseCollision() accepts, no more (no fattened boxes, no stale
//   pairs) and no less.
// - destroyProxy() removes the proxy's pairs from the cache at once (as
//   btDbvtBroadphase does), so the dispatcher never sees a pair of a
//   destroyed proxy.
// - Filters, FilterMode::kGroupMask (the default): a proxy's collision
//   filter group and mask are sapling's category and mask (bit for bit), and
//   sapling's rule (a.category & b.mask) && (b.category & a.mask) is
//   Bullet's, so sapling computes only the pairs Bullet's group/mask test
//   accepts. Changes to a proxy's m_collisionFilterGroup/Mask are seen at
//   the next calculateOverlappingPairs(). A btOverlapFilterCallback on the
//   cache then decides among those pairs. Bullet's cache lets a callback
//   *replace* the group/mask test; if yours accepts pairs that group/mask
//   refuses, use FilterMode::kCache: every overlapping pair is offered to the
//   cache, which alone decides. In both modes a pair the cache refuses is
//   offered again at every step while its boxes overlap (as btDbvtBroadphase
//   offers it again whenever one of the two moves).
// - Static objects: in kGroupMask mode a proxy whose group holds no bit but
//   StaticFilter and whose mask lacks StaticFilter (Bullet's default for
//   static and kinematic bodies) is added to sapling with Motion::kStatic.
//   Two such proxies never pass the group/mask test, so this changes no
//   pair, only the cost: static objects are laid out once and never paired
//   with each other.
// - Bad input never crashes and never costs another object its pairs: a
//   proxy whose AABB has a NaN coordinate or min > max on an axis is
//   *parked*: it leaves sapling (its pairs leave the cache at that step) and
//   stays out until an AABB without NaN and with min <= max is set; a
//   warning is issued when it is parked. Infinite coordinates are valid (the
//   box reaches infinity, closed intervals). destroyProxy() or setAabb() on
//   a proxy this broad phase does not hold (destroyed already, or never
//   created here) does nothing but issue an error through the warning hook
//   and count it in misuse_count(); proxies' memory is never freed while
//   the broad phase lives (but by resetPool() with no proxy left), and the
//   check finds a pointer in the pool before it reads it.
// - rayTest() calls the callback for exactly the proxies whose current AABB
//   (grown by the cast shape's aabbMin/aabbMax as Bullet's broad phases do)
//   the segment rayFrom + t * d meets, t in [0, m_lambda_max], d the inverse
//   of m_rayDirectionInverse (0 where that is BT_LARGE_FLOAT or more), with
//   sapling's closed-box ray rule (include/sapling/ray.hpp); aabbTest() for
//   exactly the proxies whose current AABB overlaps the box. Both see boxes
//   set since the last step. process()'s return value is ignored, as
//   Bullet's broad phases ignore it.
// - With a double btScalar, boxes are rounded outward to float for sapling:
//   pairs are then exact for the rounded boxes (a superset of the exact
//   double overlaps by at most a float ulp), queries and rays exact in double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <BulletCollision/BroadphaseCollision/btBroadphaseInterface.h>
#include <BulletCollision/BroadphaseCollision/btBroadphaseProxy.h>
#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>

#include "sapling/broad_phase.hpp"

namespace sapling::bullet {

/// Who decides which overlapping pairs reach the pair cache.
enum class FilterMode : std::uint8_t {
  /// sapling applies Bullet's group/mask test (and the statics rule); the
  /// cache's needsBroadphaseCollision() (its filter callback) then decides.
  kGroupMask,
  /// every overlapping pair is offered to the cache, which alone decides:
  /// for a btOverlapFilterCallback that accepts pairs group/mask refuses.
  kCache,
};

struct Options {
  /// A registered sapling algorithm, with settings after a colon if any.
  std::string algorithm = "auto";
  /// sapling's options (threads, settings). max_pairs must stay 0: a frame
  /// refused by a pair budget would leave Bullet's cache behind.
  sapling::Options broad_phase{};
  FilterMode filter = FilterMode::kGroupMask;
  /// Static-filter proxies as sapling Motion::kStatic (kGroupMask only).
  bool statics = true;
  /// Receives warnings and misuse errors; null: they go to stderr.
  std::function<void(std::string_view)> warn{};
};

/// A proxy: Bullet's fields plus the adapter's bookkeeping.
struct Proxy : btBroadphaseProxy {
  enum class State : std::uint8_t { kFree, kLive, kDead };
  static constexpr Id kNoId = 0xffffffffu;

  Id id = kNoId;            // sapling id while in sapling
  std::uint32_t index = 0;  // position in the live list
  State state = State::kFree;
  bool dirty = false;   // box (or filter) to hand to sapling at the next step
  bool parked = false;  // last box set was refused (NaN, min > max)
  Box3 box{};           // the box sapling holds (when id != kNoId)
  Filter filter{};      // the filter sapling holds
  Motion motion = Motion::kDynamic;
  int seen_group = 0, seen_mask = 0;  // m_collisionFilterGroup/Mask as last handed to sapling
};

class BroadPhase final : public btBroadphaseInterface {
 public:
  /// A broad phase on `options.algorithm`, with its own
  /// btHashedOverlappingPairCache, or with `cache` (not owned; it must outlive
  /// the broad phase). Null, with the reason in `why`, for an unknown
  /// algorithm, options sapling refuses, or max_pairs other than 0.
  static std::unique_ptr<BroadPhase> create(Options options = {}, btOverlappingPairCache* cache = nullptr,
                                            Status* why = nullptr);
  /// create(Options{.algorithm = algorithm}).
  static std::unique_ptr<BroadPhase> create(std::string_view algorithm, Status* why = nullptr);

  ~BroadPhase() override;
  BroadPhase(const BroadPhase&) = delete;
  BroadPhase& operator=(const BroadPhase&) = delete;

  btBroadphaseProxy* createProxy(const btVector3& aabbMin, const btVector3& aabbMax, int shapeType, void* userPtr,
                                 int collisionFilterGroup, int collisionFilterMask, btDispatcher* dispatcher) override;
  void destroyProxy(btBroadphaseProxy* proxy, btDispatcher* dispatcher) override;
  void setAabb(btBroadphaseProxy* proxy, const btVector3& aabbMin, const btVector3& aabbMax,
               btDispatcher* dispatcher) override;
  void getAabb(btBroadphaseProxy* proxy, btVector3& aabbMin, btVector3& aabbMax) const override;
  void rayTest(const btVector3& rayFrom, const btVector3& rayTo, btBroadphaseRayCallback& rayCallback,
               const btVector3& aabbMin = btVector3(0, 0, 0), const btVector3& aabbMax = btVector3(0, 0, 0)) override;
  void aabbTest(const btVector3& aabbMin, const btVector3& aabbMax, btBroadphaseAabbCallback& callback) override;
  void calculateOverlappingPairs(btDispatcher* dispatcher) override;
  btOverlappingPairCache* getOverlappingPairCache() override { return cache_; }
  const btOverlappingPairCache* getOverlappingPairCache() const override { return cache_; }
  /// The union of the live, unparked proxies' AABBs; a zero box when none.
  void getBroadphaseAabb(btVector3& aabbMin, btVector3& aabbMax) const override;
  /// With no proxy left, starts afresh (a new sapling broad phase, unique
  /// ids from 0, the proxy pool freed), as btDbvtBroadphase does; otherwise
  /// does nothing.
  void resetPool(btDispatcher* dispatcher) override;
  void printStats() override;

  /// Proxies created and not destroyed.
  std::size_t proxy_count() const noexcept { return live_.size(); }
  /// Proxies parked by their last AABB (NaN or min > max).
  std::size_t parked_count() const noexcept;
  bool is_parked(const btBroadphaseProxy* proxy) const;
  /// Calls refused: destroyProxy/setAabb/getAabb of a proxy not held here.
  std::size_t misuse_count() const noexcept { return misuse_; }
  /// Pairs overlapping (and passing the filters of the mode) that the cache
  /// refused, offered again at each step.
  std::size_t refused_count() const noexcept { return refused_.size(); }
  /// The sapling broad phase underneath (ids are the adapter's, not Bullet's).
  const sapling::BroadPhase& broad_phase() const noexcept { return *bp_; }
  const Options& options() const noexcept { return options_; }
  /// Seconds spent in the last calculateOverlappingPairs().
  double last_step_seconds() const noexcept { return last_seconds_; }

 private:
  BroadPhase(Options options, std::unique_ptr<sapling::BroadPhase> bp, btOverlappingPairCache* cache);
  Proxy* held(const btBroadphaseProxy* proxy, const char* operation) const;
  Proxy* allocate();
  void warn(std::string_view message) const;
  void mark_dirty(Proxy* p);
  Filter filter_for(const Proxy* p) const noexcept;
  Motion motion_for(const Proxy* p) const noexcept;
  Id take_id(Proxy* p);
  void stage_adds(std::vector<Proxy*>& proxies, Motion motion);
  void apply_delta(const FrameDelta& delta, btDispatcher* dispatcher, bool net);
  void remove_deferred(btDispatcher* dispatcher);
  template <class Visit>
  void for_each_hit(const btVector3& lo, const btVector3& hi, Visit&& visit) const;

  Options options_;
  std::unique_ptr<sapling::BroadPhase> bp_;
  btOverlappingPairCache* cache_;
  bool owns_cache_;

  // Proxies live in chunks that are freed only by the destructor or by
  // resetPool() with no proxy left; held() finds a pointer's chunk.
  std::vector<std::unique_ptr<Proxy[]>> chunks_;
  std::vector<std::pair<const Proxy*, std::size_t>> chunk_index_;  // sorted by address: (first, chunk)
  std::vector<Proxy*> free_;  // FIFO from free_head_: a destroyed proxy waits before reuse
  std::size_t free_head_ = 0;
  std::vector<Proxy*> live_;
  std::vector<Proxy*> dirty_;  // this step's changed proxies, each once
  std::vector<Proxy*> dead_;   // destroyed this step: freed after the step's frame
  int next_unique_id_ = 0;

  std::vector<Proxy*> proxy_of_id_;  // sapling id -> proxy (live, or removed this step)
  std::vector<Id> free_ids_;
  std::vector<Id> removed_ids_;   // this step's sapling removals
  std::vector<Id> released_ids_;  // freed once the frame that removes them has run

  // Pairs the cache refused, by the proxies' unique ids.
  std::unordered_map<std::uint64_t, std::pair<Proxy*, Proxy*>> refused_;
  mutable std::size_t misuse_ = 0;
  double last_seconds_ = 0.0;

  // Scratch.
  std::vector<Id> move_ids_, add_ids_;
  std::vector<Box3> move_boxes_, add_boxes_;
  std::vector<Filter> add_filters_;
  std::vector<Proxy*> add_dynamic_, add_static_;
  mutable std::vector<Id> hits_;
  mutable std::vector<RayHit> ray_hits_;
  mutable std::vector<std::pair<double, Proxy*>> ordered_;
  std::unordered_map<std::uint64_t, std::pair<Proxy*, Proxy*>> net_;
  std::unordered_set<std::uint64_t> gone_;  // pairs to take out of a cache with deferred removal
};

}  // namespace sapling::bullet
