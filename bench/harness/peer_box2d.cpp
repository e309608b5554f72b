// Peer: Box2D 2.4's broad phase, b2BroadPhase (a b2DynamicTree plus its move
// buffer), used as b2World uses it: CreateProxy on add, MoveProxy with the
// displacement on move, DestroyProxy on remove, then UpdatePairs, which
// queries the tree once per proxy whose fattened box had to be re-inserted.
// The current pair set is kept the way b2ContactManager keeps contacts: a
// pair found by UpdatePairs is added if new, and every frame each kept pair
// whose fattened boxes no longer overlap (TestOverlap), or whose object left,
// is dropped.
//
// The tree stores boxes fattened by b2_aabbExtension (0.1) and stretched by
// b2_aabbMultiplier (4) times the displacement, so the pair set is a superset
// of the exact one. "box2d-exact" also filters that set each frame (timed)
// with the exact closed-box test, as a user who needs exact pairs would.
// 2D scenes only (the z extent is dropped).
#include <box2d/b2_broad_phase.h>
#include <box2d/b2_common.h>
#include <box2d/b2_dynamic_tree.h>

#include <algorithm>
#include <limits>
#include <unordered_set>
#include <vector>

#include "harness/contender.hpp"
#include "harness/peers.hpp"

namespace sapling::bench {
namespace {

void* as_user_pointer(Id id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }
Id from_user_pointer(const void* p) { return static_cast<Id>(reinterpret_cast<std::uintptr_t>(p)); }

b2AABB to_b2(const Box3& b) {
  b2AABB aabb;
  aabb.lowerBound.Set(b.min[0], b.min[1]);
  aabb.upperBound.Set(b.max[0], b.max[1]);
  return aabb;
}

class Box2dContender final : public Contender {
 public:
  explicit Box2dContender(bool exact) : exact_(exact) {}

  std::string name() const override { return exact_ ? "box2d-exact" : "box2d"; }
  Exactness exactness() const override { return exact_ ? Exactness::kExact : Exactness::kSuperset; }
  std::string note() const override {
    return "b2BroadPhase + contact-manager pair set; fattened by " + std::to_string(b2_aabbExtension).substr(0, 4) +
           " and " + std::to_string(b2_aabbMultiplier).substr(0, 3) + "x the displacement" +
           (exact_ ? "; then filtered by the exact test" : "");
  }
  bool supports(const SceneShape& shape, std::string* why) const override {
    if (shape.dims == 2) return true;
    if (why) *why = "2D scenes only";
    return false;
  }

  void reset(const SceneShape& /*shape*/) override {
    broadphase_ = std::make_unique<b2BroadPhase>();
    proxy_of_.clear();
    centre_.clear();
    pairs_.clear();
    known_.clear();
  }

  void frame(const Scenario& s) override {
    const std::span<const Box3> boxes = s.boxes();
    for (const Id id : s.removed()) {
      broadphase_->DestroyProxy(proxy_of_[id]);
      proxy_of_[id] = b2BroadPhase::e_nullProxy;
    }
    for (const Id id : s.moved()) {
      const b2AABB aabb = to_b2(boxes[id]);
      const b2Vec2 centre = aabb.GetCenter();
      broadphase_->MoveProxy(proxy_of_[id], aabb, centre - centre_[id]);
      centre_[id] = centre;
    }
    for (const Id id : s.added()) {
      if (id >= proxy_of_.size()) {
        proxy_of_.resize(id + 1, b2BroadPhase::e_nullProxy);
        centre_.resize(id + 1);
      }
      const b2AABB aabb = to_b2(boxes[id]);
      proxy_of_[id] = broadphase_->CreateProxy(aabb, as_user_pointer(id));
      centre_[id] = aabb.GetCenter();
    }
    broadphase_->UpdatePairs(this);
    // The contact manager's pass: drop pairs whose fattened boxes parted or whose object left.
    for (std::size_t k = 0; k < pairs_.size();) {
      const Pair p = pairs_[k];
      const int proxy_a = proxy_of_[p.a], proxy_b = proxy_of_[p.b];
      if (proxy_a != b2BroadPhase::e_nullProxy && proxy_b != b2BroadPhase::e_nullProxy &&
          broadphase_->TestOverlap(proxy_a, proxy_b)) {
        ++k;
      } else {
        known_.erase(pair_key(p));
        pairs_[k] = pairs_.back();
        pairs_.pop_back();
      }
    }
    if (exact_) {
      exact_pairs_.clear();
      for (const Pair p : pairs_) {
        if (overlaps(boxes[p.a], boxes[p.b])) exact_pairs_.push_back(p);
      }
    }
  }

  /// b2BroadPhase::UpdatePairs's callback.
  void AddPair(void* user_a, void* user_b) {
    const Pair p = make_pair(from_user_pointer(user_a), from_user_pointer(user_b));
    if (known_.insert(pair_key(p)).second) pairs_.push_back(p);
  }

  void pairs(std::vector<Pair>& out) override {
    out = exact_ ? exact_pairs_ : pairs_;
    detail::sort_pairs(out);
  }
  std::size_t pair_count() override { return exact_ ? exact_pairs_.size() : pairs_.size(); }

