// sapling's contenders: every registered algorithm through the persistent
// BroadPhase, one-shot box pruning (complete and bipartite) on the dense live
// boxes, a plain std::sort sort-and-sweep on x, and one-shot brute force.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "algorithms/sap/sap.hpp"
#include "harness/contender.hpp"
#include "harness/peers.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "sapling/task_system.hpp"
#include "sapling/unisize.hpp"

namespace sapling::bench {
namespace {

// O(n^2) contenders stop here: beyond, one frame takes seconds.
constexpr std::size_t kBruteMaxBoxes = 20'000;
constexpr double kBruteMaxTests = 2e8;

bool brute_fits(const SceneShape& shape, std::string* why) {
  if (shape.n <= kBruteMaxBoxes) return true;
  if (why) *why = "O(n^2): only up to n = " + std::to_string(kBruteMaxBoxes);
  return false;
}

// The live ids of the scenario and their boxes, densely.
void gather_live(const Scenario& s, std::vector<Id>& ids, std::vector<Box3>& boxes) {
  const std::span<const Id> live = s.alive_ids();
  ids.assign(live.begin(), live.end());
  detail::gather(s, live, boxes);
}

// The live boxes split into set A (ids < split) and set B (the others).
void gather_bipartite(const Scenario& s, Id split, std::vector<Id>& ids_a, std::vector<Box3>& boxes_a,
                      std::vector<Id>& ids_b, std::vector<Box3>& boxes_b) {
  ids_a.clear();
  boxes_a.clear();
  ids_b.clear();
  boxes_b.clear();
  const std::span<const Box3> all = s.boxes();
  for (const Id id : s.alive_ids()) {
    if (id < split) {
      ids_a.push_back(id);
      boxes_a.push_back(all[id]);
    } else {
      ids_b.push_back(id);
      boxes_b.push_back(all[id]);
    }
  }
}

Box2 flat(const Box3& b) { return Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}}; }

// A registered algorithm behind the persistent BroadPhase: removed, moved and
// added ids are staged as batches, then update().
class BroadPhaseContender final : public Contender {
 public:
  /// one_by_one: each added box gets an update() of its own (after the
  /// frame's removals and moves), the way a caller without batches inserts.
  BroadPhaseContender(const AlgorithmInfo& info, unsigned threads, bool one_by_one = false)
      : algorithm_(info.name), any_box_(info.accepts_any_box), threads_(threads), one_by_one_(one_by_one) {}

  std::string name() const override { return one_by_one_ ? algorithm_ + "-one-by-one" : algorithm_; }
  std::string note() const override {
    return one_by_one_ ? "persistent BroadPhase, one update() per inserted box (batch insertion's baseline)"
                       : "persistent BroadPhase (add/move/remove + update)";
  }
  bool supports(const SceneShape& shape, std::string* why) const override {
    if (!any_box_ && !shape.one_size) {
      if (why) *why = "boxes of one size only";
      return false;
    }
    return algorithm_ != "brute" || brute_fits(shape, why);
  }
  bool handles_statics() const override { return !one_by_one_; }

  void reset(const SceneShape& shape) override {
    Options options;
    options.dims = shape.dims;
    options.threads = threads_;
    bp_ = BroadPhase::create(algorithm_, options);
    if (!bp_) throw std::runtime_error("no algorithm named " + algorithm_);
    dims_ = shape.dims;
    static_below_ = shape.static_below;
  }

  void frame(const Scenario& s) override {
    check(bp_->remove(s.removed()));
    stage(s, s.moved(), false);
    if (one_by_one_ && bp_->frame() > 0) {
      bp_->update();
      const std::span<const Id> added = s.added();
      for (std::size_t k = 0; k < added.size(); ++k) {
        stage(s, added.subspan(k, 1), true);
        bp_->update();
      }
      return;
    }
    if (static_below_ == 0) {
      stage(s, s.added(), true);
    } else {
      // Static objects (ids below static_below_) go in as Motion::kStatic:
      // the broad phase keeps them in its tree and never pairs two of them.
      static_ids_.clear();
      dynamic_ids_.clear();
      for (const Id id : s.added()) (id < static_below_ ? static_ids_ : dynamic_ids_).push_back(id);
      stage(s, static_ids_, true, Motion::kStatic);
      stage(s, dynamic_ids_, true);
    }
    bp_->update();
  }

