// Peer: Bullet's broad phases, used the way btCollisionWorld uses them:
// createProxy on add, setAabb on move, destroyProxy on remove, then
// calculateOverlappingPairs; the pairs are read from the overlapping pair
// cache (btHashedOverlappingPairCache).
//
// "bullet-dbvt" (btDbvtBroadphase, two dynamic AABB trees): its leaves hold
// boxes fattened by a margin (0.05 world units here, Bullet's default
// gDbvtMargin), and a pair stays in the cache until the fattened boxes part,
// removed lazily (a share of the cache is checked each frame). So its pair set
// is a superset of the exact one. "bullet-dbvt-exact" also filters the cache
// each frame (timed) with the exact closed-box test.
//
// "bullet-axis-sweep" (bt32BitAxisSweep3, incremental SAP on quantized
// endpoints): needs world bounds; quantization rounds mins down and maxes up,
// so it is a superset too. Its insertion is O(n) per proxy (each new proxy's
// endpoints are sorted in from the end of the axis), so mass insertion is
// quadratic: only run up to n = 20,000. Its raycast accelerator (a mirror
// btDbvtBroadphase) is disabled: rays are not measured here.
#include <BulletCollision/BroadphaseCollision/btAxisSweep3.h>
#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>
#include <LinearMath/btScalar.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "harness/contender.hpp"
#include "harness/peers.hpp"

namespace sapling::bench {
namespace {

constexpr std::size_t kAxisSweepMaxBoxes = 20'000;

enum class BulletKind { kDbvt, kDbvtExact, kAxisSweep };

btVector3 lo(const Box3& b) { return btVector3(b.min[0], b.min[1], b.min[2]); }
btVector3 hi(const Box3& b) { return btVector3(b.max[0], b.max[1], b.max[2]); }

void* as_user_pointer(Id id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }
Id from_user_pointer(const void* p) { return static_cast<Id>(reinterpret_cast<std::uintptr_t>(p)); }

class BulletContender final : public Contender {
 public:
  explicit BulletContender(BulletKind kind) : kind_(kind) {}

  std::string name() const override {
    switch (kind_) {
      case BulletKind::kDbvt:
        return "bullet-dbvt";
      case BulletKind::kDbvtExact:
        return "bullet-dbvt-exact";
      case BulletKind::kAxisSweep:
        return "bullet-axis-sweep";
    }
    return "bullet";
  }
  Exactness exactness() const override {
    return kind_ == BulletKind::kDbvtExact ? Exactness::kExact : Exactness::kSuperset;
  }
  std::string note() const override {
    const std::string margin = std::to_string(gDbvtMargin).substr(0, 4);
    switch (kind_) {
      case BulletKind::kDbvt:
        return "btDbvtBroadphase: leaves fattened by " + margin + ", lazy pair cleanup";
      case BulletKind::kDbvtExact:
        return "btDbvtBroadphase, its pair cache filtered by the exact test each frame";
      case BulletKind::kAxisSweep:
        return "bt32BitAxisSweep3: quantized endpoints, O(n) per insertion";
    }
    return {};
  }
  bool supports(const SceneShape& shape, std::string* why) const override {
    if (kind_ == BulletKind::kAxisSweep && shape.n > kAxisSweepMaxBoxes) {
      if (why) *why = "O(n) per insertion: only up to n = " + std::to_string(kAxisSweepMaxBoxes);
      return false;
    }
    if (kind_ == BulletKind::kAxisSweep && !shape.world) {
      if (why) *why = "needs world bounds";
      return false;
    }
    return true;
  }

