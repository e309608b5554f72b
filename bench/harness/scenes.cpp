// The scene catalogue and Terdiman's static random-box scene.
//
// Terdiman's generator: his benchmark (github.com/Pierre-Terdiman/BoxPruning,
// Shared/Main.cpp) calls srand(42) and rand() on Windows, so the published
// counts come from the MSVC runtime's rand(), a linear congruential generator
// x = x * 214013 + 2531011 (mod 2^32) returning (x >> 16) & 0x7fff. With it,
// and per box the three centres then the three half-extents as
// (rand() & 4095) - 2048 and rand() & 127, the closed-overlap pair counts are
// exactly 11,811 (10k boxes) and 1,144,045 (100k). glibc's rand() with the same
// order gives 11,677 and 1,143,197; no draw order tried with glibc's rand()
// (centres then extents, centre and extent per axis, & or %) gives the
// published counts, so the MSVC generator is reproduced here.
#include "harness/scenes.hpp"

#include "harness/changing_scenes.hpp"
#include "sapling/box_pruning.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>

namespace sapling::bench {
namespace {

// MSVC's rand(): 15-bit outputs of a 32-bit LCG.
class MsvcRand {
 public:
  explicit MsvcRand(std::uint32_t seed) : state_(seed) {}
  std::uint32_t next() {
    state_ = state_ * 214013u + 2531011u;
    return (state_ >> 16) & 0x7fffu;
  }

 private:
  std::uint32_t state_;
};

// A scenario whose boxes never change: frame 0 adds them all, step() does nothing.
class StaticScene final : public Scenario {
 public:
  StaticScene(std::vector<Box3> boxes, const Box3& world) : Scenario(3, make_params()) {
    const auto n = static_cast<Id>(boxes.size());
    boxes_ = std::move(boxes);
    alive_.assign(n, 1);
    alive_ids_.resize(n);
    for (Id id = 0; id < n; ++id) alive_ids_[id] = id;
    added_ = alive_ids_;
    world_ = world;
  }
  void step() override {
    ++frame_;
    added_.clear();
  }

 private:
  static ScenarioParams make_params() {
    ScenarioParams p;
    p.name = "terdiman";
    return p;
  }
};

// Mass insertion: the boxes of a W2 tracy scene of `live + inserted` cubes
// (nothing moving, no churn; 5% density once all are in). Frame 0 adds the
// first `live`, frame 1 the other `inserted` in one batch, later frames
// change nothing.
class MassInsertScene final : public Scenario {
 public:
  MassInsertScene(std::size_t live, std::size_t inserted) : Scenario(3, make_params(live + inserted)) {
    std::string error;
    const std::unique_ptr<Scenario> source = make_scenario(params_, &error);
    if (!source) throw std::runtime_error("scenario tracy: " + error);
    const std::span<const Box3> boxes = source->boxes();
    boxes_.assign(boxes.begin(), boxes.end());
    world_ = source->world();
    alive_.assign(boxes_.size(), 0);
    later_.reserve(inserted);
    for (const Id id : source->alive_ids()) (added_.size() < live ? added_ : later_).push_back(id);
    for (const Id id : added_) alive_[id] = 1;
    alive_ids_ = added_;
  }
  void step() override {
    added_.clear();
    if (++frame_ == 1) {
      added_.swap(later_);
      for (const Id id : added_) alive_[id] = 1;
      alive_ids_.insert(alive_ids_.end(), added_.begin(), added_.end());
    }
  }

 private:
  static ScenarioParams make_params(std::size_t n) {
    ScenarioParams p;
    p.name = "tracy";
    p.n = n;
    p.moving = 0;
    p.inserts = 0;
    p.removes = 0;
    return p;
  }
  std::vector<Id> later_;
};

// W1 unisize2d's squares seen one of two ways, the wrapped scenario's state
// copied after each step:
// - kFlat3d: as a 3D scene (z = [0, 1] for every box), so that a broad
//   phase keeps all three axes and every box overlaps every other on z
//   (Terdiman 2007, II.1: the bad case of one SAP);
// - kRoundedMetres: as a program in metres has them: each square of side 1
//   becomes one of side 0.1 around its centre, its bounds computed in float
//   as centre -+ 0.05 (the centre rounded to float first), so that they
//   round and the squares are of one size only up to rounding, as boxes
//   moved by float steps or built from float centres are (unisize's slower
//   path; auto's rule tells them apart). The pairs are not W1's: bounds
//   that round may touch or part where W1's exact ones did not.
class UnisizeView final : public Scenario {
 public:
  enum class View { kFlat3d, kRoundedMetres };
  UnisizeView(const ScenarioParams& params, View view) : Scenario(view == View::kFlat3d ? 3 : 2, params), view_(view) {
    std::string error;
    source_ = make_scenario(params_, &error);
    if (!source_) throw std::runtime_error("scenario unisize2d: " + error);
    copy();
  }
  void step() override {
    source_->step();
    ++frame_;
    copy();
  }

