// Random and adversarial scene traces, generated in memory from a seed, for
// the differential test (every algorithm against brute), and for the fuzz
// seeds and benchmarks that want the same shapes. Header-only.
//
// Each trace kind aims at one way an exact broad phase goes wrong: ties of
// closed intervals (grid, points, identical boxes, signed zeros), values at
// the ends of the float range (infinities, FLT_MAX, denormals), bookkeeping
// (churn, id reuse, extreme ids, empty frames, remove-all), and the
// incremental paths of sweep methods (teleports, reversals, stacked x).
//
// Every generated trace is valid: boxes are valid, an id has at most one
// operation per frame, only live ids are moved or removed, only dead ids are
// added. Numbers come from a portable generator, so a seed names the same
// trace on every platform.
#pragma once

#include <algorithm>
#include <array>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/pair.hpp"
#include "sapling/trace.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::testgen {

/// The scenarios' xoshiro256** stream (docs/scenarios.md): the
/// same numbers on every standard library, unlike std distributions.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : stream_(seed, 0) {}

  std::uint64_t next() { return stream_.next(); }

  /// Uniform in [0, n); 0 when n == 0.
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  /// Uniform integer in [lo, hi].
  int range(int lo, int hi) { return lo + static_cast<int>(below(static_cast<std::uint64_t>(hi - lo) + 1)); }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  float uniform(double lo, double hi) { return static_cast<float>(lo + (hi - lo) * unit()); }
  bool chance(double p) { return unit() < p; }

  template <class T>
  const T& pick(std::span<const T> values) {
    return values[below(values.size())];
  }

  template <class T>
  void shuffle(std::vector<T>& v) {
    for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  scenario_math::Stream stream_;
};

/// How fresh ids are chosen.
enum class IdStyle {
  kSequential,  ///< 0, 1, 2, ...
  kOffset,      ///< consecutive from a random 32-bit start (wrapping)
  kRandom32,    ///< uniform 32-bit
  kExtreme,     ///< 0, 2^32-1, 2^31 and neighbours first, then uniform 32-bit
};

/// A box from per-axis bounds; an axis given as (hi, lo) with lo < hi is
/// swapped. (+0, -0) is kept as given: it is valid, since -0 == +0.
inline Box3 ordered_box(std::array<float, 3> lo, std::array<float, 3> hi) {
  for (int k = 0; k < 3; ++k) {
    if (lo[k] > hi[k]) std::swap(lo[k], hi[k]);
  }
  return Box3{lo, hi};
}

inline Box3 cube(float x, float y, float z, float size) { return Box3{{x, y, z}, {x + size, y + size, z + size}}; }

/// Builds a valid trace frame by frame and keeps the live set.
class TraceBuilder {
 public:
  TraceBuilder(int dims, std::uint64_t seed) : rng_(seed) {
    trace_.dims = dims;
    next_seq_ = static_cast<Id>(rng_.next());
  }

  Rng& rng() { return rng_; }
  int dims() const { return trace_.dims; }
  std::size_t live_count() const { return live_.size(); }
  std::span<const Id> live_ids() const { return live_; }
  const Box3& box_of(Id id) const { return boxes_.at(id); }
  bool is_live(Id id) const { return index_.count(id) != 0; }
  bool touched(Id id) const { return touched_.count(id) != 0; }

  void begin_frame() {
    trace_.frames.emplace_back();
    touched_.clear();
    dead_.insert(dead_.end(), removed_now_.begin(), removed_now_.end());
    removed_now_.clear();
  }

  void add(Id id, const Box3& box) {
    require(!trace_.frames.empty() && !is_live(id) && !touched(id) && check_box(box), "add");
    const Box3 b = flatten(box);
    touched_.insert(id);
    index_[id] = live_.size();
    live_.push_back(id);
    boxes_[id] = b;
    ever_used_.insert(id);
    trace_.frames.back().added.push_back(id);
    trace_.frames.back().added_boxes.push_back(b);
  }

  void move(Id id, const Box3& box) {
    require(!trace_.frames.empty() && is_live(id) && !touched(id) && check_box(box), "move");
    const Box3 b = flatten(box);
    touched_.insert(id);
    boxes_[id] = b;
    trace_.frames.back().moved.push_back(id);
    trace_.frames.back().moved_boxes.push_back(b);
  }

  void remove(Id id) {
    require(!trace_.frames.empty() && is_live(id) && !touched(id), "remove");
    touched_.insert(id);
    const std::size_t i = index_.at(id);
    index_[live_.back()] = i;
    live_[i] = live_.back();
    live_.pop_back();
    index_.erase(id);
    boxes_.erase(id);
    removed_now_.push_back(id);
    trace_.frames.back().removed.push_back(id);
  }

