// sapling::bullet against Bullet itself: dynamics worlds stepped with
// btDbvtBroadphase and with sapling::bullet side by side, every step's pair
// cache checked against a brute-force oracle on the proxies' current AABBs
// (closed intervals, Bullet's group/mask rule, the filter callback); rays and
// AABB tests against brute force; bad use; every registered algorithm.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <btBulletDynamicsCommon.h>

#include "sapling/bullet/broadphase.hpp"
#include "sapling/registry.hpp"

namespace {

using PairSet = std::set<std::pair<int, int>>;  // by the objects' user index (proxies' user data in standalone tests)
constexpr btScalar kStep = btScalar(1) / 60;

int user_index(const btBroadphaseProxy* p) {
  return static_cast<const btCollisionObject*>(p->m_clientObject)->getUserIndex();
}

std::pair<int, int> ordered(int a, int b) { return a < b ? std::make_pair(a, b) : std::make_pair(b, a); }

bool closed_overlap(const btBroadphaseProxy* a, const btBroadphaseProxy* b) {
  for (int k = 0; k < 3; ++k) {
    if (!(a->m_aabbMin[k] <= b->m_aabbMax[k] && b->m_aabbMin[k] <= a->m_aabbMax[k])) return false;
  }
  return true;
}

bool group_mask(const btBroadphaseProxy* a, const btBroadphaseProxy* b) {
  return (a->m_collisionFilterGroup & b->m_collisionFilterMask) != 0 &&
         (b->m_collisionFilterGroup & a->m_collisionFilterMask) != 0;
}

// The cache's pairs by user index; a pair held twice fails the test.
PairSet cache_pairs(const btOverlappingPairCache* cache, int (*id)(const btBroadphaseProxy*) = user_index) {
  PairSet out;
  const btBroadphasePairArray& pairs = const_cast<btOverlappingPairCache*>(cache)->getOverlappingPairArray();
  for (int i = 0; i < pairs.size(); ++i) {
    const bool fresh = out.insert(ordered(id(pairs[i].m_pProxy0), id(pairs[i].m_pProxy1))).second;
    EXPECT_TRUE(fresh) << "pair held twice";
  }
  return out;
}

// Refuses pairs of two odd user indices, on top of group/mask (the usual way to write one).
// While `strict`; then it accepts what group/mask accepts.
struct OddFilter : btOverlapFilterCallback {
  bool strict = true;
  bool needBroadphaseCollision(btBroadphaseProxy* a, btBroadphaseProxy* b) const override {
    return group_mask(a, b) && !(strict && user_index(a) % 2 == 1 && user_index(b) % 2 == 1);
  }
};

// Widens group/mask: also accepts any two objects whose indices are multiples of 3.
struct WideFilter : btOverlapFilterCallback {
  bool needBroadphaseCollision(btBroadphaseProxy* a, btBroadphaseProxy* b) const override {
    return group_mask(a, b) || (user_index(a) % 3 == 0 && user_index(b) % 3 == 0);
  }
};

struct World {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher{&config};
  std::unique_ptr<btBroadphaseInterface> broadphase;
  btSequentialImpulseConstraintSolver solver;
  std::unique_ptr<btDiscreteDynamicsWorld> world;
  std::vector<std::unique_ptr<btCollisionShape>> shapes;
  std::vector<std::unique_ptr<btDefaultMotionState>> states;
  std::vector<std::unique_ptr<btRigidBody>> bodies;  // by user index; null once removed
  bool exact;                                        // sapling: the cache holds exactly the oracle's pairs

  World(std::unique_ptr<btBroadphaseInterface> bp, bool is_exact) : broadphase(std::move(bp)), exact(is_exact) {
    world = std::make_unique<btDiscreteDynamicsWorld>(&dispatcher, broadphase.get(), &solver, &config);
    world->setGravity(btVector3(0, -10, 0));
  }
  ~World() {
    for (auto& b : bodies) {
      if (b) world->removeRigidBody(b.get());
    }
    world.reset();
  }

  btCollisionShape* shape(btCollisionShape* s) {
    shapes.emplace_back(s);
    return s;
  }
  // A body; group < 0: Bullet's defaults (static or dynamic by mass).
  int add(btCollisionShape* s, btScalar mass, const btVector3& at,
          const btQuaternion& rotation = btQuaternion::getIdentity(), int group = -1, int mask = -1) {
    btVector3 inertia(0, 0, 0);
    if (mass > 0) s->calculateLocalInertia(mass, inertia);
    states.push_back(std::make_unique<btDefaultMotionState>(btTransform(rotation, at)));
    auto body = std::make_unique<btRigidBody>(mass, states.back().get(), s, inertia);
    const int index = static_cast<int>(bodies.size());
    body->setUserIndex(index);
    if (group < 0) {
      world->addRigidBody(body.get());
    } else {
      world->addRigidBody(body.get(), group, mask);
    }
    bodies.push_back(std::move(body));
    return index;
  }
  void remove(int index) {
    world->removeRigidBody(bodies[static_cast<std::size_t>(index)].get());
    bodies[static_cast<std::size_t>(index)].reset();
  }
  btOverlappingPairCache* cache() { return broadphase->getOverlappingPairCache(); }

