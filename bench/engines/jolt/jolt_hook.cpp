// The broad phase Jolt's PhysicsSystem creates, chosen at run time, and the
// timer around it. jolt_performance_test.patch makes PhysicsSystem::Init call
// JPH::SaplingBenchCreateBroadPhase() instead of `new BroadPhaseQuadTree()`.
//
//   SAPLING_JOLT_BROAD_PHASE  quadtree (Jolt's BroadPhaseQuadTree, the default)
//                             or sapling (sapling_jolt::SaplingBroadPhase)
//   SAPLING_ALGORITHM         sapling's algorithm ("auto" by default)
//   SAPLING_THREADS           sapling's Options::threads (1 by default)
//   SAPLING_JOLT_MARGIN, SAPLING_JOLT_MARGIN_SCALE
//                             the fattening of non-static bodies' boxes in
//                             sapling: margin + scale x largest half extent
//                             (0.02 and 0.05), SAPLING_JOLT_LOOKAHEAD: and
//                             stretched by the velocity x this many seconds
//                             (0.05); all 0 for exact boxes
//   SAPLING_JOLT_TIMING       0 turns the timer off (on by default)
//
// Either broad phase is wrapped in TimedBroadPhase, which forwards every
// call and adds the wall time spent inside it, per kind of call, from the
// first FrameSync() after Optimize() on (scene set-up is not counted). When
// the PhysicsSystem deletes it, one line goes to stderr:
//   sapling-jolt: bp=<name> steps=<FrameSync calls> total_ns=... pairs_ns=...
//     update_ns=... notify_ns=... query_ns=... pair_calls=... query_calls=...
// Time is summed over the threads that called: with several job threads it
// is thread time, not wall time.
#include "sapling_broad_phase.h"

#include <Jolt/Physics/Body/BodyManager.h>
#include <Jolt/Physics/Collision/BroadPhase/BroadPhaseQuadTree.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

using Clock = std::chrono::steady_clock;

