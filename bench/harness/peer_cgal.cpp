// Peer: CGAL's box_intersection_d (Zomorodian and Edelsbrunner's streamed
// segment tree), recomputed from scratch each frame like any one-shot method.
// Closed boxes (Box_intersection_d::CLOSED), so touching boxes intersect as in
// sapling. "cgal" is box_self_intersection_d on the live boxes, which copies
// the sequence internally (CGAL's documented behaviour); "cgal-bipartite" is
// box_intersection_d of set A against set B.
//
// Ids: CGAL 5.5's Box_d<..., ID_EXPLICIT> numbers boxes from a global counter,
// so it cannot carry our ids; instead our own box struct models CGAL's
// BoxTraits concept (min_coord, max_coord, id, dimension) with the scenario id
// as the id, which CGAL also uses to break ties and to skip self pairs.
#include <CGAL/box_intersection_d.h>
#include <CGAL/version.h>

#include <vector>

#include "harness/contender.hpp"
#include "harness/peers.hpp"

namespace sapling::bench {
namespace {

struct CgalBox {
  float lo[3];
  float hi[3];
  std::size_t id;
};

// A model of CGAL's BoxTraits over CgalBox.
struct CgalBoxTraits {
  using NT = float;
  using Box_parameter = const CgalBox&;
  using ID = std::size_t;
  static NT min_coord(Box_parameter b, int dim) { return b.lo[dim]; }
  static NT max_coord(Box_parameter b, int dim) { return b.hi[dim]; }
  static std::size_t id(Box_parameter b) { return b.id; }
  static int dimension() { return 3; }
};

CgalBox to_cgal(const Box3& b, Id id) {
  return CgalBox{{b.min[0], b.min[1], b.min[2]}, {b.max[0], b.max[1], b.max[2]}, id};
}

class CgalContender final : public Contender {
 public:
  explicit CgalContender(Query query) : query_(query) {}

  std::string name() const override { return query_ == Query::kComplete ? "cgal" : "cgal-bipartite"; }
  Query query() const override { return query_; }
  std::string note() const override {
    return query_ == Query::kComplete ? "box_self_intersection_d, CLOSED, cutoff 10, recomputed each frame"
                                      : "box_intersection_d (bipartite), CLOSED, cutoff 10";
  }

  void reset(const SceneShape& shape) override {
    shape_ = shape;
    pairs_.clear();
  }

  void frame(const Scenario& s) override {
    const std::span<const Box3> all = s.boxes();
    boxes_.clear();
    boxes_b_.clear();
    for (const Id id : s.alive_ids()) {
      if (query_ == Query::kBipartite && id >= shape_.split) {
        boxes_b_.push_back(to_cgal(all[id], id));
      } else {
        boxes_.push_back(to_cgal(all[id], id));
      }
    }
    pairs_.clear();
    auto record = [this](const CgalBox& a, const CgalBox& b) {
      pairs_.push_back(make_pair(static_cast<Id>(a.id), static_cast<Id>(b.id)));
    };
    if (query_ == Query::kComplete) {
      CGAL::box_self_intersection_d(boxes_.begin(), boxes_.end(), record, CgalBoxTraits(), std::ptrdiff_t{10},
                                    CGAL::Box_intersection_d::CLOSED);
    } else {
      CGAL::box_intersection_d(boxes_.begin(), boxes_.end(), boxes_b_.begin(), boxes_b_.end(), record, CgalBoxTraits(),
                               std::ptrdiff_t{10}, CGAL::Box_intersection_d::CLOSED,
                               CGAL::Box_intersection_d::BIPARTITE);
    }
  }

  void pairs(std::vector<Pair>& out) override {
    out = pairs_;
    detail::sort_pairs(out);
  }
  std::size_t pair_count() override { return pairs_.size(); }

 private:
  Query query_;
  SceneShape shape_;
  std::vector<CgalBox> boxes_, boxes_b_;
  std::vector<Pair> pairs_;
};

}  // namespace

std::string cgal_version() { return CGAL_VERSION_STR; }

void add_cgal_contenders(std::vector<ContenderInfo>& out) {
  out.push_back({"cgal", "CGAL", "CGAL box_self_intersection_d, closed boxes, each frame from scratch",
                 Query::kComplete, [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<CgalContender>(Query::kComplete);
                 }});
  out.push_back({"cgal-bipartite", "CGAL", "CGAL box_intersection_d of set A against set B, closed boxes",
                 Query::kBipartite, [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<CgalContender>(Query::kBipartite);
                 }});
}

}  // namespace sapling::bench