  /// Live ids without an operation this frame, in random order.
  std::vector<Id> shuffled_untouched_live() {
    std::vector<Id> ids;
    for (const Id id : live_) {
      if (!touched(id)) ids.push_back(id);
    }
    rng_.shuffle(ids);
    return ids;
  }

  /// An id that may be added now: with probability `reuse` one removed in an
  /// earlier frame (if any is free), else one never used.
  Id id_for_add(IdStyle style, double reuse) {
    if (!dead_.empty() && rng_.chance(reuse)) {
      for (int tries = 0; tries < 8; ++tries) {
        const std::size_t i = rng_.below(dead_.size());
        const Id id = dead_[i];
        if (!is_live(id) && !touched(id)) {
          dead_[i] = dead_.back();
          dead_.pop_back();
          return id;
        }
      }
    }
    for (;;) {
      const Id id = fresh_id(style);
      if (!ever_used_.count(id)) return id;
    }
  }

  Trace take() { return std::move(trace_); }

 private:
  static void require(bool ok, const char* what) {
    if (ok) return;
    std::fprintf(stderr, "trace_generators: invalid %s generated\n", what);
    std::abort();
  }

  Box3 flatten(Box3 b) const {
    if (trace_.dims == 2) b.min[2] = b.max[2] = 0.0f;
    return b;
  }

  Id fresh_id(IdStyle style) {
    static constexpr std::array<Id, 10> kExtremeIds = {0u,          4294967295u, 4294967294u, 1u,          2147483647u,
                                                       2147483648u, 2u,          4294967293u, 2147483646u, 2147483649u};
    switch (style) {
      case IdStyle::kSequential:
        return seq_++;
      case IdStyle::kOffset:
        return next_seq_++;
      case IdStyle::kRandom32:
        return static_cast<Id>(rng_.next());
      case IdStyle::kExtreme:
        for (const Id id : kExtremeIds) {
          if (!ever_used_.count(id)) return id;
        }
        return static_cast<Id>(rng_.next());
    }
    return static_cast<Id>(rng_.next());
  }

  Rng rng_;
  Trace trace_;
  std::vector<Id> live_;                       // live ids, any order
  std::unordered_map<Id, std::size_t> index_;  // id -> position in live_
  std::unordered_map<Id, Box3> boxes_;         // live id -> box
  std::unordered_set<Id> touched_;             // ids with an operation this frame
  std::unordered_set<Id> ever_used_;
  std::vector<Id> dead_;         // removed in an earlier frame (may be live again)
  std::vector<Id> removed_now_;  // removed this frame
  Id seq_ = 0;
  Id next_seq_ = 0;
};

/// One frame of random operations: `removes` removals and `moves` moves of
/// distinct live ids, then `adds` additions.
template <class MakeBox, class MoveBox>
void random_frame(TraceBuilder& t, std::size_t removes, std::size_t moves, std::size_t adds, MakeBox&& make_box,
                  MoveBox&& move_box, IdStyle style, double reuse) {
  t.begin_frame();
  const std::vector<Id> ids = t.shuffled_untouched_live();
  const std::size_t r = std::min(removes, ids.size());
  const std::size_t m = std::min(moves, ids.size() - r);
  for (std::size_t i = 0; i < r; ++i) t.remove(ids[i]);
  for (std::size_t i = r; i < r + m; ++i) t.move(ids[i], move_box(t.rng(), t.box_of(ids[i])));
  for (std::size_t i = 0; i < adds; ++i) t.add(t.id_for_add(style, reuse), make_box(t.rng()));
}

/// Rates of a steady trace: per frame, about `move` of the live boxes move
/// and about `churn` of them are removed and as many added.
struct Rates {
  double move = 0.3;
  double churn = 0.03;
  double reuse = 0.5;  // chance that an added id is a reused one
};

/// Frame 0 adds `n` boxes; each later frame moves and churns at `rates`,
/// keeping the live count near `n`.
template <class MakeBox, class MoveBox>
void steady_frames(TraceBuilder& t, std::size_t n, int frames, Rates rates, MakeBox&& make_box, MoveBox&& move_box,
                   IdStyle style) {
  random_frame(t, 0, 0, n, make_box, move_box, style, rates.reuse);
  for (int f = 1; f < frames; ++f) {
    const double live = static_cast<double>(t.live_count());
    const auto around = [&](double mean) {
      return static_cast<std::size_t>(t.rng().below(static_cast<std::uint64_t>(2 * mean) + 2));
    };
    const std::size_t removes = around(rates.churn * live);
    const std::size_t moves = around(rates.move * live);
    std::size_t adds = removes;
    if (t.live_count() < n) adds += std::min<std::size_t>(n - t.live_count(), 1 + n / 20);
    random_frame(t, removes, moves, adds, make_box, move_box, style, rates.reuse);
  }
}

