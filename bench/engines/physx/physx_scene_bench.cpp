// A pile of boxes through PhysX 5's PxScene, its broad phase chosen through
// PhysX's own factory (Bp::BroadPhase::create, patched by physx_factory.patch
// to ask sapling_bp.cpp first): PhysX's ABP and MBP, and sapling with `auto`
// and named algorithms. Benchmark only (issue 30, item 4); built and run by
// physx_engine.sh, which documents the options.
//
// Scene: a static ground box (PhysX's static group) walled in by four static
// boxes, N dynamic boxes of random sizes (0.4 to 1 m a side) and
// orientations, dropped in layers from a grid over the ground and settling
// into a pile; every `churn` steps a share of the
// boxes is removed and as many new ones dropped (objects leaving and
// entering the broad phase). PhysX's defaults otherwise: contact offset 0.02
// m per shape (the broad phase's contact distance), PGS solver, one thread
// (an inline CPU dispatcher: every task runs on the caller's thread), so the
// timings are one thread's.
//
// Per step: `step` = simulate(1/60) + fetchResults(true); `broad` = the time
// in Bp::BroadPhase::update (PhysX's AABB manager calls it once a step).
#include <PxPhysicsAPI.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "sapling_bp.h"

using namespace physx;

namespace {

class Allocator final : public PxAllocatorCallback {
 public:
  void* allocate(size_t size, const char*, const char*, int) override {
    void* p = nullptr;
    return posix_memalign(&p, 16, size == 0 ? 16 : size) == 0 ? p : nullptr;
  }
  void deallocate(void* ptr) override { std::free(ptr); }
};

class Errors final : public PxErrorCallback {
 public:
  void reportError(PxErrorCode::Enum code, const char* message, const char* file, int line) override {
    std::fprintf(stderr, "PhysX error %d: %s (%s:%d)\n", int(code), message, file, line);
  }
};

// Every task runs at once on the submitting thread (what PhysX's default
// dispatcher does with no worker thread).
class InlineDispatcher final : public PxCpuDispatcher {
 public:
  void submitTask(PxBaseTask& task) override {
    task.run();
    task.release();
  }
  uint32_t getWorkerCount() const override { return 0; }
};

PxFilterFlags filter_shader(PxFilterObjectAttributes a0, PxFilterData, PxFilterObjectAttributes a1, PxFilterData,
                            PxPairFlags& flags, const void*, PxU32) {
  if (PxFilterObjectIsTrigger(a0) || PxFilterObjectIsTrigger(a1)) {
    flags = PxPairFlag::eTRIGGER_DEFAULT;
    return PxFilterFlag::eDEFAULT;
  }
  flags = PxPairFlag::eCONTACT_DEFAULT;
  return PxFilterFlag::eDEFAULT;
}

struct Config {
  int boxes = 4000;
  int steps = 300;
  int repeats = 3;
  int churn = 60;             // every `churn` steps (0: never) ...
  double churn_share = 0.02;  // ... this share of the boxes is replaced
  double spread = 0;          // half side of the square the boxes drop on (0: sqrt(boxes) / 4 m, a deep pile)
  int statics = 0;            // static boxes scattered on the ground (besides the ground)
  int kinematics = 0;         // kinematic boxes sweeping circles through the pile
  double compound = 0;        // share of the dynamic bodies made of two overlapping boxes (one actor: one group)
  int shift_at = -1;          // step at which the scene's origin is shifted (PxScene::shiftOrigin)
  bool check = false;
  bool raw = false;
  std::vector<std::string> contenders{"abp", "mbp", "auto", "sap", "multi-sap", "box-pruning"};
};

struct Contender {
  std::string name;
  PxBroadPhaseType::Enum type;
  std::string env;  // SAPLING_PHYSX_BP
};

Contender contender(const std::string& name, bool check) {
  if (name == "abp") return {"PhysX ABP", PxBroadPhaseType::eABP, "native"};
  if (name == "mbp") return {"PhysX MBP (8x8 regions)", PxBroadPhaseType::eMBP, "native"};
  if (name == "pabp") return {"PhysX PABP", PxBroadPhaseType::ePABP, "native"};
  if (name == "sap-physx") return {"PhysX SAP", PxBroadPhaseType::eSAP, "native"};
  return {"sapling " + name, PxBroadPhaseType::eABP, (check ? "check:" : "") + name};
}

struct Run {
  std::vector<double> step, broad, inner;
  std::uint64_t pairs = 0, refused = 0;
  sapling_physx::Stats stats;
  int awake_median = 0;
  int lost = 0;  // boxes below the ground at the end (fell off: should be 0)
};

class World {
 public:
  World(const Config& cfg, const Contender& c, PxPhysics& physics, PxCpuDispatcher& dispatcher)
      : cfg_(cfg), physics_(physics), rng_(12345) {
    setenv("SAPLING_PHYSX_BP", c.env.c_str(), 1);
    half_ = cfg.spread > 0 ? float(cfg.spread) : std::max(4.0f, std::sqrt(float(cfg.boxes)) * 0.25f);
    {
      // the churn's boxes enter in the layer above the first drop's top one
      const int side = std::max(1, int(2 * half_ / 1.8f));
      churn_base_ = (cfg.boxes / (side * side) + 1) * side * side;
    }
    PxSceneDesc desc(physics.getTolerancesScale());
    desc.gravity = PxVec3(0, -9.81f, 0);
    desc.cpuDispatcher = &dispatcher;
    desc.filterShader = filter_shader;
    desc.broadPhaseType = c.type;
    scene_ = physics.createScene(desc);
    if (scene_ == nullptr) {
      std::fprintf(stderr, "createScene failed\n");
      std::exit(1);
    }
    if (c.type == PxBroadPhaseType::eMBP) {
      // MBP needs regions: an 8x8 grid over the ground on x and z, tall enough for the drop.
      const int k = 8;
      const float w = 2 * (half_ + 2) / k;
      for (int i = 0; i < k; ++i) {
        for (int j = 0; j < k; ++j) {
          PxBroadPhaseRegion r;
          // (the outer rows reach past the walls)
          r.mBounds = PxBounds3(
              PxVec3(i == 0 ? -1e4f : -half_ - 2 + w * i, -1e4f, j == 0 ? -1e4f : -half_ - 2 + w * j),
              PxVec3(i == k - 1 ? 1e4f : -half_ - 2 + w * (i + 1), 1e4f, j == k - 1 ? 1e4f : -half_ - 2 + w * (j + 1)));
          r.mUserData = nullptr;
          scene_->addBroadPhaseRegion(r, false);
        }
      }
    }
    material_ = physics.createMaterial(0.6f, 0.6f, 0.1f);
    PxRigidStatic* ground = physics.createRigidStatic(PxTransform(PxVec3(0, -0.5f, 0)));
    PxShape* shape = physics.createShape(PxBoxGeometry(half_ + 2, 0.5f, half_ + 2), *material_, true);
    ground->attachShape(*shape);
    shape->release();
    scene_->addActor(*ground);
    // Four walls around the ground keep the pile on it (MBP's regions must
    // hold every box, and no box should fall for ever).
    const float e = half_ + 2;
    for (int w = 0; w < 4; ++w) {
      const bool along_x = w < 2;
      const float side = (w % 2 == 0 ? -1.0f : 1.0f) * (e + 0.25f);
      PxRigidStatic* wall = physics.createRigidStatic(PxTransform(along_x ? PxVec3(0, 3, side) : PxVec3(side, 3, 0)));
      PxShape* ws = physics.createShape(along_x ? PxBoxGeometry(e + 0.5f, 3, 0.25f) : PxBoxGeometry(0.25f, 3, e + 0.5f),
                                        *material_, true);
      wall->attachShape(*ws);
      ws->release();
      scene_->addActor(*wall);
    }
    std::uniform_real_distribution<float> u(0, 1);
    for (int i = 0; i < cfg.statics; ++i) {
      const float sx = 0.15f + 0.5f * u(rng_), sy = 0.15f + 0.5f * u(rng_), sz = 0.15f + 0.5f * u(rng_);
      PxRigidStatic* rubble =
          physics.createRigidStatic(PxTransform(PxVec3((2 * u(rng_) - 1) * half_, sy, (2 * u(rng_) - 1) * half_),
                                                PxQuat(PxTwoPi * u(rng_), PxVec3(0, 1, 0))));
      PxShape* rs = physics.createShape(PxBoxGeometry(sx, sy, sz), *material_, true);
      rubble->attachShape(*rs);
      rs->release();
      scene_->addActor(*rubble);
    }
    for (int i = 0; i < cfg.kinematics; ++i) {
      PxRigidDynamic* k = physics.createRigidDynamic(PxTransform(PxVec3(0, 0.6f, 0)));
      k->setRigidBodyFlag(PxRigidBodyFlag::eKINEMATIC, true);
      PxShape* ks = physics.createShape(PxBoxGeometry(0.5f, 0.5f, 0.5f), *material_, true);
      k->attachShape(*ks);
      ks->release();
      scene_->addActor(*k);
      kinematics_.push_back(k);
    }
    for (int i = 0; i < cfg.boxes; ++i) drop(i);
  }
  ~World() {
    scene_->release();
    material_->release();
  }

