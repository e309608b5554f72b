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

}  // namespace

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
