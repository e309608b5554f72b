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
// quadratic: only run up to n = 20,000.
//
// Static objects (SceneShape::static_below) are created as
// btCollisionWorld::addCollisionObject creates a static object's proxy:
// group StaticFilter, mask AllFilter ^ StaticFilter, so that the pair cache
// refuses static-static pairs (needsBroadphaseCollision). btDbvtBroadphase
// moves proxies that stop moving into its second ("fixed") tree after two
// frames, and then only tests the moving tree against it. Its raycast accelerator (a mirror
// btDbvtBroadphase) is disabled: rays are not measured here.
#include <BulletCollision/BroadphaseCollision/btAxisSweep3.h>
#include <BulletCollision/BroadphaseCollision/btDbvtBroadphase.h>
#include <BulletCollision/BroadphaseCollision/btOverlappingPairCache.h>
#include <LinearMath/btScalar.h>

#include <algorithm>
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
  bool handles_statics() const override { return true; }

  void reset(const SceneShape& shape) override {
    static_below_ = shape.static_below;
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
      const bool fixed = id < static_below_;
      const int group = fixed ? btBroadphaseProxy::StaticFilter : btBroadphaseProxy::DefaultFilter;
      const int mask =
          fixed ? btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter : btBroadphaseProxy::AllFilter;
      proxies_[id] =
          broadphase_->createProxy(lo(boxes[id]), hi(boxes[id]), 0, as_user_pointer(id), group, mask, nullptr);
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
  Id static_below_ = 0;
  std::vector<Pair> exact_pairs_;
  std::unique_ptr<btBroadphaseInterface> broadphase_;
  std::vector<btBroadphaseProxy*> proxies_;  // by scenario id
};

// The query scenes' peer (QueryPeer, contender.hpp): a btDbvtBroadphase holding
// the world. aabbTest calls back every proxy whose tree leaf overlaps the
// box (leaves of proxies never moved are the boxes themselves, closed); rayTest
// calls back every proxy whose leaf Bullet's slab test (btRayAabb2, floats)
// says the segment from..to meets. Both are filtered here by the exact tests.
// rayTest has no early exit (the callback's m_lambda_max is read once, when
// the traversal starts), so the closest hit is the least of all the hits.
class BulletQueryPeer final : public QueryPeer {
 public:
  std::string name() const override { return "bullet-dbvt"; }
  std::string note() const override {
    return "btDbvtBroadphase::aabbTest / rayTest (candidates: leaves met), exact filter timed";
  }
  void build(std::span<const Box3> boxes, bool as_static) override {
    boxes_.assign(boxes.begin(), boxes.end());
    broadphase_ = std::make_unique<btDbvtBroadphase>();
    const int group = as_static ? btBroadphaseProxy::StaticFilter : btBroadphaseProxy::DefaultFilter;
    const int mask =
        as_static ? btBroadphaseProxy::AllFilter ^ btBroadphaseProxy::StaticFilter : btBroadphaseProxy::AllFilter;
    for (std::size_t k = 0; k < boxes_.size(); ++k) {
      broadphase_->createProxy(lo(boxes_[k]), hi(boxes_[k]), 0, as_user_pointer(static_cast<Id>(k)), group, mask,
                               nullptr);
    }
    // Three frames with nothing moving: the proxies settle in the fixed tree, as in a running world.
    for (int f = 0; f < 3; ++f) broadphase_->calculateOverlappingPairs(nullptr);
  }
  void query(const Box3& box, std::vector<Id>& out) override {
    out.clear();
    Collector collect(boxes_, box, out, candidates_);
    broadphase_->aabbTest(lo(box), hi(box), collect);
  }
  void ray(const Ray3& ray, std::vector<RayHit>& out) override {
    out.clear();
    RayCollector collect(boxes_, ray, out, candidates_);
    broadphase_->rayTest(collect.from(), collect.to(), collect);
  }
  bool ray_closest(const Ray3& r, RayHit& hit) override {
    ray(r, hits_);
    if (hits_.empty()) return false;
    hit = *std::min_element(hits_.begin(), hits_.end());
    return true;
  }
  std::size_t candidates() const override { return candidates_; }

 private:
  struct Collector final : btBroadphaseAabbCallback {
    Collector(const std::vector<Box3>& boxes, const Box3& box, std::vector<Id>& out, std::size_t& count)
        : boxes_(boxes), box_(box), out_(out), count_(count) {}
    bool process(const btBroadphaseProxy* proxy) override {
      const Id id = from_user_pointer(proxy->m_clientObject);
      ++count_;
      if (overlaps(boxes_[id], box_)) out_.push_back(id);
      return true;
    }
    const std::vector<Box3>& boxes_;
    const Box3& box_;
    std::vector<Id>& out_;
    std::size_t& count_;
  };
  // Set up as btCollisionWorld's btSingleRayCallback sets up its ray.
  struct RayCollector final : btBroadphaseRayCallback {
    RayCollector(const std::vector<Box3>& boxes, const Ray3& ray, std::vector<RayHit>& out, std::size_t& count)
        : boxes_(boxes), ray_(ray), out_(out), count_(count) {
      const btVector3 o(ray.origin[0], ray.origin[1], ray.origin[2]);
      const btVector3 d(ray.direction[0], ray.direction[1], ray.direction[2]);
      from_ = o;
      to_ = o + d * ray.max_t;
      btVector3 unit = to_ - from_;
      unit.normalize();
      for (int k = 0; k < 3; ++k) {
        m_rayDirectionInverse[k] = unit[k] == btScalar(0.0) ? btScalar(BT_LARGE_FLOAT) : btScalar(1.0) / unit[k];
        m_signs[k] = m_rayDirectionInverse[k] < 0.0 ? 1u : 0u;
      }
      m_lambda_max = unit.dot(to_ - from_);
    }
    bool process(const btBroadphaseProxy* proxy) override {
      const Id id = from_user_pointer(proxy->m_clientObject);
      ++count_;
      float t = 0.0f;
      if (ray_entry(ray_, boxes_[id], t)) out_.push_back(RayHit{id, t});
      return true;
    }
    const btVector3& from() const { return from_; }
    const btVector3& to() const { return to_; }
    const std::vector<Box3>& boxes_;
    const Ray3& ray_;
    std::vector<RayHit>& out_;
    std::size_t& count_;
    btVector3 from_, to_;
  };

  std::vector<Box3> boxes_;
  std::unique_ptr<btDbvtBroadphase> broadphase_;
  std::vector<RayHit> hits_;
  std::size_t candidates_ = 0;
};

}  // namespace

std::unique_ptr<QueryPeer> make_bullet_query_peer() { return std::make_unique<BulletQueryPeer>(); }

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