  // The pairs of objects whose current AABBs (as last given to the broad
  // phase) overlap, passing group/mask (if `use_group_mask`) and `filter`.
  PairSet oracle(const btOverlapFilterCallback* filter, bool use_group_mask = true) const {
    PairSet out;
    const btCollisionObjectArray& objects = world->getCollisionObjectArray();
    for (int i = 0; i < objects.size(); ++i) {
      for (int j = i + 1; j < objects.size(); ++j) {
        btBroadphaseProxy* a = objects[i]->getBroadphaseHandle();
        btBroadphaseProxy* b = objects[j]->getBroadphaseHandle();
        if (!closed_overlap(a, b)) continue;
        if (use_group_mask && !group_mask(a, b)) continue;
        if (filter != nullptr && !filter->needBroadphaseCollision(a, b)) continue;
        out.insert(ordered(objects[i]->getUserIndex(), objects[j]->getUserIndex()));
      }
    }
    return out;
  }
};

std::unique_ptr<btBroadphaseInterface> sapling_broadphase(sapling::bullet::Options options = {}) {
  options.warn = [](std::string_view m) { ADD_FAILURE() << "unexpected warning: " << m; };
  sapling::Status why;
  auto bp = sapling::bullet::BroadPhase::create(std::move(options), nullptr, &why);
  EXPECT_TRUE(bp) << why.message();
  return bp;
}

// The two worlds of a side-by-side test: [0] btDbvtBroadphase, [1] sapling::bullet.
struct SideBySide {
  World dbvt{std::make_unique<btDbvtBroadphase>(), false};
  World sap;
  explicit SideBySide(sapling::bullet::Options options = {}) : sap(sapling_broadphase(std::move(options)), true) {}
  World& operator[](int i) { return i == 0 ? dbvt : sap; }
};

// Steps both worlds once; checks sapling's cache equals the oracle and dbvt's
// holds it. Returns the number of oracle pairs (sapling's world).
std::size_t step_and_check(SideBySide& w, int step, const btOverlapFilterCallback* filter = nullptr,
                           bool check_dbvt = true, bool sap_group_mask = true) {
  std::size_t pairs = 0;
  for (int i = 0; i < 2; ++i) {
    World& world = w[i];
    world.world->stepSimulation(kStep, 0);
    const PairSet held = cache_pairs(world.cache());
    if (world.exact) {
      const PairSet want = world.oracle(filter, sap_group_mask);
      EXPECT_EQ(held, want) << "sapling::bullet, step " << step;
      pairs = want.size();
    } else if (check_dbvt) {
      const PairSet want = world.oracle(filter);
      EXPECT_TRUE(std::includes(held.begin(), held.end(), want.begin(), want.end()))
          << "btDbvtBroadphase's cache lacks an exact pair, step " << step;
    }
  }
  return pairs;
}

btVector3 position(const World& w, int index) {
  return w.bodies[static_cast<std::size_t>(index)]->getCenterOfMassPosition();
}

btQuaternion small_rotation(std::mt19937& rng) {
  std::uniform_real_distribution<float> angle(-0.3f, 0.3f);
  return btQuaternion(angle(rng), angle(rng), angle(rng));
}

// The ground: a static box whose top face is y = 0.
int add_ground(World& w) { return w.add(w.shape(new btBoxShape(btVector3(50, 1, 50))), 0, btVector3(0, -1, 0)); }

TEST(BulletWorld, BoxesFallOnTheGround) {
  SideBySide w;
  std::vector<int> boxes;
  for (int i = 0; i < 2; ++i) {
    std::mt19937 rng(7);
    add_ground(w[i]);
    btCollisionShape* cube = w[i].shape(new btBoxShape(btVector3(0.5f, 0.5f, 0.5f)));
    for (int layer = 0; layer < 3; ++layer) {
      for (int x = 0; x < 5; ++x) {
        for (int z = 0; z < 5; ++z) {
          const int b =
              w[i].add(cube, 1, btVector3(x * 1.1f - 2.2f, 1.0f + layer * 1.6f, z * 1.1f - 2.2f), small_rotation(rng));
          if (i == 0) boxes.push_back(b);
        }
      }
    }
  }
  std::size_t most = 0;
  for (int step = 0; step < 300; ++step) most = std::max(most, step_and_check(w, step));
  EXPECT_GT(most, 75u);  // every box meets the ground, and its neighbours
  for (int i = 0; i < 2; ++i) {
    for (int b : boxes) {
      const btRigidBody& body = *w[i].bodies[static_cast<std::size_t>(b)];
      EXPECT_GT(position(w[i], b).y(), 0.3f) << "box " << b << " sank, world " << i;
      EXPECT_LT(position(w[i], b).y(), 4.0f) << "box " << b << " flew, world " << i;
      EXPECT_LT(body.getLinearVelocity().length(), 0.2f) << "box " << b << " not at rest, world " << i;
    }
  }
  // The two worlds end alike: the same number of boxes per height band, about.
  double mean[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    for (int b : boxes) mean[i] += position(w[i], b).y() / static_cast<double>(boxes.size());
  }
  EXPECT_NEAR(mean[0], mean[1], 0.25);
}

TEST(BulletWorld, StackStands) {
  SideBySide w;
  int top = 0;
  for (int i = 0; i < 2; ++i) {
    add_ground(w[i]);
    btCollisionShape* cube = w[i].shape(new btBoxShape(btVector3(0.5f, 0.5f, 0.5f)));
    for (int level = 0; level < 10; ++level) top = w[i].add(cube, 1, btVector3(0, 0.5f + level, 0));
  }
  for (int step = 0; step < 240; ++step) EXPECT_GE(step_and_check(w, step), 10u);  // ground + 9 neighbours at least
  for (int i = 0; i < 2; ++i) {
    const btVector3 p = position(w[i], top);
    EXPECT_NEAR(p.y(), 9.5f, 0.1f) << "world " << i;
    EXPECT_NEAR(p.x(), 0.0f, 0.05f) << "world " << i;
    EXPECT_NEAR(p.z(), 0.0f, 0.05f) << "world " << i;
  }
  EXPECT_NEAR(position(w[0], top).y(), position(w[1], top).y(), 0.02f);
}

TEST(BulletWorld, SpheresInABox) {
  SideBySide w;
  std::vector<int> spheres;
  for (int i = 0; i < 2; ++i) {
    std::mt19937 rng(11);
    std::uniform_real_distribution<float> across(-3.5f, 3.5f), up(1.0f, 12.0f);
    add_ground(w[i]);
    btCollisionShape* wall_x = w[i].shape(new btBoxShape(btVector3(0.25f, 4, 4.5f)));
    btCollisionShape* wall_z = w[i].shape(new btBoxShape(btVector3(4.5f, 4, 0.25f)));
    w[i].add(wall_x, 0, btVector3(-4.25f, 4, 0));
    w[i].add(wall_x, 0, btVector3(4.25f, 4, 0));
    w[i].add(wall_z, 0, btVector3(0, 4, -4.25f));
    w[i].add(wall_z, 0, btVector3(0, 4, 4.25f));
    btCollisionShape* ball = w[i].shape(new btSphereShape(0.4f));
    for (int n = 0; n < 120; ++n) {
      const int b = w[i].add(ball, 1, btVector3(across(rng), up(rng), across(rng)));
      if (i == 0) spheres.push_back(b);
    }
  }
  for (int step = 0; step < 300; ++step) step_and_check(w, step);
  for (int i = 0; i < 2; ++i) {
    for (int b : spheres) {
      const btVector3 p = position(w[i], b);
      EXPECT_GT(p.y(), 0.3f);
      EXPECT_LT(std::abs(p.x()), 4.0f);
      EXPECT_LT(std::abs(p.z()), 4.0f);
    }
  }
}

TEST(BulletWorld, ObjectsAddedAndRemovedMidRun) {
  SideBySide w;
  std::mt19937 rng[2] = {std::mt19937(5), std::mt19937(5)};
  btCollisionShape* cube[2];
  for (int i = 0; i < 2; ++i) {
    add_ground(w[i]);
    cube[i] = w[i].shape(new btBoxShape(btVector3(0.5f, 0.5f, 0.5f)));
  }
  std::vector<int> alive;
  std::size_t removed = 0;
  for (int step = 0; step < 240; ++step) {
    if (step % 3 == 0) {  // a box appears
      std::uniform_real_distribution<float> across(-3, 3);
      for (int i = 0; i < 2; ++i) {
        const btVector3 at(across(rng[i]), 3 + across(rng[i]) / 2, across(rng[i]));
        const int b = w[i].add(cube[i], 1, at, small_rotation(rng[i]));
        if (i == 0) alive.push_back(b);
      }
    }
    if (step % 5 == 4 && alive.size() > 5) {  // one goes, chosen at random, and so do its pairs at once
      const std::size_t k = std::uniform_int_distribution<std::size_t>(0, alive.size() - 1)(rng[0]);
      const int b = alive[k];
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(k));
      for (int i = 0; i < 2; ++i) {
        w[i].remove(b);
        for (const auto& [x, y] : cache_pairs(w[i].cache())) {
          EXPECT_TRUE(x != b && y != b) << "a removed body's pair stays in the cache, world " << i;
        }
      }
      ++removed;
    }
    if (step % 40 == 39) {  // a box added and removed before any step sees it
      for (int i = 0; i < 2; ++i) w[i].remove(w[i].add(cube[i], 1, btVector3(0, 0.5f, 0)));
    }
    step_and_check(w, step);
  }
  EXPECT_GT(removed, 40u);
}

