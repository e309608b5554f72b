// The deterministic benchmark scenarios W1..W5 of docs/scenarios.md:
// moving boxes generated from integer state and a fixed random generator, so
// every platform produces the same frames bit for bit and figures measured on
// them compare with the peers' figures.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/pair.hpp"
#include "sapling/trace.hpp"

namespace sapling {

/// Everything a scenario may take. Fields a scenario does not use are ignored;
/// a field left at its "default" value takes the scenario's default from the
/// spec (or, where the spec names none, its first anchor value).
struct ScenarioParams {
  /// "unisize2d" (W1), "tracy" (W2), "allmoving3d" (W3), "cluster" (W4) or "small" (W5).
  std::string name;
  /// Initial object count; 0 = default (unisize2d 131072, tracy 10000, allmoving3d 10000, cluster 100000, small 10).
  std::uint64_t n = 0;
  /// Random seed; unset = the spec's default (unisize2d 1, tracy 2, allmoving3d 3, cluster 4, small 5).
  /// Any value, 0 included, is a valid seed.
  std::optional<std::uint64_t> seed;
  /// Volume (area in 2D) density in per mille; 0 = default (unisize2d 200, tracy 50, allmoving3d 50, cluster 250).
  /// "small" ignores it (always 50).
  std::uint32_t density_pm = 0;
  /// Speed in per mille of BASE per frame; unset = 100; 0 is valid (velocities 0). Not used by cluster
  /// (its speed follows from `cycle`) nor by "small" (always 100).
  std::optional<std::uint32_t> speed_pm;
  /// tracy: initially moving objects (creation index < moving); unset = n / 10.
  std::optional<std::uint64_t> moving;
  /// tracy: objects inserted per step; unset = n / 200.
  std::optional<std::uint64_t> inserts;
  /// tracy: objects removed per step; unset = n / 200.
  std::optional<std::uint64_t> removes;
  /// cluster: frames of one converge-and-spread cycle; 0 = default 500.
  std::uint32_t cycle = 0;

  // Version 2 of the trace format (filters, static objects, queries): sapling's
  // own options, not in docs/scenarios.md; they change the frames' attributes
  // (fill_frame()), never the scenario's motion. All 0: a version-1 scenario.

  /// Per mille of the ids that are static: added with `static`, their moves
  /// left out of the frames (they stay where they were added).
  std::uint32_t static_pm = 0;
  /// Filter groups, 0..32; 0 = default filters. An id is in group g (drawn
  /// per id), with category bit g; objects of a group g >= 1 do not collide
  /// with each other (mask: every bit but g), group 0 collides with all.
  std::uint32_t groups = 0;
  /// Per mille of the live ids without another operation in a step that go
  /// to a new group (a `filter` operation); needs groups.
  std::uint32_t regroup_pm = 0;
  /// Region queries per frame, around live objects; with groups, every
  /// second one is masked to one group.
  std::uint32_t queries = 0;

  /// Whether the frames use anything of version 2.
  bool uses_version_2() const noexcept { return static_pm != 0 || groups != 0 || queries != 0; }
};

/// A running scenario: the current frame's boxes by id and what the last
/// frame changed. After construction the scenario is at frame 0 (every
/// initial object added); each step() advances one frame. Spans stay valid
/// until the next step().
class Scenario {
 public:
  virtual ~Scenario();
  Scenario(const Scenario&) = delete;
  Scenario& operator=(const Scenario&) = delete;

  /// Advances one frame: removals, moves (ascending ids), inserts, as the spec's step().
  virtual void step() = 0;

  /// 2 for unisize2d (squares in the plane), 3 for the others.
  int dims() const noexcept { return dims_; }
  /// The parameters in use, with every default this scenario uses resolved (seed and speed_pm always set).
  const ScenarioParams& params() const noexcept { return params_; }
  /// Frames advanced since construction (0 right after construction).
  std::uint64_t frame() const noexcept { return frame_; }
  /// The world the boxes bounce in, [0, L] per axis (unisize2d: z = [0, 1]); nullopt for cluster (unbounded).
  const std::optional<Box3>& world() const noexcept { return world_; }