// ---------------------------------------------------------------------------
// Value pools.

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kDenormMin = std::numeric_limits<float>::denorm_min();

/// Coordinates at the ends of the float range and around 1.
inline std::vector<float> extreme_values() {
  return {-FLT_MAX,    std::nextafter(-FLT_MAX, 0.0f),
          -1e38f,      -1e30f,
          -1e10f,      -16777217.0f,
          -1.0f,       -1e-30f,
          -0.0f,       0.0f,
          1e-30f,      std::nextafter(1.0f, 0.0f),
          1.0f,        std::nextafter(1.0f, 2.0f),
          16777216.0f, 16777218.0f,
          1e10f,       1e30f,
          1e38f,       std::nextafter(FLT_MAX, 0.0f),
          FLT_MAX};
}

/// Denormals, the smallest normals, and both zeros.
inline std::vector<float> denormal_values() {
  std::vector<float> v = {-FLT_MIN, -std::nextafter(FLT_MIN, 0.0f), -0.0f,
                          0.0f,     std::nextafter(FLT_MIN, 0.0f),  FLT_MIN};
  for (int k = 1; k <= 4; ++k) {
    v.push_back(static_cast<float>(k) * kDenormMin);
    v.push_back(-static_cast<float>(k) * kDenormMin);
  }
  return v;
}

/// Every special value, infinities and signed zeros included.
inline std::vector<float> special_values() {
  std::vector<float> v = extreme_values();
  const std::vector<float> d = denormal_values();
  v.insert(v.end(), d.begin(), d.end());
  v.push_back(-kInf);
  v.push_back(kInf);
  return v;
}

/// An interval from two picks of `pool`, ordered.
inline std::pair<float, float> pool_interval(Rng& rng, std::span<const float> pool) {
  float lo = rng.pick(pool);
  float hi = rng.pick(pool);
  if (lo > hi) std::swap(lo, hi);
  return {lo, hi};
}

inline Box3 pool_box(Rng& rng, std::span<const float> pool) {
  Box3 b;
  for (int k = 0; k < 3; ++k) std::tie(b.min[k], b.max[k]) = pool_interval(rng, pool);
  return b;
}

/// A box on the integer grid [0, g]: integer corner, extent 0..max_extent.
inline Box3 grid_box(Rng& rng, int g, int max_extent) {
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    b.min[k] = static_cast<float>(rng.range(0, g));
    b.max[k] = b.min[k] + static_cast<float>(rng.range(0, max_extent));
  }
  return b;
}

/// The box shifted by an integer step in -1..1 on each axis.
inline Box3 grid_step(Rng& rng, const Box3& b) {
  Box3 r = b;
  for (int k = 0; k < 3; ++k) {
    const auto d = static_cast<float>(rng.range(-1, 1));
    r.min[k] += d;
    r.max[k] += d;
  }
  return r;
}

/// A box with centre uniform in [0, world]^3 and half extents in [0.25, 1].
inline Box3 uniform_box(Rng& rng, double world) {
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    const float c = rng.uniform(0.0, world);
    const float h = rng.uniform(0.25, 1.0);
    b.min[k] = c - h;
    b.max[k] = c + h;
  }
  return b;
}

/// The box moved by up to `step` on each axis.
inline Box3 jitter(Rng& rng, const Box3& b, double step) {
  Box3 r = b;
  for (int k = 0; k < 3; ++k) {
    const float d = rng.uniform(-step, step);
    r.min[k] += d;
    r.max[k] += d;
    if (!(r.min[k] <= r.max[k])) r = b;  // rounding at large magnitudes
  }
  return r;
}

// ---------------------------------------------------------------------------
// Trace kinds.

