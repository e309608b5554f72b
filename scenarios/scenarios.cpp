// The deterministic benchmark scenarios of docs/scenarios.md (W1..W5).
// Every rule here (generator, draw order, integer units, motion, id reuse,
// step order) follows that page exactly, so the boxes match the peers' bit for
// bit; the pair counts it quotes are checked in tests/scenario_test.cpp.
#include "scenarios/scenario.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <limits>
#include <new>
#include <string>

namespace sapling {

Scenario::~Scenario() = default;

namespace scenario_math {
namespace {

// -Wpedantic rejects __int128 unless marked as an extension.
__extension__ typedef unsigned __int128 U128;

// floor(sqrt(x)): a floating estimate, then exact correction. c*c <= x is
// tested as c <= x / c so no product can overflow.
std::uint64_t isqrt128(U128 x) noexcept {
  if (x == 0) return 0;
  const double est = std::sqrt(static_cast<double>(x));
  U128 r = est >= 0x1p64 ? ~std::uint64_t{0} : static_cast<std::uint64_t>(est);
  if (r == 0) r = 1;
  while (r > x / r) --r;
  while (r + 1 <= x / (r + 1)) ++r;
  return static_cast<std::uint64_t>(r);
}

// floor(cbrt(x)), the same way: c*c*c <= x is tested as c <= x / (c*c).
std::uint64_t icbrt128(U128 x) noexcept {
  if (x == 0) return 0;
  U128 r = static_cast<std::uint64_t>(std::cbrt(static_cast<double>(x)));
  if (r == 0) r = 1;
  while (r > x / (r * r)) --r;
  while (r + 1 <= x / ((r + 1) * (r + 1))) ++r;
  return static_cast<std::uint64_t>(r);
}

}  // namespace

std::uint64_t isqrt(std::uint64_t x) noexcept { return isqrt128(x); }
std::uint64_t icbrt(std::uint64_t x) noexcept { return icbrt128(x); }

std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  state += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

Stream::Stream(std::uint64_t seed, std::uint64_t id) noexcept {
  std::uint64_t x = seed ^ (id * 0xD1B54A32D192ED03ull);
  for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t Stream::next() noexcept {
  const std::uint64_t result = std::rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = std::rotl(s_[3], 45);
  return result;
}

}  // namespace scenario_math

namespace {

using scenario_math::Stream;
using U128 = scenario_math::U128;

constexpr std::int64_t kBase = 4096;                                   // units per world unit
constexpr std::int64_t kMaxCoord = std::int64_t{1} << 24;              // |c| <= 2^24: float(c) is exact
constexpr std::uint64_t kScenarioStream = ~std::uint64_t{0};           // Stream id of scenario-level choices
constexpr std::uint64_t kMaxObjects = std::numeric_limits<Id>::max();  // ids are 32-bit; below() needs k < 2^32

enum class Kind { kUnisize2d, kTracy, kAllMoving3d, kCluster };

// Integer state of one object; the box is derived from it exactly.
struct Object {
  std::array<std::int64_t, 3> p{};  // min corner
  std::array<std::int64_t, 3> v{};  // velocity per frame
  std::array<std::int64_t, 3> e{};  // extent
};

Box3 to_box(const Object& o) noexcept {
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    b.min[k] = static_cast<float>(o.p[k]) / 4096.0f;
    b.max[k] = static_cast<float>(o.p[k] + o.e[k]) / 4096.0f;
  }
  return b;
}

// The spec's random direction(dim) scaled to `speed`; axes beyond dim get 0.
void random_direction(Stream& s, int dim, std::int64_t speed, std::array<std::int64_t, 3>& v) {
  constexpr std::int64_t kR = std::int64_t{1} << 15;
  std::array<std::int64_t, 3> a{};
  std::int64_t r2 = 0;
  do {
    r2 = 0;
    for (int k = 0; k < dim; ++k) {
      a[k] = static_cast<std::int64_t>(s.below(2 * kR + 1)) - kR;
      r2 += a[k] * a[k];
    }
  } while (r2 < kR * kR / 16 || r2 > kR * kR);
  const auto len = static_cast<std::int64_t>(scenario_math::isqrt(static_cast<std::uint64_t>(r2)));
  for (int k = 0; k < 3; ++k) v[k] = k < dim ? a[k] * speed / len : 0;
}

class Simulation final : public Scenario {
 public:
  Simulation(Kind kind, int dims, ScenarioParams params) : Scenario(dims, std::move(params)), kind_(kind) {}