TEST(BulletWorld, CollisionGroupsAndMasks) {
  constexpr int kA = 1 << 6, kB = 1 << 7;
  constexpr int kStatic = btBroadphaseProxy::StaticFilter;
  SideBySide w;
  std::vector<int> a_boxes, b_boxes;
  for (int i = 0; i < 2; ++i) {
    std::mt19937 rng(3);
    add_ground(w[i]);
    btCollisionShape* cube = w[i].shape(new btBoxShape(btVector3(0.5f, 0.5f, 0.5f)));
    for (int n = 0; n < 40; ++n) {
      const bool in_a = n % 2 == 0;  // A and B pass through each other, land on the ground
      const btVector3 at((n % 5) * 0.6f, 1 + (n / 5) * 0.7f, ((n / 5) % 2) * 0.3f);
      const int b = w[i].add(cube, 1, at, small_rotation(rng), in_a ? kA : kB, (in_a ? kA : kB) | kStatic);
      if (i == 0) (in_a ? a_boxes : b_boxes).push_back(b);
    }
  }
  for (int step = 0; step < 150; ++step) step_and_check(w, step);
  // Mid-run, written straight into the proxies: A boxes now meet B boxes too.
  for (int i = 0; i < 2; ++i) {
    for (int b : a_boxes) w[i].bodies[static_cast<std::size_t>(b)]->getBroadphaseHandle()->m_collisionFilterMask |= kB;
    for (int b : b_boxes) w[i].bodies[static_cast<std::size_t>(b)]->getBroadphaseHandle()->m_collisionFilterMask |= kA;
  }
  // dbvt sees a filter change only when a box moves out of its fattened leaf: not checked from here.
  std::size_t most = 0;
  for (int step = 150; step < 200; ++step) most = std::max(most, step_and_check(w, step, nullptr, false));
  EXPECT_GT(most, 40u);
  // And back: B boxes refuse A again, their pairs leave the cache; and the
  // ground (static, never moved, so never set again) refuses B boxes.
  for (int b : b_boxes) w.sap.bodies[static_cast<std::size_t>(b)]->getBroadphaseHandle()->m_collisionFilterMask &= ~kA;
  w.sap.bodies[0]->getBroadphaseHandle()->m_collisionFilterMask &= ~kB;
  const std::size_t before = cache_pairs(w.sap.cache()).size();
  step_and_check(w, 200, nullptr, false);
  EXPECT_LT(cache_pairs(w.sap.cache()).size() + b_boxes.size(), before);
  for (int step = 201; step < 220; ++step) step_and_check(w, step, nullptr, false);
}