enum class TraceKind {
  kUniform,         ///< uniform random boxes, small moves
  kGrid,            ///< integer grid: faces, edges and corners touch exactly
  kPointsAndFlat,   ///< point boxes, zero-width boxes (flat in one or two axes)
  kIdentical,       ///< many boxes with exactly the same bounds
  kInfinite,        ///< ground planes, half-infinite boxes, points at infinity
  kExtremeValues,   ///< ±FLT_MAX, huge and tiny values, neighbours of 1
  kSignedZero,      ///< -0.0 and +0.0 on touching faces, [+0, -0] intervals
  kDenormal,        ///< denormal coordinates and the smallest normals
  kTeleport,        ///< boxes jump across (and far out of) the world
  kChurn,           ///< many adds and removes per frame, ids reused
  kExtremeIds,      ///< ids 0, 2^32-1, 2^31 and random 32-bit ids
  kEmptyFrames,     ///< frames with no operations, moves to the same box
  kRemoveAllReadd,  ///< everything removed, then re-added in later frames
  kGrowing,         ///< live count 1, 2, 4, ..., 256, then halving to 0
  kStacked,         ///< every box over the same x interval (sweep worst case)
  kReversal,        ///< boxes cross each other: the x order reverses
  kMixed,           ///< all of the above values and operations at once
};

inline constexpr std::array kAllTraceKinds = {
    TraceKind::kUniform,        TraceKind::kGrid,          TraceKind::kPointsAndFlat, TraceKind::kIdentical,
    TraceKind::kInfinite,       TraceKind::kExtremeValues, TraceKind::kSignedZero,    TraceKind::kDenormal,
    TraceKind::kTeleport,       TraceKind::kChurn,         TraceKind::kExtremeIds,    TraceKind::kEmptyFrames,
    TraceKind::kRemoveAllReadd, TraceKind::kGrowing,       TraceKind::kStacked,       TraceKind::kReversal,
    TraceKind::kMixed,
};

/// A name made of [a-z_], usable in test names.
inline std::string_view trace_kind_name(TraceKind kind) {
  switch (kind) {
    case TraceKind::kUniform:
      return "uniform";
    case TraceKind::kGrid:
      return "grid";
    case TraceKind::kPointsAndFlat:
      return "points_and_flat";
    case TraceKind::kIdentical:
      return "identical";
    case TraceKind::kInfinite:
      return "infinite";
    case TraceKind::kExtremeValues:
      return "extreme_values";
    case TraceKind::kSignedZero:
      return "signed_zero";
    case TraceKind::kDenormal:
      return "denormal";
    case TraceKind::kTeleport:
      return "teleport";
    case TraceKind::kChurn:
      return "churn";
    case TraceKind::kExtremeIds:
      return "extreme_ids";
    case TraceKind::kEmptyFrames:
      return "empty_frames";
    case TraceKind::kRemoveAllReadd:
      return "remove_all_readd";
    case TraceKind::kGrowing:
      return "growing";
    case TraceKind::kStacked:
      return "stacked";
    case TraceKind::kReversal:
      return "reversal";
    case TraceKind::kMixed:
      return "mixed";
  }
  return "unknown";
}

/// A test name for the parameter (algorithm, trace kind): [A-Za-z0-9_].
inline std::string algorithm_and_kind_name(const std::string& algorithm, TraceKind kind) {
  std::string name = algorithm + "_" + std::string(trace_kind_name(kind));
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

/// What to generate; n == 0 or frames == 0 takes the kind's default (a few
/// hundred boxes at most, a few dozen frames). A larger n keeps the density
/// of random, grid and stacked kinds; the kinds built from a fixed set of
/// values (identical, signed zero, denormal, extreme values, infinite, mixed)
/// get denser, by design. For growing, n is the peak (rounded down to a power
/// of two).
struct GenParams {
  int dims = 3;
  std::uint64_t seed = 1;
  std::size_t n = 0;
  int frames = 0;
};

// A small box (near the origin, or a sliver far out at 1e30) or, four times
// in ten, a box with bounds among the infinities, +-FLT_MAX, +-1e30, +-1
// and 0: the grid and tree algorithms' outsized and far-away paths.
inline Box3 far_and_infinite_box(Rng& r) {
  static const std::vector<float> kFar = {-kInf, -FLT_MAX, -1e30f, -1.0f, 0.0f, 1.0f, 1e30f, FLT_MAX, kInf};
  if (r.chance(0.6)) {
    const float x = r.uniform(-20, 20), y = r.uniform(-20, 20), z = r.uniform(-20, 20);
    if (r.chance(0.3)) {
      const float bx = 1e30f * (1.0f + x * 0x1p-20f);
      return Box3{{bx, y, z}, {std::nextafter(bx, kInf), y + 2, z + 2}};
    }
    return cube(x, y, z, 2.0f);
  }
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    float lo = r.pick(std::span<const float>(kFar)), hi = r.pick(std::span<const float>(kFar));
    if (lo > hi) std::swap(lo, hi);
    b.min[k] = lo, b.max[k] = hi;
  }
  return b;
}

