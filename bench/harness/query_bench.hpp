// The query benchmark of issue 15 (`sapling bench --suite queries`): region
// queries and ray casts against a world of a million boxes, per query, for
// sapling's BroadPhase and the peers' trees (Bullet's btDbvtBroadphase in 3D,
// Box2D's b2DynamicTree in 2D), every answer checked against sapling's.
//
// The worlds are the static level of the "static" suite (make_level_tiles(),
// dense): its tiles added as static objects (sapling keeps them in its AABB
// tree), the same tiles as dynamic objects (answered by the algorithm's own
// structure where it has one: the octree; rays test every dynamic box), and
// the tiles as 2D boxes. Each frame issues the same deterministic batch of
// region queries and rays (QueryBenchOptions) through every contender in
// turn; the figure is the median over the frames of (batch time / batch
// size), in nanoseconds per query.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/ray.hpp"

namespace sapling::bench {

/// A peer's spatial index over a fixed world, for the query benchmark.
/// Its answers are exact: the peer's candidates (from fattened boxes, or a
/// conservative ray test) are filtered by the exact closed-box test and by
/// ray_entry(), timed, as a user who needs exact answers would.
class QueryPeer {
 public:
  virtual ~QueryPeer() = default;
  virtual std::string name() const = 0;
  /// What the peer's own calls return and what is filtered, one line.
  virtual std::string note() const = 0;
  /// Inserts every box (ids 0 .. n - 1); `as_static`: in the peer's static set.
  virtual void build(std::span<const Box3> boxes, bool as_static) = 0;
  /// The ids of the boxes overlapping `box`, in any order, into `out` (replaced).
  virtual void query(const Box3& box, std::vector<Id>& out) = 0;
  /// Every box the ray meets with its entry (ray.hpp), in any order, into `out` (replaced).
  virtual void ray(const Ray3& ray, std::vector<RayHit>& out) = 0;
  /// The first hit only, or false.
  virtual bool ray_closest(const Ray3& ray, RayHit& hit) = 0;
  /// Candidates the peer's calls have reported so far (before the exact filter).
  virtual std::size_t candidates() const = 0;
};

/// Bullet's btDbvtBroadphase (3D worlds); null when Bullet is not compiled in.
std::unique_ptr<QueryPeer> make_bullet_query_peer();
/// Box2D's b2DynamicTree (2D worlds: z ignored); null when Box2D is not compiled in.
std::unique_ptr<QueryPeer> make_box2d_query_peer();

struct QueryBenchOptions {
  bool quick = false;                 ///< a 100 x 100 level, 1000 queries and rays
  int frames = -1;                    ///< frames (batches) per world; -1 = 3 (quick: 2)
  bool progress = true;               ///< progress lines on stderr
  std::vector<std::string> excluded;  ///< peers left out, by name ("bullet-dbvt", "box2d")
};

/// Runs the benchmark and sets `tables` to its tables (Markdown), for the
/// caller to print and write; 0, or 4 when an answer differed from sapling's.
int run_query_bench(const QueryBenchOptions& options, std::string& tables);

}  // namespace sapling::bench