  // Dynamic box i: random size (0.4 to 1 m a side) and orientation, in
  // cell i of a grid of 1.8 m cells over the ground, layer after layer 1.8 m
  // apart (no two start overlapping, whatever their orientation).
  void drop(int i) {
    std::uniform_real_distribution<float> u(0, 1);
    const float sx = 0.2f + 0.3f * u(rng_), sy = 0.2f + 0.3f * u(rng_), sz = 0.2f + 0.3f * u(rng_);
    const int side = std::max(1, int(2 * half_ / 1.8f));
    const int cell = i % (side * side), layer = i / (side * side);
    const float base = cfg_.statics > 0 ? 2.0f : 1.0f;  // clear of the rubble (at most 1.3 m high)
    const PxVec3 p(-half_ + 1.8f * (float(cell % side) + 0.5f) + 0.1f * (u(rng_) - 0.5f), base + 1.8f * float(layer),
                   -half_ + 1.8f * (float(cell / side) + 0.5f) + 0.1f * (u(rng_) - 0.5f));
    const PxQuat q = PxQuat(PxTwoPi * u(rng_), PxVec3(0, 1, 0)) * PxQuat(0.5f * u(rng_), PxVec3(1, 0, 0));
    PxRigidDynamic* body = physics_.createRigidDynamic(PxTransform(shift_ + p, q));  // (after an origin shift too)
    PxShape* shape = physics_.createShape(PxBoxGeometry(sx, sy, sz), *material_, true);
    body->attachShape(*shape);
    shape->release();
    if (cfg_.compound > 0 && u(rng_) < cfg_.compound) {
      // A second box overlapping the first: the actor's two shapes share its group, never a pair.
      PxShape* second = physics_.createShape(PxBoxGeometry(sy, sx, sz), *material_, true);
      second->setLocalPose(PxTransform(PxVec3(0.5f * sx, 0.5f * sy, 0)));
      body->attachShape(*second);
      second->release();
    }
    const float m = 8 * sx * sy * sz * 1000.0f;
    body->setMass(m);
    body->setMassSpaceInertiaTensor(
        PxVec3(m / 3 * (sy * sy + sz * sz), m / 3 * (sx * sx + sz * sz), m / 3 * (sx * sx + sy * sy)));
    scene_->addActor(*body);
    bodies_.push_back(body);
  }

