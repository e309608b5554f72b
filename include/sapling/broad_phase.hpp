// The persistent broad phase: batches of add / move / remove by user id, an
// update() per frame that returns the pairs that started and stopped
// overlapping, and all current pairs. Semantics: docs/trace-format.md.
//
//   auto bp = sapling::BroadPhase::create("sort-sweep");
//   bp->add(ids, boxes);                  // stage this frame's operations
//   const sapling::FrameDelta& d = bp->update();
//   for (sapling::Pair p : d.created) ...  // p.a < p.b, sorted by (a, b)
//
// Every call is checked before anything changes. A refused call returns a
// Status that names the operation, the id, its position in the batch and the
// reason, and leaves the broad phase exactly as it was: a batch is taken
// whole or not at all. No call throws, except std::bad_alloc when memory
// runs out, and then the broad phase stays valid and usable (see update()).
//
// Threads. The reads, every const member function (pairs(), contains(),
// box(), query(), query_many(), ray_cast(), ray_cast_many(), ...), may be
// called from any number of threads at once: they change nothing a reader
// shares (the tree behind rays is kept current by update(), or built once
// under a lock by the first read that needs it, then published). The
// writes (add(), move(), remove(), set_filter(), drop_staged(), update(),
// reserve()) need the broad phase to themselves: no read and no other write
// may run during one, which is the engine's frame order anyway (update, then
// queries from every job thread, then the next frame's operations). The
// batched reads (query_many() and the rays') answer on Options::threads'
// pool or Options::tasks, one batch at a time: a batch asked for while
// another runs there is answered on its caller's thread, with the same
// result.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"
#include "sapling/debug_draw.hpp"
#include "sapling/filter.hpp"
#include "sapling/options.hpp"
#include "sapling/pair.hpp"
#include "sapling/pair_manager.hpp"
#include "sapling/ray.hpp"
#include "sapling/status.hpp"
#include "sapling/task_system.hpp"

namespace sapling {

/// The pairs that changed in one frame, each list sorted by (a, b). Valid
/// until the next update().
struct FrameDelta {
  std::span<const Pair> created;
  std::span<const Pair> deleted;
  /// Ok, or why the frame was refused (StatusCode::kPairBudget: more pairs
  /// than Options::max_pairs after it); a refused frame reports no pair, its
  /// operations are dropped and the broad phase is as before the frame.
  Status status;
};

/// Makes an algorithm for the given options; null if it cannot.
using AlgorithmFactory = std::function<std::unique_ptr<Algorithm>(const Options&)>;

class BroadPhase {
 public:
  /// A broad phase running the registered algorithm `name` (see
  /// algorithms()), or null, with the reason in `*why` when given: an
  /// unknown name, options out of range (dims other than 2 or 3, more than
  /// ThreadPool::kMaxThreads threads), or a factory that made nothing.
  /// All algorithms report the same pairs; they differ in speed, and
  /// unisize in the boxes it takes (it refuses boxes of another size with
  /// StatusCode::kUnsupported). Which to choose: "auto", the default, which
  /// watches the workload and runs the product algorithm that suits it,
  /// switching as the workload changes; name another to run exactly that
  /// one. When each pays is its AlgorithmInfo::when (registry.hpp), shown in
  /// README's tables.
  /// Each one's method and measurements: docs/algorithms/. `name` may carry
  /// the algorithm's settings after a colon, "multi-sap:mode=witness",
  /// standing for Options::settings (which must then be empty).
  static std::unique_ptr<BroadPhase> create(std::string_view name = "auto", const Options& options = {},
                                            Status* why = nullptr);
  /// The same with an algorithm of your own that is not registered.
  static std::unique_ptr<BroadPhase> create(std::string name, AlgorithmFactory make, const Options& options,
                                            Status* why = nullptr);

  ~BroadPhase();
  BroadPhase(const BroadPhase&) = delete;
  BroadPhase& operator=(const BroadPhase&) = delete;