TEST(BulletWorld, FilterCallbackNarrows) {
  SideBySide w;
  OddFilter filter[2];
  for (int i = 0; i < 2; ++i) {
    std::mt19937 rng(9);
    w[i].cache()->setOverlapFilterCallback(&filter[i]);
    add_ground(w[i]);
    btCollisionShape* cube = w[i].shape(new btBoxShape(btVector3(0.5f, 0.5f, 0.5f)));
    for (int n = 0; n < 50; ++n)
      w[i].add(cube, 1, btVector3((n % 5) * 0.9f, 1 + (n / 5) * 1.1f, 0), small_rotation(rng));
  }
  for (int step = 0; step < 200; ++step) step_and_check(w, step, &filter[0]);
  for (const auto& [x, y] : cache_pairs(w.sap.cache())) EXPECT_FALSE(x % 2 == 1 && y % 2 == 1);
  // The callback relents: the refused pairs (odd with odd), offered again at
  // each step, now enter the cache (dbvt offers them again only as they move).
  filter[0].strict = filter[1].strict = false;
  for (int step = 200; step < 210; ++step) step_and_check(w, step, &filter[0], false);
  std::size_t odd = 0;
  for (const auto& [x, y] : cache_pairs(w.sap.cache())) odd += x % 2 == 1 && y % 2 == 1;
  EXPECT_GT(odd, 5u);
}

TEST(BulletWorld, FilterCallbackWidensInCacheMode) {
  // A callback that accepts pairs group/mask refuses (static with static
  // included) needs FilterMode::kCache; the default mode keeps group/mask.
  for (auto mode : {sapling::bullet::FilterMode::kCache, sapling::bullet::FilterMode::kGroupMask}) {
    sapling::bullet::Options options;
    options.filter = mode;
    SideBySide w(options);
    WideFilter filter[2];
    for (int i = 0; i < 2; ++i) {
      w[i].cache()->setOverlapFilterCallback(&filter[i]);
      add_ground(w[i]);                                                                    // 0
      w[i].add(w[i].shape(new btBoxShape(btVector3(1, 1, 1))), 0, btVector3(8, 0.5f, 0));  // 1, static
      w[i].add(w[i].shape(new btBoxShape(btVector3(1, 1, 1))), 0, btVector3(4, 0.5f, 0));  // 2, static
      w[i].add(w[i].shape(new btBoxShape(btVector3(1, 1, 1))), 0, btVector3(0, 0.5f, 0));  // 3, static, meets 0
      btCollisionShape* cube = w[i].shape(new btBoxShape(btVector3(0.5f, 0.5f, 0.5f)));
      for (int n = 4; n < 40; ++n) {  // mask 0: group/mask refuses them everything, the callback some
        w[i].add(cube, 1, btVector3((n % 6) * 0.8f - 2, 3 + (n / 6) * 0.8f, 2), btQuaternion::getIdentity(),
                 btBroadphaseProxy::DefaultFilter, n % 2 == 0 ? 0 : btBroadphaseProxy::AllFilter);
      }
    }
    const bool wide = mode == sapling::bullet::FilterMode::kCache;
    for (int step = 0; step < 60; ++step) {
      for (int i = 0; i < 2; ++i) w[i].world->stepSimulation(kStep, 0);
      const PairSet held = cache_pairs(w.sap.cache());
      EXPECT_EQ(held, w.sap.oracle(&filter[1], !wide)) << "step " << step;
      if (wide) {
        EXPECT_TRUE(held.count({0, 3})) << "static-static pair the callback accepts";
        const PairSet dbvt = cache_pairs(w.dbvt.cache());
        const PairSet want = w.dbvt.oracle(&filter[0], false);
        EXPECT_TRUE(std::includes(dbvt.begin(), dbvt.end(), want.begin(), want.end()));
      }
    }
  }
}

// A broad-phase ray as btCollisionWorld::rayTest sets it up; records the proxies.
struct RayRecorder : btBroadphaseRayCallback {
  std::vector<int> seen;
  RayRecorder(const btVector3& from, const btVector3& to) {
    btVector3 d = to - from;
    d.normalize();
    for (int k = 0; k < 3; ++k) {
      m_rayDirectionInverse[k] = d[k] == btScalar(0) ? btScalar(BT_LARGE_FLOAT) : btScalar(1) / d[k];
      m_signs[k] = m_rayDirectionInverse[k] < 0;
    }
    m_lambda_max = d.dot(to - from);
  }
  bool process(const btBroadphaseProxy* p) override {
    seen.push_back(user_index(p));
    return true;
  }
  std::set<int> set() const {
    std::set<int> s(seen.begin(), seen.end());
    EXPECT_EQ(s.size(), seen.size()) << "a proxy reported twice";
    return s;
  }
};

struct AabbRecorder : btBroadphaseAabbCallback {
  std::vector<int> seen;
  bool process(const btBroadphaseProxy* p) override {
    seen.push_back(user_index(p));
    return true;
  }
};

// Brute force: the objects whose AABB grown by [grow_lo, grow_hi] the segment from -> to meets (closed).
std::set<int> ray_oracle(const World& w, const btVector3& from, const btVector3& to,
                         const btVector3& grow_lo = btVector3(0, 0, 0), const btVector3& grow_hi = btVector3(0, 0, 0)) {
  std::set<int> out;
  const btCollisionObjectArray& objects = w.world->getCollisionObjectArray();
  for (int i = 0; i < objects.size(); ++i) {
    const btBroadphaseProxy* p = objects[i]->getBroadphaseHandle();
    double enter = 0, leave = 1;
    bool hit = true;
    for (int k = 0; k < 3 && hit; ++k) {
      const double o = from[k], d = double(to[k]) - double(from[k]);
      const double lo = double(p->m_aabbMin[k]) - grow_hi[k], hi = double(p->m_aabbMax[k]) - grow_lo[k];
      if (d == 0) {
        hit = lo <= o && o <= hi;
        continue;
      }
      double near = (lo - o) / d, far = (hi - o) / d;
      if (d < 0) std::swap(near, far);
      enter = std::max(enter, near);
      leave = std::min(leave, far);
    }
    if (hit && enter <= leave) out.insert(objects[i]->getUserIndex());
  }
  return out;
}