  void pairs(std::vector<Pair>& out) override { bp_->sorted_pairs(out); }
  std::size_t pair_count() override { return bp_->pairs().size(); }
  std::optional<Memory> memory() const override {
    if (!bp_) return std::nullopt;
    const std::size_t pair_bytes = bp_->pair_memory_bytes();
    return Memory{bp_->memory_bytes() - pair_bytes, pair_bytes};
  }

 private:
  void stage(const Scenario& s, std::span<const Id> ids, bool add, Motion motion = Motion::kDynamic) {
    if (ids.empty()) return;
    const std::span<const Box3> all = s.boxes();
    if (dims_ == 2) {
      boxes2_.resize(ids.size());
      for (std::size_t k = 0; k < ids.size(); ++k) boxes2_[k] = flat(all[ids[k]]);
      check(add ? bp_->add(ids, boxes2_, {}, motion) : bp_->move(ids, boxes2_));
    } else {
      detail::gather(s, ids, boxes3_);
      check(add ? bp_->add(ids, boxes3_, {}, motion) : bp_->move(ids, boxes3_));
    }
  }
  static void check(const Status& status) {
    if (!status) throw std::runtime_error(status.message());
  }

  std::string algorithm_;
  bool any_box_;
  unsigned threads_;
  bool one_by_one_;
  int dims_ = 3;
  Id static_below_ = 0;
  std::unique_ptr<BroadPhase> bp_;
  std::vector<Box3> boxes3_;
  std::vector<Box2> boxes2_;
  std::vector<Id> static_ids_, dynamic_ids_;
};

// Tracy, Buss and Woods' Figure 2: the plain sweep-and-prune's swaps. A "sap"
// BroadPhase whose detail::SweepAndPrune walks every frame (set_walk_only:
// swaps for the moves, batch merges for the additions, never the resting-set
// or recomputation paths), reporting its running total of swaps.
class SapWalkContender final : public Contender {
 public:
  std::string name() const override { return "sap-walk"; }
  std::string note() const override {
    return "sap walking every frame (SweepAndPrune::set_walk_only): swaps for the moves, batch merge for the "
           "insertions, swaps counted";
  }
  bool supports(const SceneShape& shape, std::string* why) const override {
    if (shape.dims == 3) return true;
    if (why) *why = "3D scenes only";
    return false;
  }
  std::optional<Memory> memory() const override {
    if (!bp_) return std::nullopt;
    const std::size_t pair_bytes = bp_->pair_memory_bytes();
    return Memory{bp_->memory_bytes() - pair_bytes, pair_bytes};
  }
  void reset(const SceneShape& shape) override {
    Options options;
    options.dims = shape.dims;
    sap_ = nullptr;
    bp_ = BroadPhase::create(
        "sap",
        [this](const Options& o) {
          auto sap = std::make_unique<sapling::detail::SweepAndPrune>(o);
          sap->set_walk_only(true);
          sap_ = sap.get();
          return std::unique_ptr<Algorithm>(std::move(sap));
        },
        options);
    if (!bp_ || !sap_) throw std::runtime_error("cannot create the walking sap");
  }
  void frame(const Scenario& s) override {
    check(bp_->remove(s.removed()));
    if (!s.moved().empty()) {
      detail::gather(s, s.moved(), boxes_);
      check(bp_->move(s.moved(), boxes_));
    }
    if (!s.added().empty()) {
      detail::gather(s, s.added(), boxes_);
      check(bp_->add(s.added(), boxes_));
    }
    bp_->update();
  }
  void pairs(std::vector<Pair>& out) override { bp_->sorted_pairs(out); }
  std::size_t pair_count() override { return bp_->pairs().size(); }
  std::optional<Counter> counter() const override {
    if (!sap_) return std::nullopt;
    return Counter{"swaps", sap_->counters().swaps};
  }