  /// Stages objects to appear at the next update(). Refused if the spans
  /// differ in length, a box is invalid, an id is live, or an id already has
  /// an operation in this frame (including twice in this batch).
  Status add(std::span<const Id> ids, std::span<const Box3> boxes);
  Status add(std::span<const Id> ids, std::span<const Box2> boxes);
  /// The same with collision filters (filter.hpp): `filters` holds one per
  /// id, or is empty for the defaults; `motion` applies to the whole batch
  /// (static objects are kept apart and never paired with each other).
  Status add(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters,
             Motion motion = Motion::kDynamic);
  Status add(std::span<const Id> ids, std::span<const Box2> boxes, std::span<const Filter> filters,
             Motion motion = Motion::kDynamic);
  /// The same with contact distances: `contact_distances` holds one per id
  /// (each finite and >= 0), or is empty for 0. A pair is reported while
  /// the two boxes, each grown by its distance (grown(), box.hpp: rounded
  /// outward to float), overlap; box(), region queries and rays still
  /// answer on the boxes as given (docs/filters-and-queries.md, "Contact
  /// distance"). Refused (kInvalidArgument, naming the id and its index)
  /// for a negative, NaN or infinite distance, and for a span of another
  /// length. A world without distances pays nothing for them.
  Status add(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters, Motion motion,
             std::span<const float> contact_distances);
  Status add(std::span<const Id> ids, std::span<const Box2> boxes, std::span<const Filter> filters, Motion motion,
             std::span<const float> contact_distances);
  /// Stages new categories and masks for live objects; at update() the
  /// pairs the new filters allow or forbid are created or deleted. Refused
  /// like move() (an unknown id, a second operation in the frame, spans of
  /// different lengths). An object stays static or dynamic for its life.
  Status set_filter(std::span<const Id> ids, std::span<const Filter> filters);
  Status set_filter(Id id, Filter filter) { return set_filter({&id, 1}, {&filter, 1}); }
  /// Stages new bounds for live objects.
  Status move(std::span<const Id> ids, std::span<const Box3> boxes);
  Status move(std::span<const Id> ids, std::span<const Box2> boxes);
  /// The same with new contact distances, one per id (refused as add()
  /// refuses them); a move without them keeps each object's distance.
  Status move(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const float> contact_distances);
  Status move(std::span<const Id> ids, std::span<const Box2> boxes, std::span<const float> contact_distances);
  /// Large worlds: boxes in doubles, relative to no origin (world
  /// coordinates). Each is kept as the smallest float box that holds the
  /// box minus origin() (rounded outward exactly; never an overlap lost),
  /// and **the pairs are those of these rounded boxes**; with
  /// Options::exact_pairs, only those whose double boxes overlap (queries
  /// and rays likewise answer on the double boxes). Refused
  /// as the float versions are (a NaN or min > max is refused in double).
  /// Pass a Box3d or Box2d by name: a braced list alone is ambiguous.
  Status add(std::span<const Id> ids, std::span<const Box3d> boxes, std::span<const Filter> filters = {},
             Motion motion = Motion::kDynamic, std::span<const float> contact_distances = {});
  Status add(std::span<const Id> ids, std::span<const Box2d> boxes, std::span<const Filter> filters = {},
             Motion motion = Motion::kDynamic, std::span<const float> contact_distances = {});
  Status move(std::span<const Id> ids, std::span<const Box3d> boxes, std::span<const float> contact_distances = {});
  Status move(std::span<const Id> ids, std::span<const Box2d> boxes, std::span<const float> contact_distances = {});
  Status add(Id id, const Box3d& box) { return add({&id, 1}, {&box, 1}); }
  Status add(Id id, const Box2d& box) { return add({&id, 1}, {&box, 1}); }
  Status move(Id id, const Box3d& box) { return move({&id, 1}, {&box, 1}); }
  Status move(Id id, const Box2d& box) { return move({&id, 1}, {&box, 1}); }
  /// Moves the origin by `offset` (new origin = origin() + offset), so that
  /// the floats keep their resolution where the action is. Boxes given from
  /// now on (float ones too) are relative to the new origin; at the next
  /// update() every stored box, dynamic and static, is re-expressed
  /// relative to it (a double box as given, rounded outward again; a float
  /// box b as the smallest float box holding b - offset), the algorithm is
  /// rebuilt once, and the frame reports exactly the pairs the new rounding
  /// changes. Until then pairs, queries and rays are the old ones. Refused
  /// (kInvalidArgument) while operations are staged or another shift is
  /// pending, for a NaN or infinite offset, and in 2D for an offset in z.
  /// A frame refused by the pair budget drops the shift with its operations.
  Status shift_origin(std::array<double, 3> offset);
  /// The origin boxes given now are relative to.
  std::array<double, 3> origin() const noexcept;
  /// A live object's box in world coordinates: the double box it was given,
  /// or its float box plus the origin (rounded to double); nothing for an
  /// id that is not live.
  std::optional<Box3d> exact_box(Id id) const noexcept;
  /// Stages removals; each removed object's pairs are deleted at update().
  Status remove(std::span<const Id> ids);

