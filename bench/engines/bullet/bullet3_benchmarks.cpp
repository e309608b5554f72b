// Timing driver for Bullet's own benchmark scenes (bullet3's
// examples/Benchmarks/BenchmarkDemo.cpp, issue 30 item 3). Our code only:
// bullet3_benchmarks.sh extracts Bullet's example sources outside the
// repository, applies bullet3_benchmarks.patch (CommonRigidBodyMTBase.cpp
// asks saplingBenchBroadphase(), defined here, for its broad phase instead of
// `new btDbvtBroadphase()`) and links this file with them, headless through
// Bullet's DummyGUIHelper (with a parameter
// interface that ignores the demo's GUI buttons).
//
// Each run creates one scene through BenchmarkCreateFunc (option = scene
// number 1..8), calls initPhysics(), steps it with the demo's own
// stepSimulation(1/60) (scene 7 casts its 500 rays there too), and times
//   step   the whole BenchmarkDemo::stepSimulation call;
//   broad  Bullet's profile zones "updateAabbs" + "calculateOverlappingPairs"
//          (where a broad phase works in a step: setAabb for every moving
//          object, then the pair update), read through
//          btSetCustomEnterProfileZoneFunc, the same for every contender;
//   rays   step minus Bullet's "internalSingleStepSimulation" zone: scene
//          7's 500 ray casts (broad-phase rayTest plus Bullet's narrow-phase
//          ray tests); elsewhere only stepSimulation's motion-state sync.
// Scenes x contenders are interleaved within each repeat so that load on a
// shared machine spreads over all contenders; the table gives, per scene and
// contender, the median over repeats of each run's median and worst step.
//
//   bullet3_benchmarks [--steps N] [--repeats R] [--scenes 1,2,...]
//                      [--contenders dbvt,axis3,auto,sap,box-pruning,multi-sap] [--raw] [--zones] [--clock cpu|wall]
//                      [--check]
//   --check  sapling::bullet's cache against the exact overlaps every 50th step
//   --clock  cpu (default: the thread's CPU time) or wall
//   --raw    each run's figures (and the demo's own prints) on stderr
//   --zones  every Bullet profile zone's time per step, per run, on stderr
#include <fcntl.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <LinearMath/btQuickprof.h>
#include <btBulletDynamicsCommon.h>
#include <sapling/bullet/broadphase.hpp>

#include "Benchmarks/BenchmarkDemo.h"
#include "CommonInterfaces/CommonExampleInterface.h"
#include "CommonInterfaces/CommonGUIHelperInterface.h"
#include "CommonInterfaces/CommonParameterInterface.h"
#include "MultiThreadedDemo/CommonRigidBodyMTBase.h"