std::set<int> aabb_oracle(const World& w, const btVector3& lo, const btVector3& hi) {
  std::set<int> out;
  const btCollisionObjectArray& objects = w.world->getCollisionObjectArray();
  for (int i = 0; i < objects.size(); ++i) {
    const btBroadphaseProxy* p = objects[i]->getBroadphaseHandle();
    bool hit = true;
    for (int k = 0; k < 3; ++k) hit = hit && p->m_aabbMin[k] <= hi[k] && lo[k] <= p->m_aabbMax[k];
    if (hit) out.insert(objects[i]->getUserIndex());
  }
  return out;
}

void build_scatter(World& w, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> at(-20, 20), size(0.2f, 2.0f);
  add_ground(w);
  for (int n = 0; n < 300; ++n) {
    btCollisionShape* s = n % 3 == 0 ? static_cast<btCollisionShape*>(new btSphereShape(size(rng)))
                                     : new btBoxShape(btVector3(size(rng), size(rng), size(rng)));
    w.add(w.shape(s), n % 4 == 0 ? 0 : 1, btVector3(at(rng), at(rng) / 2 + 10, at(rng)), small_rotation(rng));
  }
}

void check_rays_and_boxes(SideBySide& w, std::mt19937& rng, const char* when) {
  std::uniform_real_distribution<float> at(-25, 25);
  int hits = 0;
  for (int n = 0; n < 200; ++n) {
    btVector3 from(at(rng), at(rng) / 2 + 10, at(rng)), to(at(rng), at(rng) / 2 + 10, at(rng));
    if (n % 10 == 0) to = from + btVector3(0, -30, 0);      // straight down: two zero components
    if (n % 10 == 1) to = from + btVector3(at(rng), 0, 0);  // along x
    btVector3 grow_lo(0, 0, 0), grow_hi(0, 0, 0);
    if (n % 4 == 3) grow_hi = -(grow_lo = btVector3(-0.5f, -0.3f, -0.7f));  // a convex cast's extents
    RayRecorder rec[2] = {RayRecorder(from, to), RayRecorder(from, to)};
    for (int i = 0; i < 2; ++i) w[i].broadphase->rayTest(from, to, rec[i], grow_lo, grow_hi);
    const std::set<int> want = ray_oracle(w.sap, from, to, grow_lo, grow_hi);
    const std::set<int> got = rec[1].set(), dbvt = rec[0].set();
    EXPECT_EQ(got, want) << when << ", ray " << n;
    hits += static_cast<int>(got.size());
    // dbvt's boxes are fattened (and its test strict): it calls for a superset of the exact boxes it holds.
    if (grow_lo.isZero()) {
      const std::set<int> dbvt_want = ray_oracle(w.dbvt, from, to);
      EXPECT_TRUE(std::includes(dbvt.begin(), dbvt.end(), dbvt_want.begin(), dbvt_want.end())) << when << ", ray " << n;
    }

    btVector3 lo(at(rng), at(rng) / 2 + 10, at(rng));
    const btVector3 hi = lo + btVector3(at(rng) + 25, at(rng) + 25, at(rng) + 25) / 5;
    AabbRecorder box;
    w.sap.broadphase->aabbTest(lo, hi, box);
    const std::set<int> box_got(box.seen.begin(), box.seen.end());
    EXPECT_EQ(box_got.size(), box.seen.size());
    EXPECT_EQ(box_got, aabb_oracle(w.sap, lo, hi)) << when << ", box " << n;
  }
  EXPECT_GT(hits, 200) << when;  // the rays meet things
}

TEST(BulletQueries, RaysAndBoxesMatchBruteForce) {
  SideBySide w;
  for (int i = 0; i < 2; ++i) build_scatter(w[i], 21);
  std::mt19937 rng(4);
  // Before any step: every box is new, none handed to sapling yet.
  check_rays_and_boxes(w, rng, "before any step");
  for (int i = 0; i < 2; ++i) w[i].world->performDiscreteCollisionDetection();
  check_rays_and_boxes(w, rng, "after a step");
  // Boxes changed since the step (set, not yet committed), and bodies removed.
  std::uniform_real_distribution<float> shift(-3, 3);
  for (int i = 0; i < 2; ++i) {
    std::mt19937 same(8);
    for (int b = 1; b < 300; b += 3) {
      btBroadphaseProxy* p = w[i].bodies[static_cast<std::size_t>(b)]->getBroadphaseHandle();
      const btVector3 d(shift(same), shift(same), shift(same));
      w[i].broadphase->setAabb(p, p->m_aabbMin + d, p->m_aabbMax + d, &w[i].dispatcher);
    }
    for (int b = 2; b < 300; b += 17) w[i].remove(b);
  }
  check_rays_and_boxes(w, rng, "between steps");
  for (int i = 0; i < 2; ++i) w[i].world->performDiscreteCollisionDetection();
  check_rays_and_boxes(w, rng, "after the next step");
}

TEST(BulletQueries, WorldRayAndConvexSweepAgreeWithDbvt) {
  SideBySide w;
  for (int i = 0; i < 2; ++i) {
    build_scatter(w[i], 33);
    w[i].world->performDiscreteCollisionDetection();
  }
  std::mt19937 rng(6);
  std::uniform_real_distribution<float> at(-25, 25);
  btSphereShape probe(0.5f);
  int hits = 0;
  for (int n = 0; n < 100; ++n) {
    const btVector3 from(at(rng), 25, at(rng)), to(at(rng), -5, at(rng));
    btCollisionWorld::AllHitsRayResultCallback all[2] = {{from, to}, {from, to}};
    btCollisionWorld::ClosestConvexResultCallback sweep[2] = {{from, to}, {from, to}};
    for (int i = 0; i < 2; ++i) {
      w[i].world->rayTest(from, to, all[i]);
      w[i].world->convexSweepTest(&probe, btTransform(btQuaternion::getIdentity(), from),
                                  btTransform(btQuaternion::getIdentity(), to), sweep[i]);
    }
    std::set<int> got[2];
    for (int i = 0; i < 2; ++i) {
      for (int k = 0; k < all[i].m_collisionObjects.size(); ++k)
        got[i].insert(all[i].m_collisionObjects[k]->getUserIndex());
    }
    EXPECT_EQ(got[0], got[1]) << "ray " << n;
    hits += static_cast<int>(got[1].size());
    EXPECT_EQ(sweep[0].hasHit(), sweep[1].hasHit()) << "sweep " << n;
    EXPECT_EQ(sweep[0].m_closestHitFraction, sweep[1].m_closestHitFraction) << "sweep " << n;
  }
  EXPECT_GT(hits, 50);
}