// 3D: n unit cubes added at once, a third of them moved in each of two
// frames, all removed, then four boxes far from the old world: memory must
// go back after the removal.
inline Trace mass_insert_then_remove_trace(int n = 3000) {
  TraceBuilder t(3, 5);
  Rng& r = t.rng();
  t.begin_frame();
  for (int i = 0; i < n; ++i) t.add(Id(i), cube(r.uniform(0, 100), r.uniform(0, 100), r.uniform(0, 100), 1));
  for (int f = 0; f < 2; ++f) {
    t.begin_frame();
    for (int i = f; i < n; i += 3) {
      const Box3& b = t.box_of(Id(i));
      t.move(Id(i), cube(b.min[0] + 0.5f, b.min[1], b.min[2] - 0.5f, 1));
    }
  }
  t.begin_frame();
  for (int i = 0; i < n; ++i) t.remove(Id(i));
  t.begin_frame();
  for (int i = 0; i < 4; ++i) t.add(Id(n + i), cube(1e6f + float(i), 0, 0, 2));
  return t.take();
}

namespace detail {

// A grid size for n boxes that keeps the density of the default size.
inline int scaled_grid(int g, std::size_t n, std::size_t default_n, int dims) {
  const double f = std::pow(static_cast<double>(n) / static_cast<double>(default_n), 1.0 / dims);
  return std::max(1, static_cast<int>(std::lround(g * f)));
}

inline Trace uniform_trace(const GenParams& p, Rates rates, double teleport) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 200;
  const double world = 3.0 * std::cbrt(static_cast<double>(n)) * (p.dims == 2 ? 1.5 : 1.0);
  const auto make = [&](Rng& r) { return uniform_box(r, world); };
  const auto move = [&](Rng& r, const Box3& b) {
    if (r.chance(teleport)) {
      Box3 c = uniform_box(r, 3 * world);
      if (r.chance(0.2)) {  // far away, and maybe back later
        for (int k = 0; k < 3; ++k) {
          c.min[k] += 1e6f;
          c.max[k] += 1e6f;
        }
      }
      return c;
    }
    return jitter(r, b, 0.3);
  };
  steady_frames(t, n, p.frames ? p.frames : 30, rates, make, move, IdStyle::kOffset);
  return t.take();
}

inline Trace grid_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 200;
  const int g = scaled_grid(p.dims == 2 ? 24 : 10, n, 200, p.dims);
  const auto make = [&](Rng& r) { return grid_box(r, g, 2); };
  const auto move = [&](Rng& r, const Box3& b) { return r.chance(0.1) ? grid_box(r, g, 2) : grid_step(r, b); };
  steady_frames(t, n, p.frames ? p.frames : 30, Rates{0.4, 0.05, 0.5}, make, move, IdStyle::kSequential);
  return t.take();
}

inline Box3 point_or_flat_box(Rng& r, int g) {
  Box3 b = grid_box(r, g, 2);
  switch (r.range(0, 3)) {
    case 0:  // point
      b.max = b.min;
      break;
    case 1: {  // flat in one axis
      const int k = r.range(0, 2);
      b.max[k] = b.min[k];
      break;
    }
    case 2: {  // a segment: flat in two axes
      const int keep = r.range(0, 2);
      for (int k = 0; k < 3; ++k) {
        if (k != keep) b.max[k] = b.min[k];
      }
      break;
    }
    default:
      break;
  }
  return b;
}

inline Trace points_and_flat_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 150;
  const int g = scaled_grid(p.dims == 2 ? 10 : 5, n, 150, p.dims);
  const auto make = [&](Rng& r) { return point_or_flat_box(r, g); };
  const auto move = [&](Rng& r, const Box3& b) { return r.chance(0.5) ? point_or_flat_box(r, g) : grid_step(r, b); };
  steady_frames(t, n, p.frames ? p.frames : 30, Rates{0.4, 0.05, 0.5}, make, move, IdStyle::kSequential);
  return t.take();
}