 private:
  static void check(const Status& status) {
    if (!status) throw std::runtime_error(status.message());
  }
  std::unique_ptr<BroadPhase> bp_;
  const sapling::detail::SweepAndPrune* sap_ = nullptr;
  std::vector<Box3> boxes_;
};

// A contender that recomputes every pair each frame from the dense live boxes.
class OneShotContender : public Contender {
 public:
  void reset(const SceneShape& shape) override {
    shape_ = shape;
    pairs_.clear();
  }
  void pairs(std::vector<Pair>& out) override {
    out = pairs_;
    detail::sort_pairs(out);
  }
  std::size_t pair_count() override { return pairs_.size(); }

 protected:
  // Index pairs into `ids` as id pairs, into pairs_.
  void to_id_pairs(const std::vector<IndexPair>& found, std::span<const Id> ids_a, std::span<const Id> ids_b) {
    pairs_.resize(found.size());
    for (std::size_t k = 0; k < found.size(); ++k) pairs_[k] = make_pair(ids_a[found[k].i], ids_b[found[k].j]);
  }

  SceneShape shape_;
  std::vector<Pair> pairs_;
  std::vector<Id> ids_, ids_b_;
  std::vector<Box3> boxes_, boxes_b_;
  std::vector<IndexPair> found_;
};

// BoxPruner::complete (or bipartite) on the dense live boxes.
class BoxPruningOneShot final : public OneShotContender {
 public:
  BoxPruningOneShot(Query query, unsigned threads)
      : query_(query), pool_(threads != 1 ? std::make_unique<ThreadPool>(threads) : nullptr), pruner_(pool_.get()) {}

  std::string name() const override {
    return query_ == Query::kComplete ? "box-pruning-oneshot" : "box-pruning-bipartite";
  }
  Query query() const override { return query_; }
  std::string note() const override {
    return "BoxPruner::" + std::string(query_ == Query::kComplete ? "complete" : "bipartite") + ", " +
           std::to_string(pool_ ? pool_->concurrency() : 1) + " thread(s)";
  }

  bool handles_statics() const override { return query_ == Query::kComplete; }

  void frame(const Scenario& s) override {
    found_.clear();
    if (query_ == Query::kComplete && shape_.has_statics()) {
      // The pair rule in one shot: the dynamic boxes among themselves, then
      // (bipartite) against the static ones; statics are never swept together.
      gather_bipartite(s, shape_.static_below, ids_b_, boxes_b_, ids_, boxes_);
      pruner_.complete(boxes_, found_);
      to_id_pairs(found_, ids_, ids_);
      found_.clear();
      pruner_.bipartite(boxes_, boxes_b_, found_);
      const std::size_t dynamic_pairs = pairs_.size();
      pairs_.resize(dynamic_pairs + found_.size());
      for (std::size_t k = 0; k < found_.size(); ++k) {
        pairs_[dynamic_pairs + k] = make_pair(ids_[found_[k].i], ids_b_[found_[k].j]);
      }
    } else if (query_ == Query::kComplete) {
      gather_live(s, ids_, boxes_);
      pruner_.complete(boxes_, found_);
      to_id_pairs(found_, ids_, ids_);
    } else {
      gather_bipartite(s, shape_.split, ids_, boxes_, ids_b_, boxes_b_);
      pruner_.bipartite(boxes_, boxes_b_, found_);
      to_id_pairs(found_, ids_, ids_b_);
    }
  }

 private:
  Query query_;
  std::unique_ptr<ThreadPool> pool_;
  BoxPruner pruner_;
};

// UnisizePruner::complete on the dense live boxes: the unisize paper's
// Algorithm 1 alone, all pairs each frame, as its Table 1 times it.
class UnisizeOneShot final : public OneShotContender {
 public:
  std::string name() const override { return "unisize-oneshot"; }
  std::string note() const override { return "UnisizePruner::complete (Algorithm 1, all pairs each frame)"; }
  bool supports(const SceneShape& shape, std::string* why) const override {
    if (shape.one_size) return true;
    if (why) *why = "boxes of one size only";
    return false;
  }