  Run run() {
    Run r;
    sapling_physx::reset_stats();
    std::vector<int> awake;
    for (int s = 0; s < cfg_.steps; ++s) {
      if (cfg_.churn > 0 && s > 0 && s % cfg_.churn == 0) {
        // The oldest boxes leave (the bottom of the pile), new ones drop from above.
        const int n = std::max(1, int(cfg_.churn_share * double(bodies_.size())));
        for (int i = 0; i < n && !bodies_.empty(); ++i) {
          const std::size_t k = std::uniform_int_distribution<std::size_t>(0, bodies_.size() - 1)(rng_);
          scene_->removeActor(*bodies_[k]);
          bodies_[k]->release();
          bodies_[k] = bodies_.back();
          bodies_.pop_back();
        }
        // new boxes enter above the first drop's top layer, clear of the pile
        for (int i = 0; i < n; ++i) drop(churn_base_ + i);
      }
      for (std::size_t k = 0; k < kinematics_.size(); ++k) {
        const float a = 0.005f * float(s) + PxTwoPi * float(k) / float(kinematics_.size());
        const float r = 0.6f * half_;
        kinematics_[k]->setKinematicTarget(PxTransform(shift_ + PxVec3(r * std::cos(a), 0.6f, r * std::sin(a))));
      }
      if (s == cfg_.shift_at) {
        const PxVec3 by(10.5f, 0, -7.25f);
        scene_->shiftOrigin(by);
        shift_ -= by;
      }
      const double b0 = sapling_physx::stats().update_seconds, i0 = sapling_physx::stats().sapling_seconds;
      const double t0 = sapling_physx::now_seconds();
      scene_->simulate(1.0f / 60.0f);
      scene_->fetchResults(true);
      const double t1 = sapling_physx::now_seconds();
      r.step.push_back(t1 - t0);
      r.broad.push_back(sapling_physx::stats().update_seconds - b0);
      r.inner.push_back(sapling_physx::stats().sapling_seconds - i0);
      int a = 0;
      for (PxRigidDynamic* b : bodies_) a += b->isSleeping() ? 0 : 1;
      awake.push_back(a);
    }
    std::sort(awake.begin(), awake.end());
    r.awake_median = awake[awake.size() / 2];
    for (PxRigidDynamic* b : bodies_) r.lost += b->getGlobalPose().p.y < -2 ? 1 : 0;
    r.stats = sapling_physx::stats();
    return r;
  }