inline Trace identical_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 120;
  // Two equal boxes, one touching them on a face, one on a corner only, one
  // apart: most boxes are exact copies of each other.
  static const std::array<Box3, 5> kTemplates = {Box3{{0, 0, 0}, {1, 1, 1}}, Box3{{0, 0, 0}, {1, 1, 1}},
                                                 Box3{{1, 0, 0}, {2, 1, 1}}, Box3{{2, 1, 1}, {2, 1, 1}},
                                                 Box3{{5, 5, 5}, {6, 6, 6}}};
  const auto make = [&](Rng& r) { return r.pick(std::span<const Box3>(kTemplates)); };
  const auto move = [&](Rng& r, const Box3& b) {
    return r.chance(0.3) ? b : r.pick(std::span<const Box3>(kTemplates));  // same bounds, or another copy
  };
  steady_frames(t, n, p.frames ? p.frames : 25, Rates{0.3, 0.05, 0.5}, make, move, IdStyle::kSequential);
  return t.take();
}

inline Box3 infinite_box(Rng& r) {
  const int g = 8;
  Box3 b = grid_box(r, g, 2);
  const int axis = r.range(0, 2);
  switch (r.range(0, 11)) {
    case 0:  // ground plane: x and z infinite, y below 0 or a slab at 0
      b = Box3{{-kInf, r.chance(0.5) ? -kInf : -1.0f, -kInf}, {kInf, 0.0f, kInf}};
      break;
    case 1:  // all of space
      b = Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}};
      break;
    case 2:  // half-infinite on one axis, below
      b.min[axis] = -kInf;
      break;
    case 3:  // half-infinite on one axis, above
      b.max[axis] = kInf;
      break;
    case 4:  // slab: infinite both ways on one axis
      b.min[axis] = -kInf;
      b.max[axis] = kInf;
      break;
    case 5:  // a point at +inf on one axis
      b.min[axis] = b.max[axis] = kInf;
      break;
    case 6:  // a point at -inf on one axis
      b.min[axis] = b.max[axis] = -kInf;
      break;
    case 7:  // the corner at +inf of everything
      b = Box3{{kInf, kInf, kInf}, {kInf, kInf, kInf}};
      break;
    case 8:  // from a grid corner to +inf on every axis
      b.max = {kInf, kInf, kInf};
      break;
    default:  // a plain grid box
      break;
  }
  return b;
}

inline Trace infinite_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 100;
  const auto make = [&](Rng& r) { return infinite_box(r); };
  const auto move = [&](Rng& r, const Box3& b) {
    if (r.chance(0.5)) return infinite_box(r);
    Box3 m = grid_step(r, b);  // inf + 1 stays inf
    return check_box(m) ? m : b;
  };
  steady_frames(t, n, p.frames ? p.frames : 25, Rates{0.4, 0.05, 0.5}, make, move, IdStyle::kSequential);
  return t.take();
}

inline Trace pool_trace(const GenParams& p, std::size_t default_n, const std::vector<float>& pool, IdStyle style,
                        Rates rates) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : default_n;
  const auto make = [&](Rng& r) { return pool_box(r, pool); };
  const auto move = [&](Rng& r, const Box3& b) {
    if (r.chance(0.7)) return pool_box(r, pool);
    Box3 m = b;  // change one axis only
    const int k = r.range(0, 2);
    std::tie(m.min[k], m.max[k]) = pool_interval(r, pool);
    return m;
  };
  steady_frames(t, n, p.frames ? p.frames : 25, rates, make, move, style);
  return t.take();
}

inline Box3 signed_zero_box(Rng& r) {
  // Intervals that meet at zero with every sign combination, [+0, -0]
  // included (valid: -0 == +0).
  static const std::array<std::pair<float, float>, 12> kIntervals = {{{-1.0f, -0.0f},
                                                                      {-1.0f, 0.0f},
                                                                      {0.0f, 1.0f},
                                                                      {-0.0f, 1.0f},
                                                                      {-0.0f, 0.0f},
                                                                      {0.0f, -0.0f},
                                                                      {-0.0f, -0.0f},
                                                                      {0.0f, 0.0f},
                                                                      {-1.0f, 1.0f},
                                                                      {1.0f, 2.0f},
                                                                      {-2.0f, -1.0f},
                                                                      {-2.0f, -0.0f}}};
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    std::tie(b.min[k], b.max[k]) = r.pick(std::span<const std::pair<float, float>>(kIntervals));
  }
  return b;
}

inline Trace signed_zero_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 80;
  const auto make = [&](Rng& r) { return signed_zero_box(r); };
  const auto move = [&](Rng& r, const Box3&) { return signed_zero_box(r); };
  steady_frames(t, n, p.frames ? p.frames : 25, Rates{0.4, 0.05, 0.5}, make, move, IdStyle::kSequential);
  return t.take();
}