  void reset(const SceneShape& shape) override {
    proxies_.clear();
    broadphase_.reset();
    if (kind_ != BulletKind::kAxisSweep) {
      broadphase_ = std::make_unique<btDbvtBroadphase>();
    } else {
      // Room for the initial boxes and the churn; the world is the scene's, slightly enlarged.
      const Box3& w = *shape.world;
      const float pad = 1.0f;
      const auto handles = static_cast<unsigned>(2 * shape.n + 1024);
      broadphase_ = std::make_unique<bt32BitAxisSweep3>(btVector3(w.min[0] - pad, w.min[1] - pad, w.min[2] - pad),
                                                        btVector3(w.max[0] + pad, w.max[1] + pad, w.max[2] + pad),
                                                        handles, nullptr, /*disableRaycastAccelerator=*/true);
    }
  }

  void frame(const Scenario& s) override {
    const std::span<const Box3> boxes = s.boxes();
    for (const Id id : s.removed()) {
      broadphase_->destroyProxy(proxies_[id], nullptr);
      proxies_[id] = nullptr;
    }
    for (const Id id : s.moved()) broadphase_->setAabb(proxies_[id], lo(boxes[id]), hi(boxes[id]), nullptr);
    for (const Id id : s.added()) {
      if (id >= proxies_.size()) proxies_.resize(id + 1, nullptr);
      proxies_[id] = broadphase_->createProxy(lo(boxes[id]), hi(boxes[id]), 0, as_user_pointer(id),
                                              btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter, nullptr);
      if (!proxies_[id]) throw std::runtime_error("createProxy failed (out of handles)");
    }
    broadphase_->calculateOverlappingPairs(nullptr);
    if (kind_ == BulletKind::kDbvtExact) {
      exact_pairs_.clear();
      const btBroadphasePairArray& array = broadphase_->getOverlappingPairCache()->getOverlappingPairArray();
      for (int k = 0; k < array.size(); ++k) {
        const Pair p = pair_of(array[k]);
        if (overlaps(boxes[p.a], boxes[p.b])) exact_pairs_.push_back(p);
      }
    }
  }

  void pairs(std::vector<Pair>& out) override {
    if (kind_ == BulletKind::kDbvtExact) {
      out = exact_pairs_;
    } else {
      const btBroadphasePairArray& array = broadphase_->getOverlappingPairCache()->getOverlappingPairArray();
      out.resize(static_cast<std::size_t>(array.size()));
      for (int k = 0; k < array.size(); ++k) out[static_cast<std::size_t>(k)] = pair_of(array[k]);
    }
    detail::sort_pairs(out);
  }
  std::size_t pair_count() override {
    if (kind_ == BulletKind::kDbvtExact) return exact_pairs_.size();
    return static_cast<std::size_t>(broadphase_->getOverlappingPairCache()->getNumOverlappingPairs());
  }

 private:
  static Pair pair_of(const btBroadphasePair& p) {
    return make_pair(from_user_pointer(p.m_pProxy0->m_clientObject), from_user_pointer(p.m_pProxy1->m_clientObject));
  }

  BulletKind kind_;
  std::vector<Pair> exact_pairs_;
  std::unique_ptr<btBroadphaseInterface> broadphase_;
  std::vector<btBroadphaseProxy*> proxies_;  // by scenario id
};

}  // namespace

std::string bullet_version() {
  return std::to_string(btGetVersion() / 100) + "." + std::to_string(btGetVersion() % 100);
}

void add_bullet_contenders(std::vector<ContenderInfo>& out) {
  out.push_back({"bullet-dbvt", "Bullet", "Bullet btDbvtBroadphase (dynamic AABB trees, fattened leaves)",
                 Query::kComplete, [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<BulletContender>(BulletKind::kDbvt);
                 }});
  out.push_back({"bullet-dbvt-exact", "Bullet", "Bullet btDbvtBroadphase, its pair cache filtered by the exact test",
                 Query::kComplete, [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<BulletContender>(BulletKind::kDbvtExact);
                 }});
  out.push_back({"bullet-axis-sweep", "Bullet", "Bullet bt32BitAxisSweep3 (incremental SAP), n <= 20000",
                 Query::kComplete, [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<BulletContender>(BulletKind::kAxisSweep);
                 }});
}

}  // namespace sapling::bench