  /// Number of ids ever used; ids are 0 .. capacity() - 1.
  std::size_t capacity() const noexcept { return boxes_.size(); }
  /// Current box of every id; entries whose alive() is 0 are stale. unisize2d boxes have z = [0, 1].
  std::span<const Box3> boxes() const noexcept { return boxes_; }
  /// 1 for live ids, 0 for free ones; capacity() entries.
  std::span<const std::uint8_t> alive() const noexcept { return alive_; }
  /// The live ids, in the spec's alive-list order.
  std::span<const Id> alive_ids() const noexcept { return alive_ids_; }
  /// Ids removed by the last step, in pick order (empty at frame 0).
  std::span<const Id> removed() const noexcept { return removed_; }
  /// Ids moved by the last step, ascending (empty at frame 0).
  std::span<const Id> moved() const noexcept { return moved_; }
  /// Ids inserted by the last step in insertion order; at frame 0 every initial id 0 .. n - 1.
  std::span<const Id> added() const noexcept { return added_; }

 protected:
  Scenario(int dims, ScenarioParams params) : params_(std::move(params)), dims_(dims) {}

  ScenarioParams params_;
  int dims_;
  std::uint64_t frame_ = 0;
  std::optional<Box3> world_;
  std::vector<Box3> boxes_;
  std::vector<std::uint8_t> alive_;
  std::vector<Id> alive_ids_;
  std::vector<Id> removed_;
  std::vector<Id> moved_;
  std::vector<Id> added_;
};

/// Builds the named scenario at frame 0. Returns null and, when `error` is
/// not null, sets a one-line message for an unknown name or bad parameters.
std::unique_ptr<Scenario> make_scenario(const ScenarioParams& params, std::string* error = nullptr);

/// A scenario's name and a one-line description.
struct ScenarioInfo {
  std::string_view name;         ///< as ScenarioParams::name takes it
  std::string_view description;  ///< one line: which spec workload and what moves
};

/// Every scenario make_scenario() knows, in spec order (W1..W5).
std::span<const ScenarioInfo> scenario_list() noexcept;

/// Writes the scenario's current frame into `frame` (reusing its storage):
/// removed, moved with boxes, added with boxes, and what the version-2
/// parameters add (see fill_version_2()). For dims() == 2 the boxes are the
/// squares lifted to z = [0, 0] (lift()), as a 2D trace holds them.
void fill_frame(const Scenario& scenario, TraceFrame& frame);

/// The version-2 part of fill_frame(): static and filter attributes of the
/// adds, the moves of static ids dropped, regrouping `filter` operations and
/// the queries, as params() asks (nothing when !uses_version_2()). Every
/// draw hashes (seed, id) or (seed, frame, id), so frames need no state.
void fill_version_2(const Scenario& scenario, TraceFrame& frame);

/// The scenario's current frame as a new TraceFrame (see fill_frame()).
TraceFrame scenario_frame(const Scenario& scenario);

/// The spec's integer helpers and random streams, exposed for tests and tools.
namespace scenario_math {

/// floor(sqrt(x)), exact for every x.
std::uint64_t isqrt(std::uint64_t x) noexcept;
/// floor(cbrt(x)), exact for every x.
std::uint64_t icbrt(std::uint64_t x) noexcept;
/// One splitmix64 step: advances `state` and returns the output.
std::uint64_t splitmix64(std::uint64_t& state) noexcept;

/// Stream(seed, id): xoshiro256** seeded from splitmix64(seed ^ id * 0xD1B54A32D192ED03).
class Stream {
 public:
  /// The stream of object creation index `id` (or the scenario stream, id 2^64 - 1).
  Stream(std::uint64_t seed, std::uint64_t id) noexcept;
  /// The next xoshiro256** output.
  std::uint64_t next() noexcept;
  /// ((next() >> 32) * k) >> 32: a value in [0, k) for 0 < k < 2^32.
  std::uint64_t below(std::uint64_t k) noexcept { return ((next() >> 32) * k) >> 32; }
  /// double(next() >> 11) * 2^-53: a value in [0, 1).
  double u01() noexcept { return static_cast<double>(next() >> 11) * 0x1p-53; }

 private:
  std::uint64_t s_[4];
};

}  // namespace scenario_math

}  // namespace sapling