inline Trace reversal_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 150;
  const int frames = p.frames ? p.frames : 30;
  // Box i starts at x = 2i and moves by -v_i per frame with v_i close to
  // 4i / frames: by the end the x order has reversed, with mass crossings
  // (and many exact ties) halfway.
  std::unordered_map<Id, float> velocity;
  t.begin_frame();
  for (std::size_t i = 0; i < n; ++i) {
    const Id id = t.id_for_add(IdStyle::kSequential, 0);
    const auto x = static_cast<float>(2 * i);
    const float y = t.rng().uniform(0, p.dims == 2 ? 8 : 4);
    const float z = t.rng().uniform(0, 4);
    t.add(id, Box3{{x, y, z}, {x + 1, y + 1, z + 1}});
    velocity[id] = static_cast<float>(4.0 * static_cast<double>(i) / frames) * (t.rng().chance(0.7) ? 1.0f : 1.01f);
  }
  for (int f = 1; f < frames; ++f) {
    t.begin_frame();
    const std::vector<Id> ids(t.live_ids().begin(), t.live_ids().end());
    for (const Id id : ids) {
      Box3 b = t.box_of(id);
      b.min[0] -= velocity[id];
      b.max[0] = b.min[0] + 1;
      t.move(id, b);
    }
  }
  return t.take();
}

inline Trace stacked_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 150;
  const double world = (p.dims == 2 ? 60 : 15) * std::pow(static_cast<double>(n) / 150, 1.0 / (p.dims - 1));
  // Same x interval for all, or one of a few tied ones; spread in y and z.
  const auto make = [&](Rng& r) {
    Box3 b = uniform_box(r, world);
    b.min[0] = static_cast<float>(r.range(0, 1));
    b.max[0] = b.min[0] + (r.chance(0.8) ? 1.0f : 0.0f);
    return b;
  };
  const auto move = [&](Rng& r, const Box3& b) {
    Box3 m = jitter(r, b, 0.5);
    m.min[0] = b.min[0];
    m.max[0] = b.max[0];
    return r.chance(0.1) ? make(r) : m;
  };
  steady_frames(t, n, p.frames ? p.frames : 25, Rates{0.4, 0.05, 0.5}, make, move, IdStyle::kSequential);
  return t.take();
}

inline Trace churn_trace(const GenParams& p, IdStyle style, double churn) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 150;
  const int g = scaled_grid(p.dims == 2 ? 20 : 8, n, 150, p.dims);
  const auto make = [&](Rng& r) { return grid_box(r, g, 2); };
  const auto move = [&](Rng& r, const Box3& b) { return grid_step(r, b); };
  steady_frames(t, n, p.frames ? p.frames : 40, Rates{0.2, churn, 0.6}, make, move, style);
  return t.take();
}

inline Trace empty_frames_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 100;
  const int g = scaled_grid(p.dims == 2 ? 16 : 8, n, 100, p.dims);
  const int frames = p.frames ? p.frames : 40;
  const auto make = [&](Rng& r) { return grid_box(r, g, 2); };
  const auto move = [&](Rng& r, const Box3& b) { return r.chance(0.5) ? b : grid_step(r, b); };
  random_frame(t, 0, 0, 0, make, move, IdStyle::kSequential, 0);  // frame 0 is empty too
  random_frame(t, 0, 0, n, make, move, IdStyle::kSequential, 0);
  for (int f = 2; f < frames; ++f) {
    if (t.rng().chance(0.5)) {
      t.begin_frame();
    } else if (t.rng().chance(0.3)) {
      random_frame(
          t, 0, t.live_count() / 4, 0, make, [](Rng&, const Box3& b) { return b; }, IdStyle::kSequential, 0);
    } else {
      random_frame(t, 2, 10, 2, make, move, IdStyle::kSequential, 0.5);
    }
  }
  return t.take();
}

inline Trace remove_all_readd_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 150;
  const int g = scaled_grid(p.dims == 2 ? 20 : 8, n, 150, p.dims);
  const auto make = [&](Rng& r) { return grid_box(r, g, 2); };
  const auto move = [&](Rng& r, const Box3& b) { return grid_step(r, b); };
  const auto remove_all = [&] {
    t.begin_frame();
    const std::vector<Id> ids(t.live_ids().begin(), t.live_ids().end());
    for (const Id id : ids) t.remove(id);
  };
  random_frame(t, 0, 0, n, make, move, IdStyle::kSequential, 0);
  for (int f = 0; f < 3; ++f) random_frame(t, 0, n / 3, 0, make, move, IdStyle::kSequential, 0);
  remove_all();
  t.begin_frame();                                                  // empty
  random_frame(t, 0, 0, n, make, move, IdStyle::kSequential, 1.0);  // the same ids again
  random_frame(t, 5, n / 3, 5, make, move, IdStyle::kSequential, 0.5);
  remove_all();
  random_frame(t, 0, 0, n, make, move, IdStyle::kSequential, 0.5);  // half old ids, half new
  random_frame(t, 0, n / 2, 0, make, move, IdStyle::kSequential, 0);
  remove_all();
  random_frame(t, 0, 0, 1, make, move, IdStyle::kSequential, 1.0);  // a single box again
  remove_all();
  return t.take();
}