namespace {
// --clock cpu (default): this thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
// which leaves out the time the thread waits for a core on a loaded machine;
// every contender runs on this one thread (Bullet built without
// BT_THREADSAFE, sapling with its default of one thread). --clock wall:
// steady_clock.
bool g_cpu_clock = true;
double now() {
  if (g_cpu_clock) {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// ---- the broad phase handed to the patched CommonRigidBodyMTBase ----
std::string g_contender = "dbvt";
btBroadphaseInterface* g_last = nullptr;

// ---- headless: DummyGUIHelper has no parameter interface; the demo registers
// its solver buttons there, so give it one that ignores them ----
struct NoParameters : CommonParameterInterface {
  void registerSliderFloatParameter(SliderParams&) override {}
  void registerButtonParameter(ButtonParams&) override {}
  void registerComboBox(ComboBoxParams&) override {}
  void syncParameters() override {}
  void removeAllParameters() override {}
  void setSliderValue(int, double) override {}
};
struct Headless : DummyGUIHelper {
  NoParameters parameters;
  CommonParameterInterface* getParameterInterface() override { return &parameters; }
};

// ---- profile zones ----
enum Zone { kOther, kStep, kAabbs, kPairs };
struct Open {
  Zone zone;
  const char* name;
  double t0;
};
bool g_zones = false;                        // --zones: time every zone, print the totals per run
std::map<std::string, double> g_zone_total;  // seconds per zone name over a run
std::vector<Open> g_stack;
double g_zone_s[4];

void enter_zone(const char* name) {
  Zone z = kOther;
  if (std::strcmp(name, "updateAabbs") == 0)
    z = kAabbs;
  else if (std::strcmp(name, "calculateOverlappingPairs") == 0)
    z = kPairs;
  else if (std::strcmp(name, "internalSingleStepSimulation") == 0)
    z = kStep;
  g_stack.push_back({z, name, z == kOther && !g_zones ? 0.0 : now()});
}
void leave_zone() {
  if (g_stack.empty()) return;
  const Open o = g_stack.back();
  g_stack.pop_back();
  if (o.zone == kOther && !g_zones) return;
  const double t = now() - o.t0;
  if (o.zone != kOther) g_zone_s[o.zone] += t;
  if (g_zones) g_zone_total[o.name] += t;
}

struct Run {
  double step_median, step_worst, broad_median, broad_worst, aabbs_median, pairs_median, rays_median;
  int objects, pairs_at_end;
  double active_median;  // bodies awake (moving, so setAabb each step) per step
};

// --check: every 50th step and the last, outside the timing, sapling::bullet's
// cache must hold exactly the pairs of proxies whose AABBs (as last set)
// overlap, closed, and whose groups and masks accept each other (Bullet's
// own test; the demo sets no filter callback). dbvt and the axis sweep are
// not checked (their caches hold fattened or stale pairs).
bool g_check = false;
long g_check_failures = 0;

void check_pairs(btDiscreteDynamicsWorld* world, int scene, const std::string& contender, int step) {
  std::vector<const btBroadphaseProxy*> proxies;
  for (int i = 0; i < world->getNumCollisionObjects(); ++i)
    if (const btBroadphaseProxy* p = world->getCollisionObjectArray()[i]->getBroadphaseHandle()) proxies.push_back(p);
  std::sort(proxies.begin(), proxies.end(),
            [](const btBroadphaseProxy* a, const btBroadphaseProxy* b) { return a->m_aabbMin.x() < b->m_aabbMin.x(); });
  std::vector<std::pair<int, int>> expected, held;
  for (std::size_t i = 0; i < proxies.size(); ++i)
    for (std::size_t j = i + 1; j < proxies.size() && proxies[j]->m_aabbMin.x() <= proxies[i]->m_aabbMax.x(); ++j) {
      const btBroadphaseProxy *a = proxies[i], *b = proxies[j];
      if (!TestAabbAgainstAabb2(a->m_aabbMin, a->m_aabbMax, b->m_aabbMin, b->m_aabbMax)) continue;
      if (!(a->m_collisionFilterGroup & b->m_collisionFilterMask) ||
          !(b->m_collisionFilterGroup & a->m_collisionFilterMask))
        continue;
      expected.emplace_back(std::min(a->m_uniqueId, b->m_uniqueId), std::max(a->m_uniqueId, b->m_uniqueId));
    }
  btOverlappingPairCache* cache = world->getBroadphase()->getOverlappingPairCache();
  for (int i = 0; i < cache->getNumOverlappingPairs(); ++i) {
    const btBroadphasePair& p = cache->getOverlappingPairArray()[i];
    held.emplace_back(std::min(p.m_pProxy0->m_uniqueId, p.m_pProxy1->m_uniqueId),
                      std::max(p.m_pProxy0->m_uniqueId, p.m_pProxy1->m_uniqueId));
  }
  std::sort(expected.begin(), expected.end());
  std::sort(held.begin(), held.end());
  if (expected != held) {
    ++g_check_failures;
    std::fprintf(stderr, "CHECK FAILED: scene %d, %s, step %d: cache holds %zu pairs, exact overlaps %zu\n", scene,
                 contender.c_str(), step, held.size(), expected.size());
  }
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

Run run(int scene, const std::string& contender, int steps) {
  g_contender = contender;
  g_zone_total.clear();
  Headless gui;
  CommonExampleOptions options(&gui, scene);
  std::unique_ptr<CommonExampleInterface> demo(BenchmarkCreateFunc(options));
  demo->initPhysics();
  auto* base = static_cast<CommonRigidBodyMTBase*>(demo.get());
  btDiscreteDynamicsWorld* world = base->getDynamicsWorld();
  std::vector<double> step_t, broad_t, aabbs_t, pairs_t, rays_t, active;
  for (int s = 0; s < steps; ++s) {
    std::fill(std::begin(g_zone_s), std::end(g_zone_s), 0.0);
    const double t = now();
    demo->stepSimulation(btScalar(1) / 60);
    const double whole = now() - t;
    step_t.push_back(whole);
    broad_t.push_back(g_zone_s[kAabbs] + g_zone_s[kPairs]);
    aabbs_t.push_back(g_zone_s[kAabbs]);
    pairs_t.push_back(g_zone_s[kPairs]);
    rays_t.push_back(whole - g_zone_s[kStep]);
    int awake = 0;  // counted outside the timed step
    for (int i = 0; i < world->getNumCollisionObjects(); ++i) {
      const btCollisionObject* o = world->getCollisionObjectArray()[i];
      awake += o->isActive() && !o->isStaticOrKinematicObject();
    }
    active.push_back(awake);
    if (g_check && contender != "dbvt" && contender != "axis3" && (s % 50 == 0 || s == steps - 1))
      check_pairs(world, scene, contender, s);
  }
  Run r{};
  r.step_median = median(step_t);
  r.step_worst = *std::max_element(step_t.begin(), step_t.end());
  r.broad_median = median(broad_t);
  r.broad_worst = *std::max_element(broad_t.begin(), broad_t.end());
  r.aabbs_median = median(aabbs_t);
  r.pairs_median = median(pairs_t);
  r.rays_median = median(rays_t);
  r.objects = world->getNumCollisionObjects();
  r.active_median = median(active);
  r.pairs_at_end = world->getBroadphase()->getOverlappingPairCache()->getNumOverlappingPairs();
  if (g_zones) {
    std::fprintf(stderr, "zones, scene %d, %s (ms per step, inclusive):", scene, contender.c_str());
    for (const auto& [name, t] : g_zone_total) std::fprintf(stderr, " %s %.3f;", name.c_str(), t * 1e3 / steps);
    std::fprintf(stderr, "\n");
  }
  demo->exitPhysics();
  return r;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

const char* kSceneNames[] = {"",
                             "1 3000 boxes",
                             "2 1000-box stack",
                             "3 ragdolls",
                             "4 convex stack",
                             "5 primitives vs mesh",
                             "6 convex vs mesh",
                             "7 500 rays",
                             "8 convex pack"};

std::string label(const std::string& c) {
  if (c == "dbvt") return "btDbvtBroadphase";
  if (c == "axis3") return "bt32BitAxisSweep3";
  return "sapling::bullet " + c;
}
}  // namespace

// Called by the patched CommonRigidBodyMTBase::createEmptyDynamicsWorld();
// the demo deletes it in exitPhysics().
btBroadphaseInterface* saplingBenchBroadphase() {
  if (g_contender == "dbvt") return g_last = new btDbvtBroadphase();
  if (g_contender == "axis3")  // every scene lies well inside +-2000 (the ground is 500 x 100 x 500)
    return g_last = new bt32BitAxisSweep3(btVector3(-2000, -2000, -2000), btVector3(2000, 2000, 2000), 65536);
  sapling::Status why;
  auto bp = sapling::bullet::BroadPhase::create(g_contender, &why);
  if (!bp) {
    std::fprintf(stderr, "sapling::bullet %s: cannot create\n", g_contender.c_str());
    std::exit(2);
  }
  return g_last = bp.release();
}

int main(int argc, char** argv) {
  int steps = 300, repeats = 3;
  bool raw = false;
  std::vector<int> scenes{1, 2, 3, 4, 5, 6, 7, 8};
  std::vector<std::string> contenders{"dbvt", "axis3", "auto", "sap", "box-pruning", "multi-sap"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--steps")
      steps = std::atoi(v), ++i;
    else if (a == "--repeats")
      repeats = std::atoi(v), ++i;
    else if (a == "--scenes") {
      scenes.clear();
      for (const auto& s : split(v)) scenes.push_back(std::atoi(s.c_str()));
      ++i;
    } else if (a == "--contenders")
      contenders = split(v), ++i;
    else if (a == "--raw")
      raw = true;
    else if (a == "--clock")
      g_cpu_clock = std::string(v) != "wall", ++i;
    else if (a == "--zones")
      g_zones = true;
    else if (a == "--check")
      g_check = true;
    else {
      std::fprintf(stderr,
                   "usage: %s [--steps N] [--repeats R] [--scenes 1,..,8] [--contenders dbvt,axis3,auto,...] [--raw] "
                   "[--zones] [--clock cpu|wall] [--check]\n",
                   argv[0]);
      return 2;
    }
  }
  // The demo prints its ray timings to stdout every 50 frames: keep stdout
  // for the table, send the demo's prints to stderr (--raw) or nowhere.
  std::fflush(stdout);
  FILE* table = fdopen(dup(1), "w");
  const int sink = raw ? 2 : open("/dev/null", O_WRONLY);
  dup2(sink, 1);
  btSetCustomEnterProfileZoneFunc(enter_zone);
  btSetCustomLeaveProfileZoneFunc(leave_zone);

  std::map<std::pair<int, std::string>, std::vector<Run>> runs;
  for (int rep = 0; rep < repeats; ++rep)
    for (int scene : scenes)
      for (const auto& c : contenders) {
        const Run r = run(scene, c, steps);
        runs[{scene, c}].push_back(r);
        if (raw)
          std::fprintf(stderr,
                       "rep %d scene %d %-12s step %.3f/%.3f broad %.3f/%.3f (aabbs %.3f pairs %.3f) rays %.3f ms\n",
                       rep, scene, c.c_str(), r.step_median * 1e3, r.step_worst * 1e3, r.broad_median * 1e3,
                       r.broad_worst * 1e3, r.aabbs_median * 1e3, r.pairs_median * 1e3, r.rays_median * 1e3);
      }

  std::fprintf(table,
               "%d steps of 1/60 s per run, %d runs per cell (median over runs of each run's figure); ms of %s\n\n",
               steps, repeats, g_cpu_clock ? "thread CPU time" : "wall-clock time");
  std::fprintf(table,
               "| scene | broad phase | objects | awake | step median | step worst | broad median | broad worst | "
               "(updateAabbs | "
               "calculateOverlappingPairs) | rays | broad / dbvt | step / dbvt | pairs at end |\n");
  std::fprintf(table, "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (int scene : scenes) {
    double dbvt_broad = 0, dbvt_step = 0;
    for (const auto& c : contenders) {
      const auto& rs = runs[{scene, c}];
      auto pick = [&](double Run::*f) {
        std::vector<double> v;
        for (const auto& r : rs) v.push_back(r.*f);
        return median(v) * 1e3;
      };
      const double broad = pick(&Run::broad_median), step = pick(&Run::step_median);
      if (c == "dbvt") dbvt_broad = broad, dbvt_step = step;
      std::fprintf(table, "| %s | %s | %d | %.0f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | ",
                   kSceneNames[scene], label(c).c_str(), rs.front().objects, pick(&Run::active_median) / 1e3, step,
                   pick(&Run::step_worst), broad, pick(&Run::broad_worst), pick(&Run::aabbs_median),
                   pick(&Run::pairs_median), pick(&Run::rays_median));
      if (dbvt_broad > 0)
        std::fprintf(table, "%.2f | %.2f | %d |\n", broad / dbvt_broad, step / dbvt_step, rs.back().pairs_at_end);
      else
        std::fprintf(table, "- | - | %d |\n", rs.back().pairs_at_end);
    }
    std::fflush(table);
  }
  if (g_check) std::fprintf(table, "\ncheck: %ld failures\n", g_check_failures);
  std::fclose(table);
  return g_check_failures == 0 ? 0 : 1;
}