// Standalone: proxies driven directly, as an engine's own code would.
struct Standalone {
  std::vector<std::string> warnings;
  std::unique_ptr<sapling::bullet::BroadPhase> bp;
  btCollisionObject objects[8];
  btBroadphaseProxy* proxies[8] = {};

  explicit Standalone(sapling::bullet::Options options = {}) {
    options.warn = [this](std::string_view m) { warnings.emplace_back(m); };
    bp = sapling::bullet::BroadPhase::create(std::move(options));
    for (int i = 0; i < 8; ++i) objects[i].setUserIndex(i);
  }
  btBroadphaseProxy* add(int i, const btVector3& lo, const btVector3& hi, int group = 1, int mask = -1) {
    proxies[i] = bp->createProxy(lo, hi, 0, &objects[i], group, mask, nullptr);
    return proxies[i];
  }
  PairSet step() {
    bp->calculateOverlappingPairs(nullptr);
    return cache_pairs(bp->getOverlappingPairCache());
  }
};

const btVector3 kOne(1, 1, 1);
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(BulletBadUse, NanAabbParksTheProxyOnly) {
  Standalone s;
  s.add(0, btVector3(0, 0, 0), kOne);
  s.add(1, btVector3(0.5f, 0.5f, 0.5f), kOne * 2);
  s.add(2, btVector3(1, 1, 1), kOne * 3);  // touches 0 at a corner: closed intervals
  EXPECT_EQ(s.step(), (PairSet{{0, 1}, {0, 2}, {1, 2}}));
  s.bp->setAabb(s.proxies[1], btVector3(kNaN, 0, 0), kOne, nullptr);  // a body that blew up
  EXPECT_EQ(s.step(), (PairSet{{0, 2}}));
  EXPECT_TRUE(s.bp->is_parked(s.proxies[1]));
  EXPECT_EQ(s.bp->parked_count(), 1u);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("parked"), std::string::npos) << s.warnings[0];
  s.bp->setAabb(s.proxies[1], btVector3(0, 0, 0), btVector3(kNaN, kNaN, kNaN), nullptr);
  EXPECT_EQ(s.step(), (PairSet{{0, 2}}));
  EXPECT_EQ(s.warnings.size(), 1u) << "one warning while it stays parked";
  s.bp->setAabb(s.proxies[1], btVector3(2, 0, 0), btVector3(1, 1, 1), nullptr);  // min > max
  EXPECT_EQ(s.step(), (PairSet{{0, 2}}));
  // Rays and boxes pass it by.
  AabbRecorder box;
  s.bp->aabbTest(btVector3(-10, -10, -10), btVector3(10, 10, 10), box);
  EXPECT_EQ(std::set<int>(box.seen.begin(), box.seen.end()), (std::set<int>{0, 2}));
  // Back with a sane box: its pairs return.
  s.bp->setAabb(s.proxies[1], btVector3(0.5f, 0.5f, 0.5f), kOne * 2, nullptr);
  EXPECT_EQ(s.step(), (PairSet{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_FALSE(s.bp->is_parked(s.proxies[1]));
  // Created with NaN: parked from the start.
  s.add(3, btVector3(kNaN, kNaN, kNaN), btVector3(kNaN, kNaN, kNaN));
  EXPECT_EQ(s.step(), (PairSet{{0, 1}, {0, 2}, {1, 2}}));
  EXPECT_EQ(s.warnings.size(), 2u);  // one per parking
  EXPECT_EQ(s.bp->misuse_count(), 0u);
}

TEST(BulletBadUse, InfiniteAndHugeAabbs) {
  Standalone s;
  s.add(0, btVector3(0, 0, 0), kOne);
  s.add(1, btVector3(5, 5, 5), kOne * 6);
  s.add(2, btVector3(-kInf, -kInf, -kInf), btVector3(kInf, kInf, kInf));  // everything
  s.add(3, btVector3(-1e30f, -1e30f, 5.5f), btVector3(1e30f, 1e30f, 1e30f));
  s.add(4, btVector3(kInf, 0, 0), btVector3(kInf, 1, 1));  // a point at +inf on x: meets only those reaching it
  EXPECT_EQ(s.step(), (PairSet{{0, 2}, {1, 2}, {1, 3}, {2, 3}, {2, 4}}));
  EXPECT_TRUE(s.warnings.empty());
  btVector3 lo, hi;
  s.bp->getBroadphaseAabb(lo, hi);
  EXPECT_EQ(lo.x(), -kInf);
  EXPECT_EQ(hi.z(), kInf);
}

TEST(BulletBadUse, DestroyTwiceIsAnErrorNotACrash) {
  Standalone s;
  s.add(0, btVector3(0, 0, 0), kOne);
  s.add(1, btVector3(0, 0, 0), kOne);
  s.add(2, btVector3(0, 0, 0), kOne);
  EXPECT_EQ(s.step().size(), 3u);
  s.bp->destroyProxy(s.proxies[1], nullptr);
  EXPECT_EQ(cache_pairs(s.bp->getOverlappingPairCache()), (PairSet{{0, 2}})) << "its pairs leave at once";
  s.bp->destroyProxy(s.proxies[1], nullptr);  // the same step
  EXPECT_EQ(s.bp->misuse_count(), 1u);
  EXPECT_EQ(s.step(), (PairSet{{0, 2}}));
  s.bp->destroyProxy(s.proxies[1], nullptr);  // a later step
  s.bp->setAabb(s.proxies[1], kOne, kOne, nullptr);
  EXPECT_EQ(s.bp->misuse_count(), 3u);
  ASSERT_EQ(s.warnings.size(), 3u);
  EXPECT_NE(s.warnings[0].find("destroyed already"), std::string::npos) << s.warnings[0];
  // Another broad phase's proxy.
  btDbvtBroadphase other;
  btBroadphaseProxy* foreign = other.createProxy(btVector3(0, 0, 0), kOne, 0, &s.objects[5], 1, -1, nullptr);
  s.bp->destroyProxy(foreign, nullptr);
  EXPECT_EQ(s.bp->misuse_count(), 4u);
  EXPECT_NE(s.warnings.back().find("does not belong"), std::string::npos) << s.warnings.back();
  other.destroyProxy(foreign, nullptr);
  EXPECT_EQ(s.step(), (PairSet{{0, 2}}));
  EXPECT_EQ(s.bp->proxy_count(), 2u);
}

TEST(BulletBadUse, SeveralSetAabbInOneStepAndShortLives) {
  Standalone s;
  s.add(0, btVector3(0, 0, 0), kOne);
  s.add(1, btVector3(5, 5, 5), kOne * 6);
  EXPECT_TRUE(s.step().empty());
  s.bp->setAabb(s.proxies[1], btVector3(0.5f, 0.5f, 0.5f), kOne * 2, nullptr);  // meets 0...
  s.bp->setAabb(s.proxies[1], btVector3(3, 3, 3), kOne * 4, nullptr);           // ...then not
  EXPECT_TRUE(s.step().empty());
  s.bp->setAabb(s.proxies[1], btVector3(3, 3, 3), kOne * 4, nullptr);
  s.bp->setAabb(s.proxies[1], btVector3(1, 1, 1), kOne * 4, nullptr);  // the last box counts
  EXPECT_EQ(s.step(), (PairSet{{0, 1}}));
  s.add(2, btVector3(0, 0, 0), kOne);  // created and destroyed between two steps
  s.bp->setAabb(s.proxies[2], btVector3(0, 0, 0), kOne * 3, nullptr);
  s.bp->destroyProxy(s.proxies[2], nullptr);
  EXPECT_EQ(s.step(), (PairSet{{0, 1}}));
  EXPECT_EQ(s.bp->misuse_count(), 0u);
}

TEST(BulletBadUse, AFilterChangeKeepsThePairsItAllows) {
  // A proxy whose filter changes is handed to sapling again; its pairs that
  // the new filter still allows stay in the cache as they were (a Bullet
  // pair carries the narrow phase's state), the others leave.
  Standalone s;
  s.add(0, btVector3(0, 0, 0), kOne, 1, -1);
  s.add(1, btVector3(0, 0, 0), kOne, 2, -1);
  s.add(2, btVector3(0, 0, 0), kOne, 4, -1);
  EXPECT_EQ(s.step().size(), 3u);
  btOverlappingPairCache* cache = s.bp->getOverlappingPairCache();
  cache->findPair(s.proxies[0], s.proxies[1])->m_internalInfo1 = &s;
  s.proxies[0]->m_collisionFilterMask = 1 | 2;                         // keeps 1, drops 2
  s.bp->setAabb(s.proxies[0], btVector3(0, 0, 0), kOne * 2, nullptr);  // and moves in the same step
  EXPECT_EQ(s.step(), (PairSet{{0, 1}, {1, 2}}));
  EXPECT_EQ(cache->findPair(s.proxies[0], s.proxies[1])->m_internalInfo1, &s);
  s.proxies[0]->m_collisionFilterGroup = 2;  // as a static proxy now (group 2, mask without 2)
  s.proxies[0]->m_collisionFilterMask = 1 | 4;
  EXPECT_EQ(s.step(), (PairSet{{0, 2}, {1, 2}}));
}

TEST(BulletBadUse, ResetPoolAndCreateRefusals) {
  Standalone s;
  s.add(0, btVector3(0, 0, 0), kOne);
  s.add(1, btVector3(0, 0, 0), kOne);
  EXPECT_EQ(s.step().size(), 1u);
  s.bp->resetPool(nullptr);  // proxies live: nothing happens
  EXPECT_EQ(s.step().size(), 1u);
  s.bp->destroyProxy(s.proxies[0], nullptr);
  s.bp->destroyProxy(s.proxies[1], nullptr);
  EXPECT_TRUE(s.step().empty());
  s.bp->resetPool(nullptr);
  EXPECT_EQ(s.bp->broad_phase().size(), 0u);
  s.bp->destroyProxy(s.proxies[0], nullptr);  // from before the reset: refused without reading it
  EXPECT_EQ(s.bp->misuse_count(), 1u);
  EXPECT_EQ(s.add(2, btVector3(0, 0, 0), kOne)->m_uniqueId, 0);
  s.add(3, btVector3(1, 1, 1), kOne);
  EXPECT_EQ(s.step(), (PairSet{{2, 3}}));

  sapling::Status why;
  sapling::bullet::Options bad;
  bad.algorithm = "no-such-algorithm";
  EXPECT_EQ(sapling::bullet::BroadPhase::create(bad, nullptr, &why), nullptr);
  EXPECT_FALSE(why.ok());
  bad.algorithm = "auto";
  bad.broad_phase.max_pairs = 10;
  EXPECT_EQ(sapling::bullet::BroadPhase::create(bad, nullptr, &why), nullptr);
  EXPECT_EQ(why.code(), sapling::StatusCode::kInvalidArgument);
}

TEST(BulletBadUse, UserSuppliedCache) {
  btSortedOverlappingPairCache sorted;
  sapling::bullet::Options options;
  auto bp = sapling::bullet::BroadPhase::create(options, &sorted);
  ASSERT_TRUE(bp);
  EXPECT_EQ(bp->getOverlappingPairCache(), &sorted);
  btCollisionObject objects[2];
  objects[0].setUserIndex(0);
  objects[1].setUserIndex(1);
  bp->createProxy(btVector3(0, 0, 0), kOne, 0, &objects[0], 1, -1, nullptr);
  btBroadphaseProxy* b = bp->createProxy(kOne, kOne * 2, 0, &objects[1], 1, -1, nullptr);
  bp->calculateOverlappingPairs(nullptr);
  EXPECT_EQ(cache_pairs(&sorted), (PairSet{{0, 1}}));
  bp->setAabb(b, kOne * 3, kOne * 4, nullptr);
  bp->calculateOverlappingPairs(nullptr);
  EXPECT_TRUE(cache_pairs(&sorted).empty());
}

// Every registered algorithm under random creation, destruction, moves (some
// twice a step, some NaN or infinite), filter changes and statics: the cache
// equals brute force at every step, rays and boxes too.
int standalone_index(const btBroadphaseProxy* p) {
  return static_cast<int>(reinterpret_cast<std::intptr_t>(p->m_clientObject));
}

TEST(BulletAlgorithms, EveryAlgorithmKeepsTheCacheExact) {
  for (const sapling::AlgorithmInfo& info : sapling::algorithms()) {
    if (info.name == "unisize") continue;  // one box size only: it parks the others (checked below)
    SCOPED_TRACE(info.name);
    sapling::bullet::Options options;
    options.algorithm = info.name;
    std::size_t warnings = 0;
    options.warn = [&](std::string_view) { ++warnings; };
    auto bp = sapling::bullet::BroadPhase::create(options);
    ASSERT_TRUE(bp);
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> at(-6, 6), size(0.1f, 3.0f), unit(0, 1);
    std::map<int, btBroadphaseProxy*> live;  // by index
    int next = 1;
    auto random_box = [&](btVector3& lo, btVector3& hi) {
      lo = btVector3(at(rng), at(rng), at(rng));
      hi = lo + btVector3(size(rng), size(rng), size(rng));
      const float r = unit(rng);
      if (r < 0.02f)
        lo.setX(kNaN);
      else if (r < 0.03f)
        hi.setY(kInf);
    };
    const int groups[] = {1, 2, 4, 1 | 4};
    const int masks[] = {-1, -1 ^ 2, 1 | 2, 4};
    std::size_t most = 0;
    for (int step = 0; step < 60; ++step) {
      const int creations = step == 0 ? 150 : 8;
      for (int n = 0; n < creations; ++n) {
        btVector3 lo, hi;
        random_box(lo, hi);
        const int g = static_cast<int>(rng() % 4);
        live[next] = bp->createProxy(lo, hi, 0, reinterpret_cast<void*>(static_cast<std::intptr_t>(next)), groups[g],
                                     masks[g], nullptr);
        ++next;
      }
      for (auto it = live.begin(); it != live.end();) {
        const float r = unit(rng);
        btVector3 lo, hi;
        if (r < 0.04f) {
          bp->destroyProxy(it->second, nullptr);
          it = live.erase(it);
          continue;
        }
        if (r < 0.35f) {
          random_box(lo, hi);
          bp->setAabb(it->second, lo, hi, nullptr);
          if (r < 0.1f) {
            random_box(lo, hi);
            bp->setAabb(it->second, lo, hi, nullptr);
          }
        } else if (r < 0.38f) {
          const int g = static_cast<int>(rng() % 4);
          it->second->m_collisionFilterGroup = groups[g];
          it->second->m_collisionFilterMask = masks[g];
        }
        ++it;
      }
      bp->calculateOverlappingPairs(nullptr);
      PairSet want;
      for (auto a = live.begin(); a != live.end(); ++a) {
        for (auto b = std::next(a); b != live.end(); ++b) {
          const btBroadphaseProxy *pa = a->second, *pb = b->second;
          bool valid = true;
          for (int k = 0; k < 3; ++k)
            valid = valid && pa->m_aabbMin[k] <= pa->m_aabbMax[k] && pb->m_aabbMin[k] <= pb->m_aabbMax[k];
          if (valid && closed_overlap(pa, pb) && group_mask(pa, pb)) want.insert({a->first, b->first});
        }
      }
      ASSERT_EQ(cache_pairs(bp->getOverlappingPairCache(), standalone_index), want) << "step " << step;
      most = std::max(most, want.size());
    }
    EXPECT_GT(most, 100u);
    EXPECT_GT(warnings, 0u);  // NaN boxes were parked
    EXPECT_EQ(bp->misuse_count(), 0u);
  }
}

TEST(BulletAlgorithms, UnisizeParksOtherSizes) {
  sapling::bullet::Options options;
  options.algorithm = "unisize";
  std::vector<std::string> warnings;
  options.warn = [&](std::string_view m) { warnings.emplace_back(m); };
  auto bp = sapling::bullet::BroadPhase::create(options);
  ASSERT_TRUE(bp);
  btBroadphaseProxy* a =
      bp->createProxy(btVector3(0, 0, 0), kOne, 0, reinterpret_cast<void*>(std::intptr_t{1}), 1, -1, nullptr);
  bp->createProxy(kOne, kOne * 2, 0, reinterpret_cast<void*>(std::intptr_t{2}), 1, -1, nullptr);
  bp->calculateOverlappingPairs(nullptr);
  bp->createProxy(btVector3(0, 0, 0), kOne * 5, 0, reinterpret_cast<void*>(std::intptr_t{3}), 1, -1, nullptr);
  bp->calculateOverlappingPairs(nullptr);
  EXPECT_EQ(cache_pairs(bp->getOverlappingPairCache(), standalone_index), (PairSet{{1, 2}}));
  EXPECT_EQ(warnings.size(), 1u);
  EXPECT_EQ(bp->parked_count(), 1u);
  EXPECT_FALSE(bp->is_parked(a));
}

}  // namespace