 private:
  static constexpr double kSide = 0.1;  // kRoundedMetres: a square's side
  void copy() {
    boxes_.assign(source_->boxes().begin(), source_->boxes().end());
    world_ = source_->world();
    if (view_ == View::kRoundedMetres) {
      for (Box3& b : boxes_) {
        for (int k = 0; k < 2; ++k) {
          const auto centre = static_cast<float>((double(b.min[k]) + double(b.max[k])) / 2 * kSide);
          b.min[k] = centre - float(kSide / 2);
          b.max[k] = centre + float(kSide / 2);
        }
      }
      for (int k = 0; k < 2 && world_; ++k) {
        world_->min[k] = float(world_->min[k] * kSide), world_->max[k] = float(world_->max[k] * kSide);
      }
    }
    alive_.assign(source_->alive().begin(), source_->alive().end());
    alive_ids_.assign(source_->alive_ids().begin(), source_->alive_ids().end());
    removed_.assign(source_->removed().begin(), source_->removed().end());
    moved_.assign(source_->moved().begin(), source_->moved().end());
    added_.assign(source_->added().begin(), source_->added().end());
  }
  View view_;
  std::unique_ptr<Scenario> source_;
};

// Issue 15's static level: side x side static floor tiles (ids 0 .. side^2 - 1)
// and `dynamics` cubes wandering over them (the ids after), which all move
// every frame. make_level_tiles() says how the tiles are laid out; each cube
// (edge 0.5) starts at a random point over the floor at a height in
// [0.3, 2], with a velocity of up to 0.1 per frame on x and y and 0.05 on z,
// and bounces off the world's walls and off z = 0.3 and z = 2: at any time
// about half of them touch the floor, each overlapping ~2.3 tiles. The
// random numbers come from scenario_math::Stream(seed, id), so a seed gives
// the same frames on every platform. Nothing is removed or added after
// frame 0; moved() is every dynamic id, ascending.
class LevelScene final : public Scenario {
 public:
  LevelScene(std::size_t side, std::size_t dynamics, bool dense, std::uint64_t seed)
      : Scenario(3, make_params(side * side + dynamics, seed)), side_(static_cast<double>(side)) {
    boxes_ = make_level_tiles(side, dense, seed);
    const auto statics = static_cast<Id>(boxes_.size());
    const auto n = static_cast<Id>(statics + dynamics);
    boxes_.resize(n);
    state_.resize(dynamics);
    for (std::size_t k = 0; k < dynamics; ++k) {
      scenario_math::Stream rng(seed, statics + k);
      Body& b = state_[k];
      b.p = {rng.u01() * (side_ - kEdge), rng.u01() * (side_ - kEdge), kLowZ + rng.u01() * (kHighZ - kLowZ)};
      b.v = {(rng.u01() * 2 - 1) * 0.1, (rng.u01() * 2 - 1) * 0.1, (rng.u01() * 2 - 1) * 0.05};
      boxes_[statics + k] = box_of(b);
    }
    alive_.assign(n, 1);
    alive_ids_.resize(n);
    for (Id id = 0; id < n; ++id) alive_ids_[id] = id;
    added_ = alive_ids_;
    world_ = Box3{{0.0f, 0.0f, 0.0f}, {static_cast<float>(side_ + 1.0), static_cast<float>(side_ + 1.0), 2.5f}};
  }
  void step() override {
    ++frame_;
    added_.clear();
    const std::size_t statics = boxes_.size() - state_.size();
    moved_.resize(state_.size());
    for (std::size_t k = 0; k < state_.size(); ++k) moved_[k] = static_cast<Id>(statics + k);
    const double high[3] = {side_ - kEdge, side_ - kEdge, kHighZ};
    const double low[3] = {0.0, 0.0, kLowZ};
    for (std::size_t k = 0; k < state_.size(); ++k) {
      Body& b = state_[k];
      for (int a = 0; a < 3; ++a) {
        b.p[a] += b.v[a];
        if (b.p[a] < low[a] || b.p[a] > high[a]) {
          b.v[a] = -b.v[a];
          b.p[a] = std::clamp(b.p[a], low[a], high[a]);
        }
      }
      boxes_[statics + k] = box_of(b);
    }
  }