 private:
  bool exact_;
  std::vector<Pair> exact_pairs_;
  std::unique_ptr<b2BroadPhase> broadphase_;
  std::vector<int> proxy_of_;   // by scenario id
  std::vector<b2Vec2> centre_;  // by scenario id: the centre last given, for the displacement
  std::vector<Pair> pairs_;
  std::unordered_set<std::uint64_t> known_;
};

// The query scenes' peer (QueryPeer, contender.hpp): a b2DynamicTree holding the
// world's boxes in the plane. CreateProxy fattens each box by
// b2_aabbExtension (0.1) on every side, so Query calls back every proxy
// whose fattened box overlaps the query, and RayCast every proxy whose
// fattened box the segment p1..p2 meets (a slab and separating-axis test);
// both are filtered here by the exact tests (ray_entry in 2D, which gives
// the same t as sapling's lifted 3D ray). For the closest hit the callback
// returns the hit's fraction, so the tree clips the segment there, as
// b2World::RayCast's closest-hit callbacks do (never 0, which would stop the
// walk before a tie at t = 0 with a smaller id is seen).
class Box2dQueryPeer final : public QueryPeer {
 public:
  std::string name() const override { return "box2d"; }
  std::string note() const override {
    return "b2DynamicTree::Query / RayCast (candidates: fattened boxes met), exact filter timed";
  }
  void build(std::span<const Box3> boxes, bool /*as_static*/) override {
    tree_ = std::make_unique<b2DynamicTree>();
    boxes_.resize(boxes.size());
    for (std::size_t k = 0; k < boxes.size(); ++k) {
      boxes_[k] = Box2{{boxes[k].min[0], boxes[k].min[1]}, {boxes[k].max[0], boxes[k].max[1]}};
      tree_->CreateProxy(to_b2(boxes[k]), as_user_pointer(static_cast<Id>(k)));
    }
  }
  void query(const Box3& box, std::vector<Id>& out) override {
    out.clear();
    out_ids_ = &out;
    query_ = Box2{{box.min[0], box.min[1]}, {box.max[0], box.max[1]}};
    tree_->Query(this, to_b2(box));
  }
  void ray(const Ray3& ray, std::vector<RayHit>& out) override {
    out.clear();
    out_hits_ = &out;
    closest_ = false;
    cast(ray);
  }
  bool ray_closest(const Ray3& ray, RayHit& hit) override {
    closest_ = true;
    found_ = false;
    cast(ray);
    if (found_) hit = best_;
    return found_;
  }
  std::size_t candidates() const override { return candidates_; }

  /// b2DynamicTree::Query's callback.
  bool QueryCallback(int32 proxy) {
    ++candidates_;
    const Id id = from_user_pointer(tree_->GetUserData(proxy));
    if (overlaps(boxes_[id], query_)) out_ids_->push_back(id);
    return true;
  }
  /// b2DynamicTree::RayCast's callback: the new maxFraction.
  float RayCastCallback(const b2RayCastInput& input, int32 proxy) {
    ++candidates_;
    const Id id = from_user_pointer(tree_->GetUserData(proxy));
    float t = 0.0f;
    if (!ray_entry(ray_, boxes_[id], t)) return input.maxFraction;
    const RayHit hit{id, t};
    if (!closest_) {
      out_hits_->push_back(hit);
      return input.maxFraction;
    }
    if (!found_ || hit < best_) best_ = hit;
    found_ = true;
    return std::max(best_.t / ray_.max_t, std::numeric_limits<float>::denorm_min());
  }

 private:
  void cast(const Ray3& ray) {
    ray_ = Ray2{{ray.origin[0], ray.origin[1]}, {ray.direction[0], ray.direction[1]}, ray.max_t};
    b2RayCastInput input;
    input.p1.Set(ray.origin[0], ray.origin[1]);
    input.p2.Set(ray.origin[0] + ray.direction[0] * ray.max_t, ray.origin[1] + ray.direction[1] * ray.max_t);
    input.maxFraction = 1.0f;
    tree_->RayCast(this, input);
  }

  std::unique_ptr<b2DynamicTree> tree_;
  std::vector<Box2> boxes_;
  Box2 query_;
  Ray2 ray_;
  std::vector<Id>* out_ids_ = nullptr;
  std::vector<RayHit>* out_hits_ = nullptr;
  bool closest_ = false, found_ = false;
  RayHit best_;
  std::size_t candidates_ = 0;
};

}  // namespace

std::unique_ptr<QueryPeer> make_box2d_query_peer() { return std::make_unique<Box2dQueryPeer>(); }

std::string box2d_version() {
  // The Debian 2.4.1 library's b2_version says 2.4.0: quote the package's CMake version when known.
  const std::string runtime = std::to_string(b2_version.major) + "." + std::to_string(b2_version.minor) + "." +
                              std::to_string(b2_version.revision);
#ifdef SAPLING_BENCH_BOX2D_VERSION
  if (runtime != SAPLING_BENCH_BOX2D_VERSION) return SAPLING_BENCH_BOX2D_VERSION " (b2_version " + runtime + ")";
#endif
  return runtime;
}

void add_box2d_contenders(std::vector<ContenderInfo>& out) {
  out.push_back(
      {"box2d", "Box2D", "Box2D 2.4 b2BroadPhase (b2DynamicTree, fattened boxes), 2D scenes only", Query::kComplete,
       [](const ContenderOptions&) -> std::unique_ptr<Contender> { return std::make_unique<Box2dContender>(false); }});
  out.push_back({"box2d-exact", "Box2D", "Box2D 2.4 b2BroadPhase, its pair set filtered by the exact test each frame",
                 Query::kComplete, [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<Box2dContender>(true);
                 }});
}

}  // namespace sapling::bench