  // Each builds frame 0, or returns an error message and builds nothing.
  std::string build_unisize2d();
  std::string build_tracy();
  std::string build_allmoving3d();
  std::string build_cluster();

  void step() override;

 private:
  void resize(std::size_t n);
  void set_object(std::size_t id, const Object& o);
  Object make_cube(std::uint64_t creation);  // tracy's object with creation index `creation`
  template <int kDims, bool kBounded>
  void move_all();

  Kind kind_;
  std::uint64_t seed_ = 0;
  std::int64_t side_ = 0;   // L, the world side in units
  std::int64_t speed_ = 0;  // in units per frame
  std::vector<Object> objects_;
  std::vector<std::uint8_t> moving_;  // tracy's moving flag; 1 elsewhere
  std::vector<Id> free_;              // LIFO free list
  std::uint64_t next_creation_ = 0;
  Stream scene_{0, kScenarioStream};
  // tracy's per-step counts and its `n` and `moving` for surplus inserts.
  std::uint64_t n_ = 0, moving_count_ = 0, inserts_ = 0, removes_ = 0;
};

void Simulation::resize(std::size_t n) {
  objects_.resize(n);
  boxes_.resize(n);
  alive_.resize(n, 0);
  moving_.resize(n, 0);
}

void Simulation::set_object(std::size_t id, const Object& o) {
  objects_[id] = o;
  boxes_[id] = to_box(o);
}

// Frame 0: ids 0..n-1 alive, all added, alive list [0..n-1].
void initial_lists(std::size_t n, std::vector<Id>& alive_ids, std::vector<Id>& added) {
  alive_ids.resize(n);
  for (std::size_t i = 0; i < n; ++i) alive_ids[i] = static_cast<Id>(i);
  added = alive_ids;
}

std::string Simulation::build_unisize2d() {
  const std::uint64_t n = params_.n;
  seed_ = *params_.seed;
  side_ = static_cast<std::int64_t>(scenario_math::isqrt128(U128{n} * kBase * kBase * 1000 / params_.density_pm));
  speed_ = kBase * *params_.speed_pm / 1000;
  if (side_ < kBase) return "unisize2d: density_pm too high for n (world smaller than one square)";
  if (side_ > kMaxCoord) return "unisize2d: world too large for exact floats (n too large or density_pm too low)";
  if (speed_ > side_ - kBase) return "unisize2d: speed_pm too high for the world (a square could leave it)";
  world_ = Box3{{0, 0, 0}, {float(side_) / 4096.0f, float(side_) / 4096.0f, 1.0f}};
  resize(n);
  const auto range = static_cast<std::uint64_t>(side_ - kBase + 1);
  for (std::uint64_t c = 0; c < n; ++c) {
    Stream s(seed_, c);
    Object o;
    o.p[0] = static_cast<std::int64_t>(s.below(range));
    o.p[1] = static_cast<std::int64_t>(s.below(range));
    o.e = {kBase, kBase, kBase};
    random_direction(s, 2, speed_, o.v);
    set_object(c, o);
  }
  std::fill(alive_.begin(), alive_.end(), 1);
  std::fill(moving_.begin(), moving_.end(), 1);
  initial_lists(n, alive_ids_, added_);
  next_creation_ = n;
  return {};
}

Object Simulation::make_cube(std::uint64_t creation) {
  Stream s(seed_, creation);
  Object o;
  const auto range = static_cast<std::uint64_t>(side_ - kBase + 1);
  for (int k = 0; k < 3; ++k) o.p[k] = static_cast<std::int64_t>(s.below(range));
  o.e = {kBase, kBase, kBase};
  random_direction(s, 3, speed_, o.v);
  return o;
}

std::string Simulation::build_tracy() {
  const std::uint64_t n = params_.n;
  seed_ = *params_.seed;
  n_ = n;
  moving_count_ = *params_.moving;
  inserts_ = *params_.inserts;
  removes_ = *params_.removes;
  if (inserts_ > n || removes_ > n) return "tracy: inserts and removes must not exceed n";
  // n * BASE^3 * 1000 passes 2^63 from n = 134218: 128-bit.
  side_ =
      static_cast<std::int64_t>(scenario_math::icbrt128(U128{n} * kBase * kBase * kBase * 1000 / params_.density_pm));
  speed_ = kBase * *params_.speed_pm / 1000;
  if (side_ < kBase) return "tracy: density_pm too high for n (world smaller than one cube)";
  if (side_ > kMaxCoord) return "tracy: world too large for exact floats (n too large or density_pm too low)";
  if (speed_ > side_ - kBase) return "tracy: speed_pm too high for the world (a cube could leave it)";
  const float l = float(side_) / 4096.0f;
  world_ = Box3{{0, 0, 0}, {l, l, l}};
  resize(n);
  for (std::uint64_t c = 0; c < n; ++c) {
    set_object(c, make_cube(c));
    moving_[c] = c < moving_count_ ? 1 : 0;
  }
  std::fill(alive_.begin(), alive_.end(), 1);
  initial_lists(n, alive_ids_, added_);
  next_creation_ = n;
  scene_ = Stream(seed_, kScenarioStream);
  return {};
}

std::string Simulation::build_allmoving3d() {
  const std::uint64_t n = params_.n;
  seed_ = *params_.seed;
  speed_ = kBase * *params_.speed_pm / 1000;
  resize(n);
  // Pass 1: every object's extents, then the world that holds them at the density.
  U128 volume = 0;
  std::int64_t max_e = 0;
  for (std::uint64_t c = 0; c < n; ++c) {
    Stream s(seed_, c);
    Object& o = objects_[c];
    for (int k = 0; k < 3; ++k) {
      o.e[k] = std::llround(static_cast<double>(kBase / 2) * std::exp2(3 * s.u01()));
      max_e = std::max(max_e, o.e[k]);
    }
    volume += U128(static_cast<std::uint64_t>(o.e[0] * o.e[1])) * static_cast<std::uint64_t>(o.e[2]);
  }
  side_ = static_cast<std::int64_t>(scenario_math::icbrt128(volume * 1000 / params_.density_pm));
  const char* name = params_.name == "small" ? "small" : "allmoving3d";
  if (side_ < max_e) return std::string(name) + ": density_pm too high for n (world smaller than a box)";
  if (side_ > kMaxCoord) return std::string(name) + ": world too large for exact floats";
  if (speed_ > side_ - max_e) return std::string(name) + ": speed_pm too high for the world (a box could leave it)";
  const float l = float(side_) / 4096.0f;
  world_ = Box3{{0, 0, 0}, {l, l, l}};
  // Pass 2: each object continues its own stream after its three extent draws.
  for (std::uint64_t c = 0; c < n; ++c) {
    Stream s(seed_, c);
    for (int k = 0; k < 3; ++k) s.next();
    Object o = objects_[c];
    for (int k = 0; k < 3; ++k)
      o.p[k] = static_cast<std::int64_t>(s.below(static_cast<std::uint64_t>(side_ - o.e[k] + 1)));
    random_direction(s, 3, speed_, o.v);
    set_object(c, o);
  }
  std::fill(alive_.begin(), alive_.end(), 1);
  std::fill(moving_.begin(), moving_.end(), 1);
  initial_lists(n, alive_ids_, added_);
  next_creation_ = n;
  return {};
}

std::string Simulation::build_cluster() {
  const std::uint64_t n = params_.n;
  seed_ = *params_.seed;
  side_ = static_cast<std::int64_t>(scenario_math::isqrt128(U128{n} * kBase * kBase * 1000 / params_.density_pm));
  if (side_ < kBase) return "cluster: density_pm too high for n (plane smaller than one cube)";
  // Unbounded: boxes travel about 2.4 L from the origin within a cycle; L <= 2^22 keeps them
  // below 2^24 units (exact floats) for the first two cycles.
  if (side_ > kMaxCoord / 4) return "cluster: plane too large for exact floats (n too large or density_pm too low)";
  speed_ =
      static_cast<std::int64_t>(scenario_math::isqrt(static_cast<std::uint64_t>(2 * side_ * side_))) / params_.cycle;
  resize(n);
  const auto range = static_cast<std::uint64_t>(side_ - kBase + 1);
  for (std::uint64_t c = 0; c < n; ++c) {
    Stream s(seed_, c);
    Object o;
    o.p[0] = static_cast<std::int64_t>(s.below(range));
    o.p[1] = static_cast<std::int64_t>(s.below(range));
    o.e = {kBase, kBase, kBase};
    // Toward the centre; L and BASE are positive, so / is the spec's floor division.
    const std::int64_t dx = side_ / 2 - (o.p[0] + kBase / 2);
    const std::int64_t dy = side_ / 2 - (o.p[1] + kBase / 2);
    if (dx != 0 || dy != 0) {
      const auto len = static_cast<std::int64_t>(scenario_math::isqrt(static_cast<std::uint64_t>(dx * dx + dy * dy)));
      o.v[0] = dx * speed_ / len;
      o.v[1] = dy * speed_ / len;
    }
    set_object(c, o);
  }
  std::fill(alive_.begin(), alive_.end(), 1);
  std::fill(moving_.begin(), moving_.end(), 1);
  initial_lists(n, alive_ids_, added_);
  next_creation_ = n;
  return {};
}

// Moves every live moving object, ascending ids, bouncing off [0, L - e] when bounded.
template <int kDims, bool kBounded>
void Simulation::move_all() {
  const std::size_t cap = objects_.size();
  const std::int64_t side = side_;
  for (std::size_t id = 0; id < cap; ++id) {
    if ((alive_[id] & moving_[id]) == 0) continue;
    Object& o = objects_[id];
    for (int k = 0; k < kDims; ++k) {
      std::int64_t p = o.p[k] + o.v[k];
      if constexpr (kBounded) {
        const std::int64_t h = side - o.e[k];
        if (p < 0) {
          p = -p;
          o.v[k] = -o.v[k];
        } else if (p > h) {
          p = 2 * h - p;
          o.v[k] = -o.v[k];
        }
      }
      o.p[k] = p;
    }
    boxes_[id] = to_box(o);
    moved_.push_back(static_cast<Id>(id));
  }
}

void Simulation::step() {
  removed_.clear();
  moved_.clear();
  added_.clear();
  // (1) Removal victims, picked from the alive list on the scenario stream.
  for (std::uint64_t r = 0; r < removes_ && !alive_ids_.empty(); ++r) {
    const std::size_t i = scene_.below(alive_ids_.size());
    const Id victim = alive_ids_[i];
    alive_ids_[i] = alive_ids_.back();
    alive_ids_.pop_back();
    alive_[victim] = 0;
    removed_.push_back(victim);
  }
  // (2) Motion.
  switch (kind_) {
    case Kind::kUnisize2d:
      move_all<2, true>();
      break;
    case Kind::kTracy:
      move_all<3, true>();
      break;
    case Kind::kAllMoving3d:
      move_all<3, true>();
      break;
    case Kind::kCluster:
      move_all<2, false>();
      break;
  }
  // (3) Inserts; freed ids of this step are not yet on the free list.
  for (std::uint64_t k = 0; k < inserts_; ++k) {
    const bool moving = k < removed_.size() ? moving_[removed_[k]] != 0 : scene_.below(n_) < moving_count_;
    Id id = 0;
    if (!free_.empty()) {
      id = free_.back();
      free_.pop_back();
    } else {
      id = static_cast<Id>(objects_.size());
      resize(objects_.size() + 1);
    }
    set_object(id, make_cube(next_creation_++));
    alive_[id] = 1;
    moving_[id] = moving ? 1 : 0;
    alive_ids_.push_back(id);
    added_.push_back(id);
  }
  // (4) This step's victims become reusable, in pick order.
  free_.insert(free_.end(), removed_.begin(), removed_.end());
  ++frame_;
}

constexpr std::array<ScenarioInfo, 5> kScenarios{{
    {"unisize2d", "W1: n unit squares in a square world, all moving and bouncing (Capannini & Larsson)"},
    {"tracy", "W2: n unit cubes, some moving, with inserts and removes every frame (Tracy, Buss & Woods)"},
    {"allmoving3d", "W3: n boxes of log-uniform extents in [0.5, 4], all moving and bouncing"},
    {"cluster", "W4: n unit cubes on a plane converging on the centre and spreading out again, unbounded"},
    {"small", "W5: allmoving3d with seed 5, for small n"},
}};

std::string resolve_and_build(const ScenarioParams& in, std::unique_ptr<Simulation>& out) {
  ScenarioParams p = in;
  Kind kind{};
  std::uint64_t default_n = 0;
  std::uint64_t default_seed = 0;
  std::uint32_t default_density = 0;
  auto set = [&](Kind k, std::uint64_t n, std::uint64_t seed, std::uint32_t density) {
    kind = k;
    default_n = n;
    default_seed = seed;
    default_density = density;
  };
  // Defaults: the spec's seeds and densities; n (and unisize2d's density) its first anchor value.
  if (p.name == "unisize2d") {
    set(Kind::kUnisize2d, 131072, 1, 200);
  } else if (p.name == "tracy") {
    set(Kind::kTracy, 10000, 2, 50);
  } else if (p.name == "allmoving3d") {
    set(Kind::kAllMoving3d, 10000, 3, 50);
  } else if (p.name == "cluster") {
    set(Kind::kCluster, 100000, 4, 250);
  } else if (p.name == "small") {
    set(Kind::kAllMoving3d, 10, 5, 50);
    p.density_pm = 50;  // Small(n, seed) fixes density and speed
    p.speed_pm = 100;
  } else {
    std::string names;
    for (const auto& s : kScenarios) names += (names.empty() ? "" : ", ") + std::string(s.name);
    return "unknown scenario '" + p.name + "' (known: " + names + ")";
  }
  if (p.n == 0) p.n = default_n;
  if (p.n > kMaxObjects) return p.name + ": n must be below 2^32";
  if (!p.seed) p.seed = default_seed;
  if (p.density_pm == 0) p.density_pm = default_density;
  if (!p.speed_pm) p.speed_pm = 100;
  // Fields of one scenario only are resolved there, so params() shows what is used.
  if (kind == Kind::kTracy) {
    if (!p.moving) p.moving = p.n / 10;
    if (!p.inserts) p.inserts = p.n / 200;
    if (!p.removes) p.removes = p.n / 200;
  }
  if (kind == Kind::kCluster && p.cycle == 0) p.cycle = 500;
  if (p.static_pm > 1000) return "static share must be at most 1000 per mille";
  if (p.groups > 32) return "groups must be at most 32 (one category bit each)";
  if (p.regroup_pm > 1000) return "regroup share must be at most 1000 per mille";
  if (p.regroup_pm != 0 && p.groups == 0) return "regrouping needs groups";
  out = std::make_unique<Simulation>(kind, kind == Kind::kUnisize2d ? 2 : 3, p);
  switch (kind) {
    case Kind::kUnisize2d:
      return out->build_unisize2d();
    case Kind::kTracy:
      return out->build_tracy();
    case Kind::kAllMoving3d:
      return out->build_allmoving3d();
    case Kind::kCluster:
      return out->build_cluster();
  }
  return "unreachable";
}

}  // namespace

std::unique_ptr<Scenario> make_scenario(const ScenarioParams& params, std::string* error) {
  std::unique_ptr<Simulation> sim;
  std::string message;
  try {
    message = resolve_and_build(params, sim);
  } catch (const std::bad_alloc&) {
    message = params.name + ": out of memory";
  }
  if (!message.empty()) {
    if (error) *error = std::move(message);
    return nullptr;
  }
  return sim;
}

std::span<const ScenarioInfo> scenario_list() noexcept { return kScenarios; }

void fill_frame(const Scenario& scenario, TraceFrame& frame) {
  const auto boxes = scenario.boxes();
  // A 2D trace holds its squares at z = [0, 0]; boxes() keeps the spec's z = [0, 1].
  const bool flat = scenario.dims() == 2;
  auto box_of = [&](Id id) {
    const Box3& b = boxes[id];
    return flat ? lift(Box2{{b.min[0], b.min[1]}, {b.max[0], b.max[1]}}) : b;
  };
  frame.removed.assign(scenario.removed().begin(), scenario.removed().end());
  frame.moved.assign(scenario.moved().begin(), scenario.moved().end());
  frame.added.assign(scenario.added().begin(), scenario.added().end());
  frame.moved_boxes.resize(frame.moved.size());
  for (std::size_t i = 0; i < frame.moved.size(); ++i) frame.moved_boxes[i] = box_of(frame.moved[i]);
  frame.added_boxes.resize(frame.added.size());
  for (std::size_t i = 0; i < frame.added.size(); ++i) frame.added_boxes[i] = box_of(frame.added[i]);
  fill_version_2(scenario, frame);
}

TraceFrame scenario_frame(const Scenario& scenario) {
  TraceFrame frame;
  fill_frame(scenario, frame);
  return frame;
}

}  // namespace sapling
