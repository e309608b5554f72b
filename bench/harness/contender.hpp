// The benchmark harness's contenders: anything that takes the frames of a
// scene and can say which pairs overlap now. sapling's algorithms (through
// the persistent BroadPhase or one-shot BoxPruner calls) and the peers
// (CGAL, Bullet, FCL, Box2D; bench/harness/peer_*.cpp) all sit behind this
// one interface, so the runner times and verifies them the same way. The
// query scenes' peers (a spatial index asked region queries and rays over a
// fixed world) sit behind QueryPeer, below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/pair.hpp"
#include "sapling/ray.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::bench {

/// What a contender learns about a scene before its first frame.
struct SceneShape {
  std::string name;           ///< catalogue name of the scene
  int dims = 3;               ///< 2: squares in the plane (z = [0, 1] for every box)
  std::size_t n = 0;          ///< live boxes at frame 0
  std::optional<Box3> world;  ///< bounds every box stays within, when known
  Id split = 0;               ///< > 0: bipartite scene, ids < split against ids >= split
  bool is_static = false;     ///< one frame only: each repetition rebuilds from scratch
  bool one_size = false;      ///< at frame 0 every box is a translate of the first (max == min + size)
  /// > 0: ids < static_below are static objects (filter.hpp's pair rule: two
  /// static objects never form a pair, however they overlap; static ones never move).
  Id static_below = 0;
  bool bipartite() const noexcept { return split > 0; }
  bool has_statics() const noexcept { return static_below > 0; }
  bool is_static_id(Id id) const noexcept { return id < static_below; }
};

/// How a contender's pair set relates to the exact one.
enum class Exactness : std::uint8_t {
  kExact,     ///< claims exactly the overlapping pairs (closed boxes)
  kSuperset,  ///< fattens boxes: every exact pair plus some that only nearly overlap
};

/// Complete (all pairs among the scene's boxes) or bipartite (set A against set B).
enum class Query : std::uint8_t { kComplete, kBipartite };

/// One contender. Not thread-safe; the runner calls it from one thread.
/// frame() may throw std::exception when the contender cannot go on (the
/// runner then reports the message and drops it from the scene).
class Contender {
 public:
  virtual ~Contender() = default;

  virtual std::string name() const = 0;
  virtual Exactness exactness() const { return Exactness::kExact; }
  virtual Query query() const { return Query::kComplete; }
  /// A one-line remark printed with the results (fattening margin, limits), or empty.
  virtual std::string note() const { return {}; }
  /// False, with the reason in `why`, for a scene this contender cannot or should not run.
  virtual bool supports(const SceneShape& /*shape*/, std::string* /*why*/) const { return true; }
  /// Whether it applies the static pair rule (SceneShape::static_below): the
  /// runner runs scenes with static objects only with contenders that do.
  virtual bool handles_statics() const { return false; }

  /// Forgets everything and prepares for a new run of `shape`.
  virtual void reset(const SceneShape& shape) = 0;
  /// Processes the scenario's current frame: removed(), moved(), added() and
  /// boxes() (frame 0 adds everything). This is the timed call.
  virtual void frame(const Scenario& scenario) = 0;
  /// The current pair set, sorted by (a, b), in scenario ids. Not timed.
  virtual void pairs(std::vector<Pair>& out) = 0;
  /// Size of the current pair set. Not timed.
  virtual std::size_t pair_count() = 0;
  /// Bytes held now, when the contender can tell: for the objects (boxes,
  /// endpoints, indices) and for the pair set (the pair manager). Not timed.
  struct Memory {
    std::size_t object_bytes = 0;
    std::size_t pair_bytes = 0;
  };
  virtual std::optional<Memory> memory() const { return std::nullopt; }
  /// A running total of some work the contender counts (e.g. "swaps" of a
  /// sweep-and-prune), when it keeps one: the runner records its growth over
  /// each measured frame. Not timed.
  struct Counter {
    std::string name;
    std::uint64_t total = 0;
  };
  virtual std::optional<Counter> counter() const { return std::nullopt; }
};

/// What a contender factory may be told.
struct ContenderOptions {
  unsigned threads = 1;  ///< threads for sapling's parallel algorithms (peers stay single-threaded)
};

/// A contender the harness knows by name.
struct ContenderInfo {
  std::string name;
  std::string origin;  ///< "sapling" or the peer library
  std::string description;
  Query query = Query::kComplete;
  std::function<std::unique_ptr<Contender>(const ContenderOptions&)> make;
  /// Runs only in scenes that ask for it (SceneSpec::opt_in) or when named with --contenders.
  bool opt_in = false;
  bool is_sapling() const { return origin == "sapling"; }
};

/// Every contender compiled into this build: sapling's first, then the
/// peers that were found at configure time.
const std::vector<ContenderInfo>& contender_catalogue();

/// The catalogue entry called `name`, or null.
const ContenderInfo* find_contender(const std::string& name);

/// Names of the peer libraries compiled in (for reports), e.g. "CGAL 5.5.1".
std::vector<std::string> peer_libraries();

/// A peer's spatial index over a fixed world, for the query scenes
/// (QuerySceneSpec, run_query_scene()). Its answers are exact: the peer's
/// candidates (from fattened boxes, or a conservative ray test) are filtered
/// by the exact closed-box test and by ray_entry(), timed, as a user who
/// needs exact answers would.
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

/// The query peer called `name` ("bullet-dbvt": Bullet's btDbvtBroadphase,
/// 3D; "box2d": Box2D's b2DynamicTree, 2D, z ignored), or null when its
/// library is not compiled in.
std::unique_ptr<QueryPeer> make_query_peer(const std::string& name);

/// Helpers shared by contenders.
namespace detail {

/// The boxes of `ids` gathered from the scenario, into `out`.
void gather(const Scenario& scenario, std::span<const Id> ids, std::vector<Box3>& out);
/// Sorts and removes duplicates.
void sort_pairs(std::vector<Pair>& pairs);

}  // namespace detail

}  // namespace sapling::bench
