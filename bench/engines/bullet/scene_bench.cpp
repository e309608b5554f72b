// A quick side-by-side of Bullet broad phases on scenes built here, modelled
// on Bullet's examples/Benchmarks (not Bullet's program: see README.md here).
// Whole step and broad-phase time (updateAabbs + calculateOverlappingPairs,
// which is where a broad phase works in a step), median and worst step.
//
//   scene_bench [steps]   (built by run.sh against an installed sapling)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <btBulletDynamicsCommon.h>
#include <sapling/bullet/broadphase.hpp>

namespace {
using Clock = std::chrono::steady_clock;

struct TimedWorld : btDiscreteDynamicsWorld {
  using btDiscreteDynamicsWorld::btDiscreteDynamicsWorld;
  double broad = 0;
  void updateAabbs() override {
    const auto t = Clock::now();
    btDiscreteDynamicsWorld::updateAabbs();
    broad += std::chrono::duration<double>(Clock::now() - t).count();
  }
  void computeOverlappingPairs() override {
    const auto t = Clock::now();
    btDiscreteDynamicsWorld::computeOverlappingPairs();
    broad += std::chrono::duration<double>(Clock::now() - t).count();
  }
};

struct Result {
  double step_median, step_worst, broad_median, broad_worst;
  int pairs;
};

// scene 0: 3000 boxes falling in a 10 x 10 x 30 block onto the ground (Benchmark 1);
// scene 1: a 1000-box pyramid-like stack of 10 x 10 layers (Benchmark 2, simplified).
Result run(int scene, btBroadphaseInterface* bp, int steps) {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher(&config);
  btSequentialImpulseConstraintSolver solver;
  TimedWorld world(&dispatcher, bp, &solver, &config);
  world.setGravity(btVector3(0, -10, 0));
  btBoxShape ground_shape(btVector3(250, 50, 250));
  btBoxShape box(btVector3(1, 1, 1));
  std::vector<std::unique_ptr<btRigidBody>> bodies;
  std::vector<std::unique_ptr<btDefaultMotionState>> states;
  auto add = [&](btCollisionShape* s, btScalar mass, const btVector3& at) {
    btVector3 inertia(0, 0, 0);
    if (mass > 0) s->calculateLocalInertia(mass, inertia);
    states.push_back(std::make_unique<btDefaultMotionState>(btTransform(btQuaternion::getIdentity(), at)));
    bodies.push_back(std::make_unique<btRigidBody>(mass, states.back().get(), s, inertia));
    world.addRigidBody(bodies.back().get());
  };
  add(&ground_shape, 0, btVector3(0, -50, 0));
  if (scene == 0) {
    for (int k = 0; k < 30; ++k)
      for (int i = 0; i < 10; ++i)
        for (int j = 0; j < 10; ++j) add(&box, 1, btVector3(2.0f * i - 10 + k * 0.01f, 2 + 2.0f * k, 2.0f * j - 10));
  } else {
    for (int k = 0; k < 10; ++k)
      for (int i = 0; i < 10; ++i)
        for (int j = 0; j < 10; ++j) add(&box, 1, btVector3(2.0f * i - 10, 1 + 2.0f * k, 2.0f * j - 10));
  }
  std::vector<double> step_t, broad_t;
  for (int s = 0; s < steps; ++s) {
    world.broad = 0;
    const auto t = Clock::now();
    world.stepSimulation(btScalar(1) / 60, 0);
    step_t.push_back(std::chrono::duration<double>(Clock::now() - t).count());
    broad_t.push_back(world.broad);
  }
  const int pairs = bp->getOverlappingPairCache()->getNumOverlappingPairs();
  for (auto& b : bodies) world.removeRigidBody(b.get());
  auto median = [](std::vector<double> v) {
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  return {median(step_t), *std::max_element(step_t.begin(), step_t.end()), median(broad_t),
          *std::max_element(broad_t.begin(), broad_t.end()), pairs};
}
}  // namespace

int main(int argc, char** argv) {
  const int steps = argc > 1 ? std::atoi(argv[1]) : 300;
  const char* scenes[] = {"3000 boxes", "1000-box stack"};
  const char* contenders[] = {"btDbvtBroadphase",    "bt32BitAxisSweep3",         "sapling::bullet auto",
                              "sapling::bullet sap", "sapling::bullet multi-sap", "sapling::bullet box-pruning"};
  std::printf(
      "| scene | broad phase | step median ms | step worst ms | broad median ms | broad worst ms | pairs at end |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  for (int scene = 0; scene < 2; ++scene) {
    for (int c = 0; c < 6; ++c) {
      std::unique_ptr<btBroadphaseInterface> bp;
      if (c == 0)
        bp = std::make_unique<btDbvtBroadphase>();
      else if (c == 1)
        bp = std::make_unique<bt32BitAxisSweep3>(btVector3(-300, -300, -300), btVector3(300, 300, 300));
      else
        bp = sapling::bullet::BroadPhase::create(std::string(contenders[c]).substr(16));
      const Result r = run(scene, bp.get(), steps);
      std::printf("| %s | %s | %.3f | %.3f | %.3f | %.3f | %d |\n", scenes[scene], contenders[c], r.step_median * 1e3,
                  r.step_worst * 1e3, r.broad_median * 1e3, r.broad_worst * 1e3, r.pairs);
      std::fflush(stdout);
    }
  }
}