 private:
  const Config& cfg_;
  PxPhysics& physics_;
  PxScene* scene_ = nullptr;
  PxMaterial* material_ = nullptr;
  std::vector<PxRigidDynamic*> bodies_, kinematics_;
  PxVec3 shift_{0, 0, 0};  // where the origin was, in the shifted frame
  std::mt19937 rng_;
  float half_ = 10;
  int churn_base_ = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}
double worst(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

std::vector<std::string> split(const char* s) {
  std::vector<std::string> out;
  std::string cur;
  for (; *s; ++s) {
    if (*s == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += *s;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Config cfg;
  bool wall = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--boxes")
      cfg.boxes = std::atoi(next());
    else if (a == "--steps")
      cfg.steps = std::atoi(next());
    else if (a == "--repeats")
      cfg.repeats = std::atoi(next());
    else if (a == "--churn")
      cfg.churn = std::atoi(next());
    else if (a == "--churn-share")
      cfg.churn_share = std::atof(next());
    else if (a == "--spread")
      cfg.spread = std::atof(next());
    else if (a == "--contenders")
      cfg.contenders = split(next());
    else if (a == "--statics")
      cfg.statics = std::atoi(next());
    else if (a == "--kinematics")
      cfg.kinematics = std::atoi(next());
    else if (a == "--compound")
      cfg.compound = std::atof(next());
    else if (a == "--shift-at")
      cfg.shift_at = std::atoi(next());
    else if (a == "--check")
      cfg.check = true;
    else if (a == "--raw")
      cfg.raw = true;
    else if (a == "--clock")
      wall = std::strcmp(next(), "wall") == 0;
    else {
      std::fprintf(stderr, "unknown option %s (see physx_engine.sh)\n", a.c_str());
      return 2;
    }
  }
  sapling_physx::set_thread_clock(!wall);
  static Allocator allocator;
  static Errors errors;
  PxFoundation* foundation = PxCreateFoundation(PX_PHYSICS_VERSION, allocator, errors);
  PxPhysics* physics = PxCreatePhysics(PX_PHYSICS_VERSION, *foundation, PxTolerancesScale());
  if (physics == nullptr) {
    std::fprintf(stderr, "PxCreatePhysics failed\n");
    return 1;
  }
  InlineDispatcher dispatcher;

  std::printf(
      "PhysX %d.%d.%d PxScene, %d boxes (%.0f%% of two shapes), %d statics, %d kinematics, %d steps of 1/60 s, "
      "churn %.0f%% every %d steps, origin shift at step %d, %d repeats, %s\n",
      PX_PHYSICS_VERSION_MAJOR, PX_PHYSICS_VERSION_MINOR, PX_PHYSICS_VERSION_BUGFIX, cfg.boxes, 100 * cfg.compound,
      cfg.statics, cfg.kinematics, cfg.steps, 100 * cfg.churn_share, cfg.churn, cfg.shift_at, cfg.repeats,
      wall ? "wall clock" : "thread CPU time");
  std::map<std::string, std::vector<Run>> runs;
  int failures = 0;
  for (int rep = 0; rep < cfg.repeats; ++rep) {
    for (const std::string& name : cfg.contenders) {  // interleaved: every contender once per repeat
      const Contender c = contender(name, cfg.check);
      Run r;
      {
        World w(cfg, c, *physics, dispatcher);
        r = w.run();
      }
      const sapling_physx::Stats& s = r.stats;
      if (cfg.raw) {
        std::printf(
            "  run %d %-28s step %.3f / %.3f ms  broad %.3f / %.3f ms (sapling::BroadPhase::update %.3f)  awake %d  "
            "lost %d  pairs %llu\n",
            rep, c.name.c_str(), 1e3 * median(r.step), 1e3 * worst(r.step), 1e3 * median(r.broad), 1e3 * worst(r.broad),
            1e3 * median(r.inner), r.awake_median, r.lost, (unsigned long long)s.pairs);
      }
      if (cfg.check && c.env.rfind("check:", 0) == 0) {
        std::printf(
            "  check %-28s frames %llu, against ABP: %llu differ; all-pairs frames %llu, %llu differ; bad deltas %llu, "
            "refused calls %llu, pairs at end %llu\n",
            c.name.c_str(), (unsigned long long)s.checked_frames, (unsigned long long)s.mismatched_frames,
            (unsigned long long)s.brute_frames, (unsigned long long)s.brute_mismatches,
            (unsigned long long)s.bad_deltas, (unsigned long long)s.refused, (unsigned long long)s.pairs);
        failures += int(s.mismatched_frames + s.brute_mismatches + s.bad_deltas + s.refused);
      }
      runs[name].push_back(std::move(r));
    }
  }
  if (cfg.check) {
    std::printf(failures == 0 ? "check: every frame's pairs equal ABP's\n" : "check: FAILED\n");
    return failures == 0 ? 0 : 1;
  }
  // Each cell: the median over the repeats of each run's median / worst step.
  const auto cell = [&](const std::string& name, bool broad, bool worst_step) {
    std::vector<double> v;
    for (const Run& r : runs[name])
      v.push_back(worst_step ? worst(broad ? r.broad : r.step) : median(broad ? r.broad : r.step));
    return 1e3 * median(v);
  };
  const std::string ref = runs.count("abp") ? "abp" : cfg.contenders.front();
  std::printf(
      "\n| broad phase | step median | step worst | broad median | broad worst | broad / ABP | step / ABP | awake | "
      "pairs at end |\n");
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const std::string& name : cfg.contenders) {
    const Contender c = contender(name, false);
    const Run& last = runs[name].back();
    std::printf("| %s | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f | %d | %s |\n", c.name.c_str(),
                cell(name, false, false), cell(name, false, true), cell(name, true, false), cell(name, true, true),
                cell(name, true, false) / cell(ref, true, false), cell(name, false, false) / cell(ref, false, false),
                last.awake_median, c.env == "native" ? "-" : std::to_string(last.stats.pairs).c_str());
  }
  physics->release();
  foundation->release();
  return 0;
}