  void frame(const Scenario& s) override {
    found_.clear();
    gather_live(s, ids_, boxes_);
    const Status status = pruner_.complete(boxes_, found_);
    if (!status) throw std::runtime_error(status.message());
    to_id_pairs(found_, ids_, ids_);
  }

 private:
  UnisizePruner pruner_;
};

// The textbook one-shot sort-and-sweep: std::sort by min.x, then each box
// scans forward while the next min.x is within its max.x, testing y and z.
class StdSortSweep final : public OneShotContender {
 public:
  std::string name() const override { return "std-sort-sweep"; }
  std::string note() const override { return "std::sort on min.x, forward scan, single axis"; }

  void frame(const Scenario& s) override {
    const std::span<const Box3> all = s.boxes();
    const std::span<const Id> live = s.alive_ids();
    keys_.resize(live.size());
    for (std::size_t k = 0; k < live.size(); ++k) keys_[k] = {all[live[k]].min[0], live[k]};
    std::sort(keys_.begin(), keys_.end(), [](const Key& a, const Key& b) { return a.min_x < b.min_x; });
    sorted_.resize(keys_.size());
    for (std::size_t k = 0; k < keys_.size(); ++k) sorted_[k] = all[keys_[k].id];
    pairs_.clear();
    for (std::size_t i = 0; i < sorted_.size(); ++i) {
      const Box3& a = sorted_[i];
      for (std::size_t j = i + 1; j < sorted_.size() && sorted_[j].min[0] <= a.max[0]; ++j) {
        const Box3& b = sorted_[j];
        if (a.min[1] <= b.max[1] && b.min[1] <= a.max[1] && a.min[2] <= b.max[2] && b.min[2] <= a.max[2]) {
          pairs_.push_back(make_pair(keys_[i].id, keys_[j].id));
        }
      }
    }
  }

 private:
  struct Key {
    float min_x;
    Id id;
  };
  std::vector<Key> keys_;
  std::vector<Box3> sorted_;
};

// Every pair tested: the reference for small scenes.
class BruteOneShot final : public OneShotContender {
 public:
  explicit BruteOneShot(Query query) : query_(query) {}

  std::string name() const override { return query_ == Query::kComplete ? "brute-oneshot" : "brute-bipartite"; }
  Query query() const override { return query_; }
  std::string note() const override { return "all pairs tested, O(n^2)"; }
  bool handles_statics() const override { return query_ == Query::kComplete; }
  bool supports(const SceneShape& shape, std::string* why) const override {
    if (query_ == Query::kComplete) return brute_fits(shape, why);
    // Bipartite: |A| * |B| tests, with |A| ~ split.
    const double tests = static_cast<double>(shape.split) * static_cast<double>(shape.n);
    if (tests <= kBruteMaxTests) return true;
    if (why) *why = "O(|A| |B|): too many tests";
    return false;
  }

  void frame(const Scenario& s) override {
    pairs_.clear();
    if (query_ == Query::kComplete) {
      gather_live(s, ids_, boxes_);
      for (std::size_t i = 0; i < boxes_.size(); ++i) {
        for (std::size_t j = i + 1; j < boxes_.size(); ++j) {
          const bool both_static = shape_.is_static_id(ids_[i]) && shape_.is_static_id(ids_[j]);
          if (!both_static && overlaps(boxes_[i], boxes_[j])) pairs_.push_back(make_pair(ids_[i], ids_[j]));
        }
      }
    } else {
      gather_bipartite(s, shape_.split, ids_, boxes_, ids_b_, boxes_b_);
      for (std::size_t i = 0; i < boxes_.size(); ++i) {
        for (std::size_t j = 0; j < boxes_b_.size(); ++j) {
          if (overlaps(boxes_[i], boxes_b_[j])) pairs_.push_back(make_pair(ids_[i], ids_b_[j]));
        }
      }
    }
  }