inline Trace growing_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 256;
  const int g = scaled_grid(p.dims == 2 ? 24 : 10, n, 256, p.dims);
  const auto make = [&](Rng& r) { return grid_box(r, g, 3); };
  const auto move = [&](Rng& r, const Box3& b) { return grid_step(r, b); };
  std::size_t live = 0;
  for (std::size_t target = 1; target <= n; target *= 2) {  // 1, 2, 4, ..., n
    random_frame(t, 0, live / 4, target - live, make, move, IdStyle::kSequential, 0.5);
    live = target;
  }
  while (t.live_count() > 0) {  // halve down to zero
    const std::size_t removes = (t.live_count() + 1) / 2;
    random_frame(t, removes, t.live_count() / 4, 0, make, move, IdStyle::kSequential, 0);
  }
  return t.take();
}

inline Trace mixed_trace(const GenParams& p) {
  TraceBuilder t(p.dims, p.seed);
  const std::size_t n = p.n ? p.n : 150;
  std::vector<float> pool = special_values();
  for (int i = -3; i <= 6; ++i) pool.push_back(static_cast<float>(i));  // ties
  const auto make = [&](Rng& r) {
    switch (r.range(0, 4)) {
      case 0:
        return pool_box(r, pool);
      case 1:
        return infinite_box(r);
      case 2:
        return signed_zero_box(r);
      case 3:
        return point_or_flat_box(r, 6);
      default:
        return grid_box(r, 6, 2);
    }
  };
  const auto move = [&](Rng& r, const Box3& b) { return r.chance(0.3) ? b : make(r); };
  const IdStyle style = (p.seed & 1) ? IdStyle::kExtreme : IdStyle::kRandom32;
  steady_frames(t, n, p.frames ? p.frames : 40, Rates{0.3, 0.2, 0.6}, make, move, style);
  return t.take();
}

}  // namespace detail

/// The trace of `kind` for `params` (the same on every platform).
inline Trace make_trace(TraceKind kind, const GenParams& params) {
  const std::uint64_t salt = static_cast<std::uint64_t>(kind) * 0x9e3779b97f4a7c15ull;
  GenParams p = params;
  p.seed ^= salt;  // different kinds with the same seed share no randomness
  switch (kind) {
    case TraceKind::kUniform:
      return detail::uniform_trace(p, Rates{0.3, 0.03, 0.5}, 0.0);
    case TraceKind::kGrid:
      return detail::grid_trace(p);
    case TraceKind::kPointsAndFlat:
      return detail::points_and_flat_trace(p);
    case TraceKind::kIdentical:
      return detail::identical_trace(p);
    case TraceKind::kInfinite:
      return detail::infinite_trace(p);
    case TraceKind::kExtremeValues:
      return detail::pool_trace(p, 120, extreme_values(), IdStyle::kSequential, Rates{0.4, 0.05, 0.5});
    case TraceKind::kSignedZero:
      return detail::signed_zero_trace(p);
    case TraceKind::kDenormal:
      return detail::pool_trace(p, 100, denormal_values(), IdStyle::kSequential, Rates{0.4, 0.05, 0.5});
    case TraceKind::kTeleport:
      return detail::uniform_trace(p, Rates{0.5, 0.03, 0.5}, 0.5);
    case TraceKind::kChurn:
      return detail::churn_trace(p, IdStyle::kOffset, 0.3);
    case TraceKind::kExtremeIds:
      return detail::churn_trace(p, IdStyle::kExtreme, 0.2);
    case TraceKind::kEmptyFrames:
      return detail::empty_frames_trace(p);
    case TraceKind::kRemoveAllReadd:
      return detail::remove_all_readd_trace(p);
    case TraceKind::kGrowing:
      return detail::growing_trace(p);
    case TraceKind::kStacked:
      return detail::stacked_trace(p);
    case TraceKind::kReversal:
      return detail::reversal_trace(p);
    case TraceKind::kMixed:
      return detail::mixed_trace(p);
  }
  return {};
}

}  // namespace sapling::testgen
