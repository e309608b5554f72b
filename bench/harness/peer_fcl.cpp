// Peer: FCL 0.7's broad-phase collision managers, used as FCL documents:
// one fcl::CollisionObjectd per box (a fcl::Boxd of the box's size, translated
// to its centre, so the object's AABB is exactly our box), registerObject on
// add (registerObjects in bulk at frame 0), unregisterObject on remove, the
// moved objects' AABBs recomputed and handed to update(), then collide() with
// a callback that records each reported pair. The callback does no narrow
// phase, so what is timed is the manager's broad phase.
//
// "fcl-dtree": DynamicAABBTreeCollisionManager (incremental per-object update).
// "fcl-ssap": SSaPCollisionManager (three sorted lists re-sorted on update,
// sweep on one axis). "fcl-sap": SaPCollisionManager (incremental SAP with
// endpoint lists and an overlap-pair list). All claim exact AABB overlap; the
// verification says whether they find every closed-box pair (the notes
// report that FCL's SaP managers miss touching boxes).
#include <fcl/broadphase/broadphase_SSaP.h>
#include <fcl/broadphase/broadphase_SaP.h>
#include <fcl/broadphase/broadphase_dynamic_AABB_tree.h>
#include <fcl/config.h>
#include <fcl/geometry/shape/box.h>
#include <fcl/narrowphase/collision_object.h>

#include <memory>
#include <vector>

#include "harness/contender.hpp"
#include "harness/peers.hpp"

namespace sapling::bench {
namespace {

enum class FclKind { kDynamicTree, kSSaP, kSaP };

// SaPCollisionManager inserts each object by walking its endpoint lists.
constexpr std::size_t kSaPMaxBoxes = 20'000;

void* as_user_pointer(Id id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }
Id from_user_pointer(const void* p) { return static_cast<Id>(reinterpret_cast<std::uintptr_t>(p)); }

fcl::Vector3d centre_of(const Box3& b) {
  return fcl::Vector3d((double{b.min[0]} + b.max[0]) / 2, (double{b.min[1]} + b.max[1]) / 2,
                       (double{b.min[2]} + b.max[2]) / 2);
}

class FclContender final : public Contender {
 public:
  explicit FclContender(FclKind kind) : kind_(kind) {}

  std::string name() const override {
    switch (kind_) {
      case FclKind::kDynamicTree:
        return "fcl-dtree";
      case FclKind::kSSaP:
        return "fcl-ssap";
      case FclKind::kSaP:
        return "fcl-sap";
    }
    return "fcl";
  }
  std::string note() const override {
    switch (kind_) {
      case FclKind::kDynamicTree:
        return "DynamicAABBTreeCollisionManager, update(moved) + collide";
      case FclKind::kSSaP:
        return "SSaPCollisionManager, update() + collide";
      case FclKind::kSaP:
        return "SaPCollisionManager, update(moved) + collide";
    }
    return {};
  }

  bool supports(const SceneShape& shape, std::string* why) const override {
    if (kind_ != FclKind::kSaP || shape.n <= kSaPMaxBoxes) return true;
    if (why) *why = "O(n) per insertion (4 s to insert 10k boxes): only up to n = " + std::to_string(kSaPMaxBoxes);
    return false;
  }

  void reset(const SceneShape& /*shape*/) override {
    manager_.reset();
    objects_.clear();
    switch (kind_) {
      case FclKind::kDynamicTree:
        manager_ = std::make_unique<fcl::DynamicAABBTreeCollisionManagerd>();
        break;
      case FclKind::kSSaP:
        manager_ = std::make_unique<fcl::SSaPCollisionManagerd>();
        break;
      case FclKind::kSaP:
        manager_ = std::make_unique<fcl::SaPCollisionManagerd>();
        break;
    }
    pairs_.clear();
  }

  void frame(const Scenario& s) override {
    const std::span<const Box3> boxes = s.boxes();
    for (const Id id : s.removed()) {
      manager_->unregisterObject(objects_[id].get());
      objects_[id].reset();
    }
    changed_.clear();
    for (const Id id : s.moved()) {
      fcl::CollisionObjectd* object = objects_[id].get();
      object->setTranslation(centre_of(boxes[id]));
      object->computeAABB();
      changed_.push_back(object);
    }
    added_.clear();
    for (const Id id : s.added()) {
      if (id >= objects_.size()) objects_.resize(id + 1);
      const Box3& b = boxes[id];
      auto shape = std::make_shared<fcl::Boxd>(double{b.max[0]} - b.min[0], double{b.max[1]} - b.min[1],
                                               double{b.max[2]} - b.min[2]);
      fcl::Transform3d pose = fcl::Transform3d::Identity();
      pose.translation() = centre_of(b);
      objects_[id] = std::make_unique<fcl::CollisionObjectd>(shape, pose);
      objects_[id]->setUserData(as_user_pointer(id));
      added_.push_back(objects_[id].get());
    }
    if (manager_->empty()) {
      manager_->registerObjects(added_);  // bulk build
      manager_->setup();
    } else {
      for (fcl::CollisionObjectd* object : added_) manager_->registerObject(object);
    }
    if (!changed_.empty()) manager_->update(changed_);
    pairs_.clear();
    manager_->collide(&pairs_, &FclContender::record);
  }

  void pairs(std::vector<Pair>& out) override {
    out = pairs_;
    detail::sort_pairs(out);
  }
  std::size_t pair_count() override { return pairs_.size(); }

 private:
  static bool record(fcl::CollisionObjectd* a, fcl::CollisionObjectd* b, void* data) {
    static_cast<std::vector<Pair>*>(data)->push_back(
        make_pair(from_user_pointer(a->getUserData()), from_user_pointer(b->getUserData())));
    return false;  // keep going
  }

  FclKind kind_;
  std::unique_ptr<fcl::BroadPhaseCollisionManagerd> manager_;
  std::vector<std::unique_ptr<fcl::CollisionObjectd>> objects_;  // by scenario id
  std::vector<fcl::CollisionObjectd*> changed_, added_;
  std::vector<Pair> pairs_;
};

}  // namespace

std::string fcl_version() { return FCL_VERSION; }

void add_fcl_contenders(std::vector<ContenderInfo>& out) {
  out.push_back({"fcl-dtree", "FCL", "FCL DynamicAABBTreeCollisionManager (broad phase only)", Query::kComplete,
                 [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<FclContender>(FclKind::kDynamicTree);
                 }});
  out.push_back({"fcl-ssap", "FCL", "FCL SSaPCollisionManager (simple sweep and prune, broad phase only)",
                 Query::kComplete, [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<FclContender>(FclKind::kSSaP);
                 }});
  out.push_back({"fcl-sap", "FCL", "FCL SaPCollisionManager (incremental sweep and prune, broad phase only)",
                 Query::kComplete, [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<FclContender>(FclKind::kSaP);
                 }});
}

}  // namespace sapling::bench