 private:
  static constexpr double kEdge = 0.5, kLowZ = 0.3, kHighZ = 2.0;
  struct Body {
    std::array<double, 3> p, v;  // min corner, velocity per frame
  };
  static Box3 box_of(const Body& b) {
    Box3 box;
    for (int a = 0; a < 3; ++a) {
      box.min[a] = static_cast<float>(b.p[a]);
      box.max[a] = static_cast<float>(b.p[a] + kEdge);
    }
    return box;
  }
  static ScenarioParams make_params(std::size_t n, std::uint64_t seed) {
    ScenarioParams p;
    p.name = "static-level";
    p.n = n;
    p.seed = seed;
    p.speed_pm = 100;
    return p;
  }
  double side_;
  std::vector<Body> state_;
};

std::string count_name(std::size_t n) {
  if (n >= 1'000'000 && n % 1'000'000 == 0) return std::to_string(n / 1'000'000) + "m";
  if (n >= 1000 && n % 1000 == 0) return std::to_string(n / 1000) + "k";
  return std::to_string(n);
}

SceneSpec spec(std::string name, std::string description, std::function<std::unique_ptr<Scenario>()> make, int frames) {
  SceneSpec s;
  s.name = std::move(name);
  s.description = std::move(description);
  s.make = std::move(make);
  s.frames = frames;
  return s;
}

std::function<std::unique_ptr<Scenario>()> maker(ScenarioParams params) {
  return [params] {
    std::string error;
    std::unique_ptr<Scenario> s = make_scenario(params, &error);
    if (!s) throw std::runtime_error("scenario " + params.name + ": " + error);
    return s;
  };
}

SceneSpec allmoving(std::size_t n, int frames) {
  ScenarioParams p;
  p.name = "allmoving3d";
  p.n = n;
  return spec(
      "allmoving3d-" + count_name(n),
      "W3 allmoving3d: " + std::to_string(n) + " boxes of mixed sizes (0.5..4 per axis), all moving, 5% density",
      maker(p), frames);
}

// Every box moving a little each frame (a crowd, a settling pile, a slow
// drift): speed 1 per mille of the box size, a swap or two a box, where a
// walk pays for reading every box's endpoints (sap_policy.hpp,
// kWalkNsPerMove) and recomputing is faster.
SceneSpec allmoving_slow(std::size_t n, int frames) {
  ScenarioParams p;
  p.name = "allmoving3d";
  p.n = n;
  p.speed_pm = 1;
  return spec("allmoving3d-" + count_name(n) + "-slow",
              "W3 allmoving3d: " + std::to_string(n) +
                  " boxes of mixed sizes (0.5..4 per axis), all moving at speed 1 per mille, 5% density",
              maker(p), frames);
}

SceneSpec tracy(std::size_t n, int frames) {
  ScenarioParams p;
  p.name = "tracy";
  p.n = n;
  return spec("tracy-" + count_name(n),
              "W2 tracy: " + std::to_string(n) + " unit cubes, " + std::to_string(n / 10) + " moving, churn " +
                  std::to_string(n / 200) + " per frame, 5% density",
              maker(p), frames);
}

SceneSpec tracy_variant(std::size_t n, std::size_t moving, std::size_t churn, const std::string& suffix, int frames) {
  ScenarioParams p;
  p.name = "tracy";
  p.n = n;
  p.moving = moving;
  p.inserts = churn;
  p.removes = churn;
  return spec("tracy-" + count_name(n) + "-" + suffix,
              "W2 tracy: " + std::to_string(n) + " unit cubes, " + std::to_string(moving) + " moving, churn " +
                  std::to_string(churn) + " per frame",
              maker(p), frames);
}

// `live` resting cubes, then `inserted` more in one frame: frame 1 is the
// measured one (frames = 1, a fresh world per repetition). The one-by-one
// contender inserts the same boxes with an update() per box.
SceneSpec mass_insert(std::size_t live, std::size_t inserted, int reps) {
  SceneSpec s = spec(
      "mass-insert-" + count_name(inserted) + "-into-" + count_name(live),
      "W2 tracy cubes: " + std::to_string(inserted) + " inserted in one frame into a resting world of " +
          std::to_string(live) + " (5% density after); the frame timed is the insertion",
      [live, inserted] { return std::make_unique<MassInsertScene>(live, inserted); }, 1);
  s.reps = reps;
  s.one_frame = true;
  s.opt_in = {"sap-one-by-one"};
  return s;
}

// W1 unisize2d's parameters: n squares at density_pm per mille.
ScenarioParams w1_params(std::size_t n, unsigned density_pm) {
  ScenarioParams p;
  p.name = "unisize2d";
  p.n = n;
  p.density_pm = density_pm;
  return p;
}

SceneSpec unisize(std::size_t n, unsigned density_pm, int frames) {
  const ScenarioParams p = w1_params(n, density_pm);
  return spec("unisize2d-" + std::to_string(n) + "-d" + std::to_string(density_pm),
              "W1 unisize2d: " + std::to_string(n) + " equal squares, all moving, density " +
                  std::to_string(density_pm) + " per mille",
              maker(p), frames);
}

// W1's squares in metres, their bounds rounding (UnisizeView::kRoundedMetres).
SceneSpec rounded_unisize(std::size_t n, unsigned density_pm, int frames) {
  const ScenarioParams p = w1_params(n, density_pm);
  return spec(
      "unisize2d-" + std::to_string(n) + "-d" + std::to_string(density_pm) + "-rounded",
      "W1 unisize2d in metres: " + std::to_string(n) + " squares of side 0.1 built as float centre -+ 0.05 " +
          "(one size up to rounding), all moving, density " + std::to_string(density_pm) + " per mille",
      [p] { return std::make_unique<UnisizeView>(p, UnisizeView::View::kRoundedMetres); }, frames);
}

// The flat world: n moving squares of one size at one height, in 3D.
SceneSpec flat(std::size_t n, unsigned density_pm, int frames) {
  const ScenarioParams p = w1_params(n, density_pm);
  return spec(
      "flat-" + count_name(n) + "-d" + std::to_string(density_pm),
      "flat world: W1 unisize2d's " + std::to_string(n) +
          " moving squares at one height (z = [0, 1]) as a 3D "
          "scene, density " +
          std::to_string(density_pm) + " per mille",
      [p] { return std::make_unique<UnisizeView>(p, UnisizeView::View::kFlat3d); }, frames);
}

// W4 cluster, the clustering run of the unisize paper's Figure 4: n cubes on a
// plane heading for the centre, one converge-and-spread cycle of `cycle`
// frames, all of them measured.
SceneSpec cluster(std::size_t n, std::uint32_t cycle) {
  ScenarioParams p;
  p.name = "cluster";
  p.n = n;
  p.cycle = cycle;
  return spec("cluster-" + count_name(n) + "-c" + std::to_string(cycle),
              "W4 cluster: " + std::to_string(n) +
                  " unit cubes on a plane converging on the centre and spreading "
                  "out again, " +
                  std::to_string(cycle) + "-frame cycle, 25% footprint density",
              maker(p), static_cast<int>(cycle));
}

SceneSpec terdiman(std::size_t n, int reps, std::optional<std::size_t> expected) {
  SceneSpec s = spec(
      "terdiman-" + count_name(n),
      "Terdiman's random boxes: " + std::to_string(n) +
          " static boxes, centres in [-2048, 2047]^3, half-extents 0..127 (MSVC rand, seed 42)",
      [n] { return make_terdiman_scene(n); }, 0);
  s.reps = reps;
  s.is_static = true;
  s.expected_pairs = expected;
  return s;
}

// `moving` moving unit cubes (ids < moving) against `fixed` static ones: a W2
// tracy scene without churn, queried bipartite.
SceneSpec bipartite(std::size_t moving, std::size_t fixed, int frames) {
  ScenarioParams p;
  p.name = "tracy";
  p.n = moving + fixed;
  p.moving = moving;
  p.inserts = 0;
  p.removes = 0;
  SceneSpec s = spec("bipartite-" + count_name(moving) + "-" + count_name(fixed),
                     "bipartite: " + std::to_string(moving) + " moving unit cubes against " + std::to_string(fixed) +
                         " static ones (W2 tracy, no churn)",
                     maker(p), frames);
  s.split = static_cast<Id>(moving);
  return s;
}

// At a million boxes these take 10 to 70 s per frame (measured on a 2-core
// EPYC: fcl-ssap 53 s, sort-sweep 15 s, std-sort-sweep 10 s on allmoving3d-1m);
// the peers' "-exact" variants only add their filter to a peer that runs anyway.
SceneSpec huge(SceneSpec s) {
  s.skip_by_default = {"sort-sweep", "std-sort-sweep", "fcl-ssap", "bullet-dbvt-exact", "box2d-exact"};
  return s;
}

// Contenders that keep fattened boxes re-insert them all together a few frames
// after the mass insertion of frame 0, then spread out: warm-up frames let
// that settle before measuring.
SceneSpec warm(SceneSpec s, int warmup) {
  s.warmup = warmup;
  return s;
}

// Issue 15's static level (LevelScene): side^2 static tiles, dense (each
// overlapping its 8 neighbours: ~4 static-static overlaps per tile) or spread
// (none overlapping), and `dynamics` wandering cubes. Warm-up frames let
// Bullet's dbvt move the resting proxies into its fixed tree.
SceneSpec static_level(std::size_t side, std::size_t dynamics, bool dense, int frames) {
  const std::size_t statics = side * side;
  SceneSpec s = spec(
      "static-level-" + count_name(statics) + (dense ? "" : "-spread"),
      "static level: " + std::to_string(statics) + " static floor tiles " +
          (dense ? "overlapping their 8 neighbours (~4 static-static overlaps each)" : "spread apart (no overlap)") +
          ", " + std::to_string(dynamics) + " cubes wandering over them, all moving",
      [side, dynamics, dense] { return std::make_unique<LevelScene>(side, dynamics, dense, kLevelSeed); }, frames);
  s.static_below = static_cast<Id>(statics);
  s.warmup = 3;
  return s;
}

std::vector<SceneSpec> static_suite(bool quick) {
  if (quick) return {static_level(100, 200, true, 5), static_level(100, 200, false, 5)};
  return {static_level(1000, 10'000, true, 30), static_level(1000, 10'000, false, 30)};
}

// Issue 27: worlds whose workload changes as they run, and a plane of
// resting squares, from a new world's first frame on.
std::vector<SceneSpec> changing_suite(bool quick) {
  const std::size_t n = quick ? 8000 : 100'000, movers = quick ? 80 : 1000, batch = n / 10;
  const auto count = [](std::size_t k) { return count_name(k); };
  std::vector<SceneSpec> scenes;
  for (const std::size_t size : quick ? std::vector<std::size_t>{n} : std::vector<std::size_t>{n, 1'000'000}) {
    SceneSpec s = spec(
        "planar-resting-" + count(size),
        "a plane of " + std::to_string(size) + " resting unit squares (W1 unisize2d), " + std::to_string(movers) +
            " of them moving",
        [size, movers] { return make_planar_resting(size, movers); }, quick ? 20 : 150);
    scenes.push_back(size >= 1'000'000 ? huge(s) : s);
  }
  scenes.push_back(spec(
      "explosion-" + count(n),
      "W2 tracy: " + std::to_string(n) + " resting cubes, " + std::to_string(movers) +
          " moving; at frames 30-49 every third cube is thrown outward, then rests",
      [n, movers] { return make_explosion(n, movers, 30, 20); }, quick ? 60 : 100));
  scenes.push_back(spec(
      "streamed-" + count(n),
      "W2 tracy: a level of " + std::to_string(n) + " cubes (" + std::to_string(movers) + " moving) streamed in " +
          std::to_string(batch) + " at a time every 30 frames",
      [n, movers, batch] { return make_streamed_level(n, movers, batch, 30); }, quick ? 60 : 300));
  for (const std::size_t size : quick ? std::vector<std::size_t>{n} : std::vector<std::size_t>{n, 1'000'000}) {
    const std::size_t per_frame = movers / 4;
    SceneSpec s = spec(
        "wakeups-" + count(size),
        "W2 tracy: " + std::to_string(size) + " resting cubes, " + std::to_string(per_frame) +
            " more bumped awake each frame, each moving 4 frames then resting (a different " +
            std::to_string(4 * per_frame) + " moving each frame)",
        [size, per_frame] { return make_wakeups(size, per_frame, 4); }, quick ? 60 : 150);
    scenes.push_back(size >= 1'000'000 ? huge(s) : s);
  }
  scenes.push_back(spec(
      "refill-" + count(n),
      "W2 tracy: " + std::to_string(n) + " cubes (" + std::to_string(movers) +
          " moving), all removed at frame 40 and added again at frame 45",
      [n, movers] { return make_refill(n, movers, 40, 45); }, quick ? 60 : 100));
  return scenes;
}

std::vector<SceneSpec> one_shot(bool quick) {
  if (quick) {
    return {terdiman(10'000, 3, 11'811), allmoving(2000, 5),    tracy(5000, 5),
            unisize(4096, 200, 5),       unisize(4096, 800, 5), bipartite(100, 5000, 5)};
  }
  return {terdiman(10'000, 11, 11'811),
          terdiman(100'000, 5, 1'144'045),
          allmoving(10'000, 20),
          allmoving(100'000, 15),
          huge(allmoving(1'000'000, 3)),
          tracy(100'000, 15),
          tracy(200'000, 10),
          warm(unisize(131'072, 200, 12), 8),
          warm(unisize(131'072, 800, 12), 8),
          huge(unisize(1'048'576, 200, 5)),
          huge(unisize(1'048'576, 800, 5)),
          bipartite(1000, 100'000, 20)};
}

std::vector<SceneSpec> persistent(bool quick) {
  if (quick) {
    return {tracy(2000, 5),
            tracy(5000, 5),
            tracy_variant(5000, 500, 0, "churn0", 5),
            tracy_variant(5000, 0, 25, "static", 5),
            tracy_variant(5000, 5000, 25, "allmoving", 5),
            allmoving_slow(5000, 5),
            tracy_variant(5000, 250, 25, "moving5pc", 5),
            mass_insert(5000, 5000, 2)};
  }
  // Point 7 of issue 4: the scaling series (10% moving, 0.5% churn)...
  std::vector<SceneSpec> scenes{tracy(10'000, 30), tracy(50'000, 20), tracy(100'000, 15), tracy(200'000, 10)};
  for (SceneSpec& s : scenes) s.series = "tracy (10% moving, 0.5% churn)";
  // ... churn at 10k moving...
  for (const std::size_t churn : {0, 10, 100, 1000}) {
    scenes.push_back(tracy_variant(100'000, 10'000, churn, "churn" + std::to_string(churn), 15));
  }
  // ... nothing and everything moving...
  scenes.push_back(tracy_variant(100'000, 0, 500, "static", 15));
  scenes.push_back(tracy_variant(100'000, 100'000, 500, "allmoving", 10));
  scenes.push_back(allmoving_slow(100'000, 10));  // every box moving a little
  // ... the moving fraction where sap and recomputing cross (0.5% churn, as tracy-100k; 10% is tracy-100k)...
  for (const unsigned pc : {1u, 2u, 5u, 20u, 50u}) {
    scenes.push_back(tracy_variant(100'000, 1000 * pc, 500, "moving" + std::to_string(pc) + "pc", 15));
  }
  // ... mass insertion, batched and one box per update()...
  scenes.push_back(mass_insert(100'000, 100'000, 3));
  // ... and a 2D scene, where Box2D's tree runs (all moving: sap recomputes).
  scenes.push_back(warm(unisize(131'072, 200, 12), 8));
  return scenes;
}

// Issue 13: persistent worlds up to a million objects, worst frames and memory.
std::vector<SceneSpec> persistent_large(bool quick) {
  if (quick) {
    std::vector<SceneSpec> scenes{tracy(2000, 10), tracy(8000, 10)};
    for (SceneSpec& s : scenes) s.series = "tracy (10% moving, 0.5% churn)";
    scenes.push_back(tracy_variant(8000, 100, 0, "resting", 10));
    scenes.push_back(flat(4096, 200, 10));
    scenes.push_back(cluster(4000, 20));
    return scenes;
  }
  // The scaling series (10% moving, 0.5% churn)...
  std::vector<SceneSpec> scenes{tracy(10'000, 40), tracy(100'000, 20), tracy(200'000, 15), huge(tracy(500'000, 10)),
                                huge(tracy(1'000'000, 10))};
  for (SceneSpec& s : scenes) s.series = "tracy (10% moving, 0.5% churn)";
  // ... resting worlds with a thousand movers and no churn...
  scenes.push_back(huge(tracy_variant(1'000'000, 1000, 0, "resting", 20)));
  scenes.push_back(tracy_variant(100'000, 1000, 0, "resting", 30));
  // ... 1% moving, a flat world, the cluster run, heavy churn.
  scenes.push_back(tracy_variant(100'000, 1000, 500, "moving1pc", 20));
  scenes.push_back(flat(100'000, 200, 15));
  scenes.push_back(cluster(100'000, 500));
  scenes.push_back(tracy_variant(100'000, 10'000, 1000, "churn1000", 20));
  return scenes;
}

std::vector<SceneSpec> unisize_grid(bool quick) {
  if (quick) {
    return {unisize(4096, 200, 5), unisize(4096, 800, 5), unisize(16'384, 400, 5), rounded_unisize(4096, 400, 5)};
  }
  std::vector<SceneSpec> scenes;
  for (const std::size_t n : {131'072, 262'144, 524'288, 1'048'576}) {
    for (const unsigned d : {200u, 400u, 600u, 800u}) {
      scenes.push_back(n > 300'000 ? huge(unisize(n, d, 5)) : warm(unisize(n, d, 12), 8));
    }
  }
  // The same squares as a program in metres has them (one size up to rounding).
  for (const std::size_t n : {131'072, 1'048'576}) {
    for (const unsigned d : {200u, 800u}) {
      scenes.push_back(n > 300'000 ? huge(rounded_unisize(n, d, 5)) : warm(rounded_unisize(n, d, 12), 8));
    }
  }
  return scenes;
}

// Figure 4 of the unisize paper: 100k cubes, 500 frames.
std::vector<SceneSpec> cluster_run(bool quick) {
  if (quick) return {cluster(4000, 20)};
  return {cluster(100'000, 500)};
}

// Tracy, Buss and Woods 2009 (issue 14, item 6): W2 tracy cubes (5% density,
// 10% of a width per step, bouncing), as in their section 4. Scene names say
// the figure and the varied parameter; each scene runs only its figure's
// contenders (SceneSpec::only) unless --contenders names others.
SceneSpec tracy_figure(const std::string& name, std::size_t n, std::size_t moving, std::size_t inserts,
                       std::size_t removes, int frames, std::vector<std::string> contenders, std::string series = {}) {
  ScenarioParams p;
  p.name = "tracy";
  p.n = n;
  p.moving = moving;
  p.inserts = inserts;
  p.removes = removes;
  SceneSpec s = spec(name,
                     "W2 tracy: " + std::to_string(n) + " unit cubes, " + std::to_string(moving) + " moving, " +
                         std::to_string(inserts) + " inserted and " + std::to_string(removes) + " removed per frame",
                     maker(p), frames);
  s.only = std::move(contenders);
  s.series = std::move(series);
  return s;
}

std::vector<SceneSpec> tracy_paper(bool quick) {
  // sap-walk: sap made to walk every frame (swaps, then merges), the paper's plain SAP;
  // sap:path=batch: every frame by the single-pass batch update, the paper's batch SAP (3.2.1).
  const std::vector<std::string> fig2{"sap-walk", "sap"};
  const std::vector<std::string> single{"segmented-sap", "sap", "sap:path=batch", "sap-walk"};
  // multi-sap:cells=segmented: the grid of segmented cells of Figures 10 and 11.
  const std::vector<std::string> grid{
      "multi-sap", "multi-sap:cells=segmented", "segmented-sap", "sap", "octree", "sap:path=batch", "sap-walk"};
  std::vector<SceneSpec> scenes;
  // Figure 2: swaps of the plain SAP against n (10% moving, no churn).
  const std::vector<std::size_t> fig2_n =
      quick ? std::vector<std::size_t>{1000, 2000, 5000}
            : std::vector<std::size_t>{1000, 2000, 5000, 10'000, 20'000, 50'000, 100'000};
  for (const std::size_t n : fig2_n) {
    scenes.push_back(tracy_figure("tracy-fig2-" + count_name(n), n, n / 10, 0, 0, quick ? 3 : 30, fig2,
                                  "Figure 2: plain SAP, 10% moving, no churn"));
  }
  // Figure 8: 3,000 cubes, one insertion and one removal per frame, the moving count varied.
  const std::vector<std::size_t> fig8_moving =
      quick ? std::vector<std::size_t>{0, 150, 3000} : std::vector<std::size_t>{0, 150, 300, 600, 1200, 3000};
  for (const std::size_t moving : fig8_moving) {
    scenes.push_back(
        tracy_figure("tracy-fig8-m" + std::to_string(moving), 3000, moving, 1, 1, quick ? 5 : 1000, single));
    scenes.back().reps = quick ? 1 : 3;  // sub-ms frames: three runs spread over time, against the machine's load
  }
  // Figure 9: 3,000 cubes, 150 moving, insertions + removals per frame varied.
  const std::vector<std::size_t> fig9_events =
      quick ? std::vector<std::size_t>{2, 80} : std::vector<std::size_t>{2, 10, 20, 40, 80, 160, 320};
  for (const std::size_t e : fig9_events) {
    scenes.push_back(
        tracy_figure("tracy-fig9-e" + std::to_string(e), 3000, 150, e / 2, e / 2, quick ? 5 : 1000, single));
    scenes.back().reps = quick ? 1 : 3;
  }
  // Figure 10: 100k cubes (quick: 10k), 10% moving, insertions + removals per frame varied.
  const std::size_t fig10_n = quick ? 10'000 : 100'000;
  const std::vector<std::size_t> fig10_events =
      quick ? std::vector<std::size_t>{2, 200} : std::vector<std::size_t>{2, 20, 200, 2000, 8000};
  for (const std::size_t e : fig10_events) {
    scenes.push_back(tracy_figure((quick ? "tracy-fig10-10k-e" : "tracy-fig10-e") + std::to_string(e), fig10_n,
                                  fig10_n / 10, e / 2, e / 2, quick ? 3 : 20, grid));
    scenes.back().reps = quick ? 1 : 3;
  }
  // Figure 11: 10k..200k cubes, 10% moving, 0.5% inserted and 0.5% removed per frame.
  const std::vector<std::size_t> fig11_n = quick ? std::vector<std::size_t>{2000, 5000, 10'000}
                                                 : std::vector<std::size_t>{10'000, 20'000, 50'000, 100'000, 200'000};
  for (const std::size_t n : fig11_n) {
    scenes.push_back(tracy_figure("tracy-fig11-" + count_name(n), n, n / 10, n / 200, n / 200, quick ? 3 : 20, grid,
                                  "Figure 11: 10% moving, 0.5% + 0.5% churn"));
    scenes.back().reps = quick ? 1 : 3;
  }
  return scenes;
}

void append_new(std::vector<SceneSpec>& out, std::vector<SceneSpec> more) {
  for (SceneSpec& s : more) {
    bool seen = false;
    for (const SceneSpec& t : out) seen = seen || t.name == s.name;
    if (!seen) out.push_back(std::move(s));
  }
}

}  // namespace

std::vector<Box3> make_level_tiles(std::size_t side, bool dense, std::uint64_t seed) {
  // Pitch 1; a tile's footprint is 1.02 (dense: it overlaps the tiles beside
  // and diagonally beside it) or 0.98 (spread: a gap of 0.02 between tiles);
  // its height, from 0, is 0.5 + u01 (stream of its id, Stream(seed ^ 1, id)).
  const double width = dense ? 1.02 : 0.98;
  std::vector<Box3> tiles(side * side);
  for (std::size_t j = 0; j < side; ++j) {
    for (std::size_t i = 0; i < side; ++i) {
      const std::size_t id = j * side + i;
      scenario_math::Stream rng(seed ^ 1u, id);
      const auto x = static_cast<double>(i), y = static_cast<double>(j);
      tiles[id] =
          Box3{{static_cast<float>(x), static_cast<float>(y), 0.0f},
               {static_cast<float>(x + width), static_cast<float>(y + width), static_cast<float>(0.5 + rng.u01())}};
    }
  }
  return tiles;
}

std::vector<QuerySceneSpec> query_scenes(bool quick) {
  const std::size_t side = quick ? 100 : 1000;
  const std::size_t queries = quick ? 1000 : 10'000;
  const int frames = quick ? 2 : 3;
  // Rays against dynamic objects test every box (BroadPhase::cast_ray): 100 of them.
  constexpr std::size_t kDynamicRays = 100;
  return {
      {"level-3d-static", 3, true, "sap", side, queries, queries, frames, "bullet-dbvt"},
      {"level-3d-dynamic", 3, false, "octree", side, queries, kDynamicRays, frames, "bullet-dbvt"},
      {"level-2d-static", 2, true, "sap", side, queries, queries, frames, "box2d"},
  };
}

QueryBatch make_query_batch(const QuerySceneSpec& spec) {
  QueryBatch batch;
  const auto extent = static_cast<double>(spec.side);
  const bool flat = spec.dims == 2;
  for (std::size_t k = 0; k < spec.queries; ++k) {
    scenario_math::Stream rng(kLevelSeed, (std::uint64_t{1} << 32) + k);
    const double cx = rng.u01() * extent, cy = rng.u01() * extent;
    const double hx = 0.5 + 1.5 * rng.u01(), hy = 0.5 + 1.5 * rng.u01();
    batch.boxes.push_back(Box3{{static_cast<float>(cx - hx), static_cast<float>(cy - hy), 0.0f},
                               {static_cast<float>(cx + hx), static_cast<float>(cy + hy), flat ? 0.0f : 2.5f}});
  }
  for (std::size_t k = 0; k < spec.rays; ++k) {
    scenario_math::Stream rng(kLevelSeed, (std::uint64_t{1} << 33) + k);
    const double ox = rng.u01() * extent, oy = rng.u01() * extent, oz = 0.2 + 1.8 * rng.u01();
    const double heading = rng.u01() * 6.283185307179586, slope = (rng.u01() * 2 - 1) * 0.3;
    Ray3 r;
    r.origin = {static_cast<float>(ox), static_cast<float>(oy), flat ? 0.0f : static_cast<float>(oz)};
    r.direction = {static_cast<float>(std::cos(heading)), static_cast<float>(std::sin(heading)),
                   flat ? 0.0f : static_cast<float>(slope)};
    r.max_t = 16.0f;
    batch.rays.push_back(r);
  }
  return batch;
}

std::size_t level_overlaps(std::size_t side, bool dense) {
  std::vector<IndexPair> overlaps;
  BoxPruner().complete(make_level_tiles(side, dense, kLevelSeed), overlaps);
  return overlaps.size();
}

std::unique_ptr<Scenario> make_terdiman_scene(std::size_t n) {
  MsvcRand rng(42);
  std::vector<Box3> boxes(n);
  for (Box3& b : boxes) {
    float centre[3], extent[3];
    for (float& c : centre) c = static_cast<float>(rng.next() & 4095) - 2048.0f;
    for (float& e : extent) e = static_cast<float>(rng.next() & 127);
    for (int k = 0; k < 3; ++k) {
      b.min[k] = centre[k] - extent[k];
      b.max[k] = centre[k] + extent[k];
    }
  }
  const Box3 world{{-2048.0f - 127.0f, -2048.0f - 127.0f, -2048.0f - 127.0f},
                   {2047.0f + 127.0f, 2047.0f + 127.0f, 2047.0f + 127.0f}};
  return std::make_unique<StaticScene>(std::move(boxes), world);
}

SceneShape shape_of(const SceneSpec& spec, const Scenario& scenario) {
  SceneShape shape;
  shape.name = spec.name;
  shape.dims = scenario.dims();
  shape.n = scenario.alive_ids().size();
  shape.world = scenario.world();
  shape.split = spec.split;
  shape.is_static = spec.is_static;
  shape.static_below = spec.static_below;
  const std::span<const Id> ids = scenario.alive_ids();
  // One size as unisize takes it (the rule of sapling/unisize.hpp: up to
  // rounding), so that unisize runs on the rounded scenes too.
  shape.one_size = !ids.empty();
  if (shape.one_size) {
    const Box3& first = scenario.boxes()[ids.front()];
    for (const Id id : ids) {
      const Box3& b = scenario.boxes()[id];
      for (int k = 0; k < shape.dims; ++k) {
        const double size = double(first.max[k] - first.min[k]);
        const double m0 = std::max(std::abs(double(first.min[k])), std::abs(double(first.max[k])));
        const double m = std::max(std::abs(double(b.min[k])), std::abs(double(b.max[k])));
        shape.one_size &= std::abs((double(b.max[k]) - double(b.min[k])) - size) <= 0x1p-10 * size + 0x1p-16 * (m + m0);
      }
    }
  }
  return shape;
}

std::vector<std::string> suite_names() {
  return {"one-shot", "persistent", "persistent-large", "unisize", "cluster", "tracy", "static", "changing"};
}

std::vector<SceneSpec> suite_scenes(const std::string& suite, bool quick) {
  if (suite == "one-shot") return one_shot(quick);
  if (suite == "persistent") return persistent(quick);
  if (suite == "persistent-large") return persistent_large(quick);
  if (suite == "unisize") return unisize_grid(quick);
  if (suite == "cluster") return cluster_run(quick);
  if (suite == "tracy") return tracy_paper(quick);
  if (suite == "static") return static_suite(quick);
  if (suite == "changing") return changing_suite(quick);
  if (suite == "all") {
    std::vector<SceneSpec> scenes;
    for (const std::string& name : suite_names()) append_new(scenes, suite_scenes(name, quick));
    return scenes;
  }
  return {};
}

std::vector<SceneSpec> all_scenes() {
  std::vector<SceneSpec> scenes = suite_scenes("all", false);
  append_new(scenes, suite_scenes("all", true));
  return scenes;
}

std::optional<SceneSpec> find_scene(const std::string& name) {
  for (SceneSpec& s : all_scenes()) {
    if (s.name == name) return std::move(s);
  }
  return std::nullopt;
}

}  // namespace sapling::bench