  Status add(Id id, const Box3& box) { return add({&id, 1}, {&box, 1}); }
  Status add(Id id, const Box2& box) { return add({&id, 1}, {&box, 1}); }
  Status move(Id id, const Box3& box) { return move({&id, 1}, {&box, 1}); }
  Status move(Id id, const Box2& box) { return move({&id, 1}, {&box, 1}); }
  Status remove(Id id) { return remove({&id, 1}); }
  Status add(Id id, const Box3& box, Filter filter, Motion motion = Motion::kDynamic) {
    return add({&id, 1}, {&box, 1}, {&filter, 1}, motion);
  }
  Status add(Id id, const Box2& box, Filter filter, Motion motion = Motion::kDynamic) {
    return add({&id, 1}, {&box, 1}, {&filter, 1}, motion);
  }
  Status add(Id id, const Box3& box, Filter filter, Motion motion, float contact_distance) {
    return add({&id, 1}, {&box, 1}, {&filter, 1}, motion, {&contact_distance, 1});
  }
  Status add(Id id, const Box2& box, Filter filter, Motion motion, float contact_distance) {
    return add({&id, 1}, {&box, 1}, {&filter, 1}, motion, {&contact_distance, 1});
  }
  Status move(Id id, const Box3& box, float contact_distance) {
    return move({&id, 1}, {&box, 1}, {&contact_distance, 1});
  }
  Status move(Id id, const Box2& box, float contact_distance) {
    return move({&id, 1}, {&box, 1}, {&contact_distance, 1});
  }

  /// Applies the staged operations (removals, then moves, then adds) and
  /// returns the frame's created and deleted pairs. A frame without
  /// operations costs nothing and reports nothing.
  ///
  /// When memory runs out, update() throws std::bad_alloc and the broad
  /// phase is as before the call: the frame's operations are still staged,
  /// pairs() (the same pairs, perhaps in another order), contains(),
  /// queries and rays are the previous frame's, and the next update()
  /// with memory available applies the frame and reports its exact delta
  /// (rebuilding the algorithm's structures from the live boxes once).
  /// With Options::max_pairs, a frame after which more pairs would overlap
  /// is refused in FrameDelta::status (then its operations are dropped).
  const FrameDelta& update();

  /// Forgets every operation staged since the last update(), as if none
  /// had been made: added ids are free again, moves, removals and filter
  /// changes are gone, and each id may take an operation again this frame.
  /// For a frame that update() could not apply (std::bad_alloc) and that
  /// is not to be retried, or any change of mind. Never fails. A pending
  /// shift_origin() is not an operation and stays pending: the next
  /// update() applies it (boxes staged after this call are still relative
  /// to the new origin).
  void drop_staged() noexcept;

  /// Every pair overlapping after the last update(), contiguous, each with
  /// a < b, in an order that is deterministic but otherwise unspecified.
  std::span<const Pair> pairs() const noexcept;
  /// pairs() sorted by (a, b), into `out`.
  void sorted_pairs(std::vector<Pair>& out) const;

  /// Region query: the ids of the live objects whose boxes overlap `box`
  /// (closed intervals), ascending, into `out` (replaced), as of the last
  /// update() (operations staged since are not seen). Answered on the
  /// algorithm's own structure where it has one (multi-sap's grid, the
  /// octree), else on a tree of the dynamic boxes built by the first read
  /// that needs it and kept current by update() while reads use it (dropped
  /// after 32 frames that changed it without a read). Refused, with `out`
  /// emptied, for an invalid box (as add() refuses it; index() is 0).
  /// Only objects whose category shares a bit with `mask` are reported
  /// (static ones included).
  Status query(const Box3& box, std::vector<Id>& out, std::uint32_t mask = kAllCategories) const;
  Status query(const Box2& box, std::vector<Id>& out, std::uint32_t mask = kAllCategories) const;
  /// Many queries at once, answered in parallel (see "Threads" above): box
  /// i's ids, ascending, are ids[offsets[i], offsets[i + 1]) (offsets has
  /// boxes.size() + 1 entries), the same for any thread count. Refused
  /// whole, with both emptied, naming the first invalid box by its index.
  Status query_many(std::span<const Box3> boxes, std::vector<Id>& ids, std::vector<std::size_t>& offsets,
                    std::uint32_t mask = kAllCategories) const;