std::string env(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

class TimedBroadPhase final : public JPH::BroadPhase {
 public:
  TimedBroadPhase(JPH::BroadPhase* inner, std::string name, bool timing)
      : inner_(inner), name_(std::move(name)), timing_(timing) {}
  ~TimedBroadPhase() override {
    if (timing_)
      std::fprintf(stderr,
                   "sapling-jolt: bp=%s steps=%llu total_ns=%llu pairs_ns=%llu update_ns=%llu notify_ns=%llu "
                   "query_ns=%llu pair_calls=%llu query_calls=%llu optimize_ns=%llu\n",
                   name_.c_str(), ull(steps_), ull(pairs_ + update_ + notify_ + query_), ull(pairs_), ull(update_),
                   ull(notify_), ull(query_), ull(pair_calls_), ull(query_calls_), ull(optimize_));
    delete inner_;
  }

  void Init(JPH::BodyManager* m, const JPH::BroadPhaseLayerInterface& l) override {
    JPH::BroadPhase::Init(m, l);
    inner_->Init(m, l);
  }
  void Optimize() override {
    const auto t = Clock::now();
    inner_->Optimize();
    optimize_ += ns(t);
    counting_ = true;
    pairs_ = update_ = notify_ = query_ = 0;
    pair_calls_ = query_calls_ = steps_ = 0;
  }
  void FrameSync() override {
    if (counting_) ++steps_;
    Timed(update_, [&] { inner_->FrameSync(); });
  }
  void LockModifications() override {
    Timed(update_, [&] { inner_->LockModifications(); });
  }
  UpdateState UpdatePrepare() override {
    UpdateState s;
    Timed(update_, [&] { s = inner_->UpdatePrepare(); });
    return s;
  }
  void UpdateFinalize(const UpdateState& s) override {
    Timed(update_, [&] { inner_->UpdateFinalize(s); });
  }
  void UnlockModifications() override {
    Timed(update_, [&] { inner_->UnlockModifications(); });
  }
  AddState AddBodiesPrepare(JPH::BodyID* b, int n) override {
    AddState s;
    Timed(notify_, [&] { s = inner_->AddBodiesPrepare(b, n); });
    return s;
  }
  void AddBodiesFinalize(JPH::BodyID* b, int n, AddState s) override {
    Timed(notify_, [&] { inner_->AddBodiesFinalize(b, n, s); });
  }
  void AddBodiesAbort(JPH::BodyID* b, int n, AddState s) override {
    Timed(notify_, [&] { inner_->AddBodiesAbort(b, n, s); });
  }
  void RemoveBodies(JPH::BodyID* b, int n) override {
    Timed(notify_, [&] { inner_->RemoveBodies(b, n); });
  }
  void NotifyBodiesAABBChanged(JPH::BodyID* b, int n, bool lock) override {
    Timed(notify_, [&] { inner_->NotifyBodiesAABBChanged(b, n, lock); });
  }
  void NotifyBodiesLayerChanged(JPH::BodyID* b, int n) override {
    Timed(notify_, [&] { inner_->NotifyBodiesLayerChanged(b, n); });
  }
  void FindCollidingPairs(JPH::BodyID* b, int n, float d, const JPH::ObjectVsBroadPhaseLayerFilter& f1,
                          const JPH::ObjectLayerPairFilter& f2, JPH::BodyPairCollector& c) const override {
    pair_calls_.fetch_add(1, std::memory_order_relaxed);
    Timed(pairs_, [&] { inner_->FindCollidingPairs(b, n, d, f1, f2, c); });
  }
  void CastAABoxNoLock(const JPH::AABoxCast& box, JPH::CastShapeBodyCollector& c, const JPH::BroadPhaseLayerFilter& f1,
                       const JPH::ObjectLayerFilter& f2) const override {
    Query([&] { inner_->CastAABoxNoLock(box, c, f1, f2); });
  }
  void CastRay(const JPH::RayCast& ray, JPH::RayCastBodyCollector& c, const JPH::BroadPhaseLayerFilter& f1,
               const JPH::ObjectLayerFilter& f2) const override {
    Query([&] { inner_->CastRay(ray, c, f1, f2); });
  }
  void CollideAABox(const JPH::AABox& box, JPH::CollideShapeBodyCollector& c, const JPH::BroadPhaseLayerFilter& f1,
                    const JPH::ObjectLayerFilter& f2) const override {
    Query([&] { inner_->CollideAABox(box, c, f1, f2); });
  }
  void CollideSphere(JPH::Vec3Arg p, float r, JPH::CollideShapeBodyCollector& c, const JPH::BroadPhaseLayerFilter& f1,
                     const JPH::ObjectLayerFilter& f2) const override {
    Query([&] { inner_->CollideSphere(p, r, c, f1, f2); });
  }
  void CollidePoint(JPH::Vec3Arg p, JPH::CollideShapeBodyCollector& c, const JPH::BroadPhaseLayerFilter& f1,
                    const JPH::ObjectLayerFilter& f2) const override {
    Query([&] { inner_->CollidePoint(p, c, f1, f2); });
  }
  void CollideOrientedBox(const JPH::OrientedBox& box, JPH::CollideShapeBodyCollector& c,
                          const JPH::BroadPhaseLayerFilter& f1, const JPH::ObjectLayerFilter& f2) const override {
    Query([&] { inner_->CollideOrientedBox(box, c, f1, f2); });
  }
  void CastAABox(const JPH::AABoxCast& box, JPH::CastShapeBodyCollector& c, const JPH::BroadPhaseLayerFilter& f1,
                 const JPH::ObjectLayerFilter& f2) const override {
    Query([&] { inner_->CastAABox(box, c, f1, f2); });
  }
  JPH::AABox GetBounds() const override {
    JPH::AABox b;
    Query([&] { b = inner_->GetBounds(); });
    return b;
  }

 private:
  static unsigned long long ull(const std::atomic<std::uint64_t>& v) { return v.load(); }
  static std::uint64_t ns(Clock::time_point t) {
    return std::uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
  }
  template <class F>
  void Timed(std::atomic<std::uint64_t>& acc, F&& f) const {
    if (!timing_) return f();
    const auto t = Clock::now();
    f();
    acc.fetch_add(ns(t), std::memory_order_relaxed);
  }
  template <class F>
  void Query(F&& f) const {
    query_calls_.fetch_add(1, std::memory_order_relaxed);
    Timed(query_, f);
  }

  JPH::BroadPhase* inner_;
  std::string name_;
  bool timing_;
  bool counting_ = false;
  mutable std::atomic<std::uint64_t> pairs_{0}, update_{0}, notify_{0}, query_{0}, optimize_{0};
  mutable std::atomic<std::uint64_t> pair_calls_{0}, query_calls_{0}, steps_{0};
};

}  // namespace

namespace JPH {

BroadPhase* SaplingBenchCreateBroadPhase() {
  const std::string which = env("SAPLING_JOLT_BROAD_PHASE", "quadtree");
  const bool timing = env("SAPLING_JOLT_TIMING", "1") != "0";
  BroadPhase* inner = nullptr;
  std::string name = which;
  if (which == "quadtree") {
    inner = new BroadPhaseQuadTree();
  } else if (which == "sapling") {
    const std::string algorithm = env("SAPLING_ALGORITHM", "auto");
    const unsigned threads = unsigned(std::atoi(env("SAPLING_THREADS", "1").c_str()));
    const float margin = float(std::atof(env("SAPLING_JOLT_MARGIN", "0.02").c_str()));
    const float scale = float(std::atof(env("SAPLING_JOLT_MARGIN_SCALE", "0.05").c_str()));
    const float lookahead = float(std::atof(env("SAPLING_JOLT_LOOKAHEAD", "0.05").c_str()));
    inner = new sapling_jolt::SaplingBroadPhase(algorithm, threads, margin, scale, lookahead);
    name = "sapling:" + algorithm;
  } else {
    std::fprintf(stderr, "SAPLING_JOLT_BROAD_PHASE must be quadtree or sapling, not '%s'\n", which.c_str());
    std::abort();
  }
  return new TimedBroadPhase(inner, name, timing);
}

}  // namespace JPH