 private:
  Query query_;
};

}  // namespace

std::optional<ContenderInfo> sapling_contender_with_settings(const std::string& spec) {
  const std::size_t colon = spec.find(':');
  if (colon == std::string::npos) return std::nullopt;
  for (AlgorithmInfo algo : algorithms()) {
    if (algo.name != spec.substr(0, colon)) continue;
    algo.name = spec;  // BroadPhase::create's NAME:SETTINGS
    ContenderInfo info{spec, "sapling", "BroadPhase \"" + spec + "\" (settings other than the defaults)",
                       Query::kComplete, [algo](const ContenderOptions& o) -> std::unique_ptr<Contender> {
                         return std::make_unique<BroadPhaseContender>(algo, o.threads);
                       }};
    info.opt_in = true;
    return info;
  }
  return std::nullopt;
}

void add_sapling_contenders(std::vector<ContenderInfo>& out) {
  out.push_back({"box-pruning-oneshot", "sapling", "BoxPruner::complete on the dense live boxes each frame",
                 Query::kComplete, [](const ContenderOptions& o) -> std::unique_ptr<Contender> {
                   return std::make_unique<BoxPruningOneShot>(Query::kComplete, o.threads);
                 }});
  for (const AlgorithmInfo& algo : algorithms()) {
    out.push_back({algo.name, "sapling", "BroadPhase \"" + algo.name + "\": " + algo.description, Query::kComplete,
                   [algo](const ContenderOptions& o) -> std::unique_ptr<Contender> {
                     return std::make_unique<BroadPhaseContender>(algo, o.threads);
                   }});
  }
  // Opt-in: the mass-insertion scene asks for it; elsewhere it only repeats "sap" more slowly.
  for (const AlgorithmInfo& algo : algorithms()) {
    if (algo.name != "sap") continue;
    ContenderInfo info{"sap-one-by-one", "sapling",
                       "BroadPhase \"sap\", each box inserted after frame 0 in an update() of its own (opt-in)",
                       Query::kComplete, [algo](const ContenderOptions& o) -> std::unique_ptr<Contender> {
                         return std::make_unique<BroadPhaseContender>(algo, o.threads, true);
                       }};
    info.opt_in = true;
    out.push_back(std::move(info));
  }
  ContenderInfo swaps{
      "sap-walk", "sapling",
      "BroadPhase \"sap\" walking every frame (plain SAP + batch insertion), swaps counted (opt-in)", Query::kComplete,
      [](const ContenderOptions&) -> std::unique_ptr<Contender> { return std::make_unique<SapWalkContender>(); }};
  swaps.opt_in = true;
  out.push_back(std::move(swaps));
  out.push_back(
      {"unisize-oneshot", "sapling", "UnisizePruner::complete on the dense live boxes each frame", Query::kComplete,
       [](const ContenderOptions&) -> std::unique_ptr<Contender> { return std::make_unique<UnisizeOneShot>(); }});
  out.push_back(
      {"std-sort-sweep", "sapling", "reference one-shot: std::sort on min.x and a forward sweep", Query::kComplete,
       [](const ContenderOptions&) -> std::unique_ptr<Contender> { return std::make_unique<StdSortSweep>(); }});
  out.push_back({"brute-oneshot", "sapling", "one-shot brute force, n <= 20000", Query::kComplete,
                 [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<BruteOneShot>(Query::kComplete);
                 }});
  out.push_back({"box-pruning-bipartite", "sapling", "BoxPruner::bipartite of set A against set B each frame",
                 Query::kBipartite, [](const ContenderOptions& o) -> std::unique_ptr<Contender> {
                   return std::make_unique<BoxPruningOneShot>(Query::kBipartite, o.threads);
                 }});
  out.push_back({"brute-bipartite", "sapling", "every A box against every B box", Query::kBipartite,
                 [](const ContenderOptions&) -> std::unique_ptr<Contender> {
                   return std::make_unique<BruteOneShot>(Query::kBipartite);
                 }});
}

}  // namespace sapling::bench