  /// Ray cast (ray.hpp): every live object whose box the ray meets and
  /// whose category shares a bit with `mask`, sorted by entry parameter,
  /// then id, into `hits` (replaced), as of the last update(). Refused, with
  /// `hits` emptied, for an invalid ray (check_ray(): kInvalidRay) and, in a
  /// 2D broad phase, for a Ray3 that leaves the plane z = 0, its origin's or
  /// direction's z other than 0 (kInvalidArgument).
  Status ray_cast(const Ray3& ray, std::vector<RayHit>& hits, std::uint32_t mask = kAllCategories) const;
  Status ray_cast(const Ray2& ray, std::vector<RayHit>& hits, std::uint32_t mask = kAllCategories) const;
  /// The first of those hits only (smallest entry, then smallest id), or
  /// nothing; cheaper, as farther boxes are not visited.
  Status ray_cast_closest(const Ray3& ray, std::optional<RayHit>& hit, std::uint32_t mask = kAllCategories) const;
  Status ray_cast_closest(const Ray2& ray, std::optional<RayHit>& hit, std::uint32_t mask = kAllCategories) const;
  /// Many rays at once, answered in parallel as query_many(): ray i's hits,
  /// as ray_cast() orders them, are hits[offsets[i], offsets[i + 1]); for
  /// the closest, at most one each. Refused whole, with both emptied, for
  /// the first ray ray_cast() would refuse (Operation::kRayCastMany, its
  /// index in index()).
  Status ray_cast_many(std::span<const Ray3> rays, std::vector<RayHit>& hits, std::vector<std::size_t>& offsets,
                       std::uint32_t mask = kAllCategories) const;
  Status ray_cast_closest_many(std::span<const Ray3> rays, std::vector<RayHit>& hits, std::vector<std::size_t>& offsets,
                               std::uint32_t mask = kAllCategories) const;

  /// Whether `id` is live (added at an earlier update() and not removed).
  bool contains(Id id) const noexcept;
  /// A live object's box (as given, not grown by its contact distance),
  /// filter, motion and contact distance as of the last update(); nothing
  /// for an id that is not live.
  std::optional<Box3> box(Id id) const noexcept;
  std::optional<Filter> filter(Id id) const noexcept;
  std::optional<Motion> motion(Id id) const noexcept;
  std::optional<float> contact_distance(Id id) const noexcept;
  /// Number of live objects.
  std::size_t size() const noexcept;
  /// Number of update() calls so far.
  std::uint64_t frame() const noexcept;
  std::string_view algorithm_name() const noexcept;
  const Options& options() const noexcept;
  /// Threads the algorithm runs on: Options::threads, or fewer where the
  /// system would not start them all; the task system's with Options::tasks.
  unsigned concurrency() const noexcept;

  /// Makes room for `objects` live objects and `pairs` pairs up front (a
  /// level about to load), so that frames up to that size allocate as
  /// little as the algorithm can. May throw std::bad_alloc (then nothing
  /// has changed but capacity), at once for more than 2^32 - 1 objects or
  /// pairs, which no broad phase can hold.
  ///
  /// Memory is given back by itself: after an update() that leaves fewer
  /// than a quarter of the objects the broad phase has room for (and room
  /// for at least 65,536), the live objects are renumbered densely and the
  /// algorithm is rebuilt from them (a frame's worth of work over the live
  /// objects, reporting nothing); the pair manager likewise when it holds
  /// over 256 bytes per pair (and at least 1 MiB).
  void reserve(std::size_t objects, std::size_t pairs = 0);

  /// Bytes held by the broad phase, its algorithm and its pair manager.
  std::size_t memory_bytes() const noexcept;
  /// The pair manager's share of memory_bytes().
  std::size_t pair_memory_bytes() const noexcept;

  /// Checks every invariant of the broad phase, its pair manager and its
  /// algorithm; false on the first violation. O(n + pairs). Builds with
  /// SAPLING_VALIDATE check it after every update() and abort on failure.
  bool validate() const;

  /// Hands `draw` to the algorithm, which draws its structure as of the
  /// last update() (debug_draw.hpp); nothing while a failed frame awaits
  /// its rebuild.
  void debug_draw(DebugDraw& draw) const;

 private:
  // The broad phase's state and its jobs, one file each (src/core/broad_phase/).
  struct Impl;
  explicit BroadPhase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sapling
