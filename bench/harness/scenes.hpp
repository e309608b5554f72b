// The benchmark scene catalogue: named instances of the spec's scenarios
// (docs/scenarios.md W1..W4), Terdiman's static random-box test, and a
// bipartite scene, grouped into suites (one-shot, persistent, persistent-large, unisize, cluster,
// tracy).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/contender.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::bench {

/// A named scene: how to build it and how long to run it.
struct SceneSpec {
  std::string name;
  std::string description;                          ///< one line
  std::function<std::unique_ptr<Scenario>()> make;  ///< a fresh scenario at frame 0
  int frames = 10;                                  ///< measured frames after frame 0 (static: ignored)
  bool one_frame = false;                           ///< frame 1 is the event measured: --frames, --quick ignored
  int warmup = 0;                                   ///< frames run before the measured ones, not counted
  int reps = 1;                                     ///< repetitions (static scenes: rebuilds)
  Id split = 0;                                     ///< > 0: bipartite, ids < split against the others
  Id static_below = 0;                              ///< > 0: ids < static_below are static (SceneShape)
  bool is_static = false;                           ///< nothing moves: only frame 0 is timed, reps times
  std::optional<std::size_t> expected_pairs;        ///< published pair count at frame 0, if any
  /// Contenders left out unless named explicitly (--contenders): too slow at this size.
  std::vector<std::string> skip_by_default;
  /// Scenes of one series differ only in n: reports fit time per frame against n across them.
  std::string series;
  /// Opt-in contenders (ContenderInfo::opt_in) this scene runs by default.
  std::vector<std::string> opt_in;
  /// When not empty: the only contenders this scene runs (opt-in ones included),
  /// unless --contenders names others.
  std::vector<std::string> only;
};

/// The shape a contender is told about, from the spec and its scenario at frame 0.
SceneShape shape_of(const SceneSpec& spec, const Scenario& scenario);

/// Suites: "one-shot", "persistent", "persistent-large" (up to a million
/// objects: worst frames and memory), "unisize" (the unisize paper's Table 1),
/// "cluster" (its Figure 4), "tracy" (Tracy, Buss and Woods 2009: Figures 2,
/// 8, 9, 10, 11), "static" (issue 15's static level, dense and spread);
/// "all" is their union.
/// `quick` gives small scenes of the same kinds for smoke tests.
std::vector<SceneSpec> suite_scenes(const std::string& suite, bool quick);

/// The names of the suites (not counting "all").
std::vector<std::string> suite_names();

/// Every scene of every suite, full and quick, without repeats.
std::vector<SceneSpec> all_scenes();

/// The scene called `name` (full or quick catalogue), or nullopt.
std::optional<SceneSpec> find_scene(const std::string& name);

/// Terdiman's random-box test (BoxPruning, 2017), n boxes, one static frame:
/// with the MSVC C runtime's rand() seeded with 42, per box the centre
/// x, y, z = (rand() & 4095) - 2048, then half-extents x, y, z = rand() & 127;
/// box = centre -+ extent. 10k boxes: 11,811 pairs; 100k: 1,144,045.
std::unique_ptr<Scenario> make_terdiman_scene(std::size_t n);

/// The seed of the static level's scenes and of the query benchmark's worlds.
inline constexpr std::uint64_t kLevelSeed = 15;

/// Issue 15's static level: side x side floor tiles on a grid of pitch 1,
/// tile (i, j) at index j * side + i, x = [i, i + w], y = [j, j + w],
/// z = [0, 0.5 + u) with u in [0, 1) drawn per tile from `seed`; w = 1.02
/// (`dense`: each tile overlaps its 8 neighbours, 4 static-static overlaps
/// per inner tile) or 0.98 (spread: no two tiles overlap).
std::vector<Box3> make_level_tiles(std::size_t side, bool dense, std::uint64_t seed);

}  // namespace sapling::bench
