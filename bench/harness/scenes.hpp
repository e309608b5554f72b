// The benchmark scene catalogue: named instances of the spec's scenarios
// (docs/scenarios.md W1..W4), Terdiman's static random-box test, and a
// bipartite scene, grouped into suites (one-shot, persistent, persistent-large, unisize, cluster,
// tracy, static, changing); and the query scenes (suite "queries"): the static
// level asked region queries and rays.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/contender.hpp"
#include "sapling/ray.hpp"
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

/// The seed of the static level's scenes and of the query scenes.
inline constexpr std::uint64_t kLevelSeed = 15;

/// Issue 15's static level: side x side floor tiles on a grid of pitch 1,
/// tile (i, j) at index j * side + i, x = [i, i + w], y = [j, j + w],
/// z = [0, 0.5 + u) with u in [0, 1) drawn per tile from `seed`; w = 1.02
/// (`dense`: each tile overlaps its 8 neighbours, 4 static-static overlaps
/// per inner tile) or 0.98 (spread: no two tiles overlap).
std::vector<Box3> make_level_tiles(std::size_t side, bool dense, std::uint64_t seed);

/// A query scene (issue 15, `sapling bench --suite queries`): the dense
/// static level's tiles held by a sapling BroadPhase and by a peer's tree,
/// asked the same batch of region queries and rays every frame.
struct QuerySceneSpec {
  std::string name;
  int dims = 3;           ///< 2: the tiles' footprints as 2D boxes
  bool as_static = true;  ///< the tiles as static objects (else dynamic ones)
  std::string algorithm;  ///< sapling's BroadPhase algorithm (the dynamic objects' structure)
  std::size_t side = 0;   ///< side x side tiles (make_level_tiles(side, true, kLevelSeed))
  std::size_t queries = 0;
  std::size_t rays = 0;  ///< fewer where every ray tests every box
  int frames = 3;        ///< batches timed (RunOptions::frames overrides)
  std::string peer;      ///< the QueryPeer compared (make_query_peer())
};

/// The query scenes: level-3d-static ("sap", Bullet's dbvt), level-3d-dynamic
/// ("octree", the same Bullet world with dynamic proxies; 100 rays: rays
/// test every dynamic box), level-2d-static ("sap" in 2D, Box2D's tree); a
/// 1000 x 1000 level, 10,000 queries and rays, 3 frames (`quick`: 100 x 100,
/// 1000, 2 frames).
std::vector<QuerySceneSpec> query_scenes(bool quick);

/// A query scene's batch, the same every frame: region queries (centres
/// over the level, half-widths 0.5..2 on x and y, z = [0, 2.5], or 0 in 2D)
/// and rays (origins over the level at heights 0.2..2, directions of length
/// 1 at a random heading, slope up to +-0.3, max_t 16), from
/// scenario_math::Stream(kLevelSeed, 2^32 + k) and (kLevelSeed, 2^33 + k).
struct QueryBatch {
  std::vector<Box3> boxes;
  std::vector<Ray3> rays;
};
QueryBatch make_query_batch(const QuerySceneSpec& spec);

/// The static-static overlaps among the tiles of make_level_tiles(side,
/// dense, kLevelSeed): the pairs the static suite's scenes never report.
std::size_t level_overlaps(std::size_t side, bool dense);

}  // namespace sapling::bench
