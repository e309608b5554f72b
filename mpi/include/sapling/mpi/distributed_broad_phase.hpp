// A broad phase spread over the ranks of an MPI communicator: the frame
// protocol of BroadPhase (stage add / move / remove / set_filter by id,
// update(), the pairs that started and stopped overlapping), collective.
//
//   MPI_Init(&argc, &argv);
//   auto bp = sapling::mpi::DistributedBroadPhase::create(MPI_COMM_WORLD);
//   bp->add(my_ids, my_boxes);            // each rank stages its own objects
//   const sapling::FrameDelta& mine = bp->update();   // every rank calls it
//   bp->gather(0, created, deleted);      // the whole frame's delta, on rank 0
//
// Who holds what. The rank that adds an object owns it: it alone stages its
// moves, removal and filter changes (ids are unique across ranks; an id
// added on two ranks refuses the frame). Space is divided among the ranks
// into domains (decomposition.hpp: recursive bisection of the objects'
// centres, redrawn when the load drifts apart); each rank pairs, with a
// local BroadPhase (`auto` by default), every box that meets its domain,
// its owners sending it the boxes that changed. A pair is reported by the
// one rank whose domain holds the least corner of the two boxes'
// intersection, so the ranks' shares are disjoint and together exactly
// BroadPhase's delta: a pair whose corner crosses into another domain, or
// a domain redrawn under it, is neither lost nor reported twice nor shown
// as deleted and created. Method and measurements: docs/distributed.md.
//
// Checks. A staging call is checked on its rank as BroadPhase checks it,
// with the same Status, and a refused batch changes nothing. What one rank
// cannot see (an id added on two ranks, or removed by its owner while
// another adds it) refuses the frame on every rank in FrameDelta::status:
// its operations are dropped everywhere and nothing changes.
//
// Threads: a DistributedBroadPhase is used from one thread per rank (MPI's
// FUNNELED level is enough); its local BroadPhase may run Options::threads.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sapling/broad_phase.hpp"
#include "sapling/trace.hpp"

namespace sapling::mpi {

/// What the last update() did on this rank, and across ranks.
struct FrameStats {
  std::size_t owned = 0;         ///< live objects this rank owns
  std::size_t held = 0;          ///< boxes its local broad phase holds (its domain's objects and ghosts)
  std::size_t records_sent = 0;  ///< boxes sent to other ranks this frame
  std::size_t bytes_sent = 0;    ///< bytes sent to other ranks this frame (all messages)
  std::size_t handed_over = 0;   ///< objects this rank handed to others this frame
  /// The most boxes any rank holds, and all ranks together, before this
  /// frame's operations (as the frame starts, when the domains are judged).
  std::size_t max_held = 0;
  std::size_t total_held = 0;
  int ranks = 1;             ///< the communicator's size
  bool redrawn = false;      ///< whether the domains were redrawn this frame
  double seconds = 0;        ///< this rank's wall time in update()
  double local_seconds = 0;  ///< of which in its local broad phase's staging and update()
  /// The load imbalance: the most boxes a rank holds over the mean (1: even).
  double imbalance() const noexcept;
};

class DistributedBroadPhase {
 public:
  /// Collective over `comm` (duplicated, so that its messages never meet
  /// the caller's). Every rank passes the same algorithm and options; the
  /// local broad phases run `algorithm` (any registered name but unisize,
  /// whose size rule is the whole world's). Null, with the reason in
  /// `*why`, for an unknown algorithm or options out of range
  /// (Options::max_pairs and exact_pairs are single-process features).
  static std::unique_ptr<DistributedBroadPhase> create(MPI_Comm comm, std::string_view algorithm = "auto",
                                                       const Options& options = {}, Status* why = nullptr);
  ~DistributedBroadPhase();
  DistributedBroadPhase(const DistributedBroadPhase&) = delete;
  DistributedBroadPhase& operator=(const DistributedBroadPhase&) = delete;

  /// Staging, on this rank only, checked as BroadPhase's calls are.
  Status add(std::span<const Id> ids, std::span<const Box3> boxes, std::span<const Filter> filters = {},
             Motion motion = Motion::kDynamic);
  Status add(std::span<const Id> ids, std::span<const Box2> boxes, std::span<const Filter> filters = {},
             Motion motion = Motion::kDynamic);
  Status move(std::span<const Id> ids, std::span<const Box3> boxes);
  Status move(std::span<const Id> ids, std::span<const Box2> boxes);
  Status remove(std::span<const Id> ids);
  Status set_filter(std::span<const Id> ids, std::span<const Filter> filters);
  Status add(Id id, const Box3& box, Filter filter = {}, Motion motion = Motion::kDynamic) {
    return add({&id, 1}, {&box, 1}, {&filter, 1}, motion);
  }
  Status add(Id id, const Box2& box, Filter filter = {}, Motion motion = Motion::kDynamic) {
    return add({&id, 1}, {&box, 1}, {&filter, 1}, motion);
  }
  Status move(Id id, const Box3& box) { return move({&id, 1}, {&box, 1}); }
  Status move(Id id, const Box2& box) { return move({&id, 1}, {&box, 1}); }
  Status remove(Id id) { return remove({&id, 1}); }
  /// Hands objects this rank owns to other ranks, as a domain-decomposed
  /// code migrates them: after this frame's update(), rank ranks[i] owns
  /// ids[i] (its box, filter and motion as the frame leaves them) and
  /// stages its operations from the next frame on. No pair changes, and
  /// the object is never seen removed. It may follow an add, a move or a
  /// filter change of the same id in the frame, not a removal; a hand to
  /// this rank itself does nothing. Refused, with nothing staged, for a
  /// rank out of range (kInvalidArgument), an id this rank does not own
  /// (kUnknownId) or one removed or handed already this frame
  /// (kRepeatedId). Moves of objects that crossed into another rank's
  /// domain cost a message each frame until they are handed over.
  Status hand_over(std::span<const Id> ids, std::span<const int> ranks);
  Status hand_over(Id id, int rank) { return hand_over({&id, 1}, {&rank, 1}); }
  /// Forgets this rank's staged operations (BroadPhase::drop_staged()).
  void drop_staged() noexcept;

  /// Collective: applies every rank's staged operations and returns this
  /// rank's share of the frame's created and deleted pairs, each sorted by
  /// (a, b). The shares of all ranks are disjoint; their union is the
  /// frame's delta. Valid until the next update().
  const FrameDelta& update();

  /// Collective: the last frame's whole delta, sorted by (a, b), into
  /// `created` and `deleted` on rank `root` (emptied on the others).
  void gather(int root, std::vector<Pair>& created, std::vector<Pair>& deleted) const;
  /// This rank's share of the pairs overlapping after the last update(),
  /// sorted (the shares are disjoint; their union is every pair).
  void pairs(std::vector<Pair>& out) const;
  /// Collective: every pair overlapping after the last update(), sorted,
  /// on rank `root` (emptied on the others).
  void gather_pairs(int root, std::vector<Pair>& out) const;

  /// This rank's own objects, as of the last update().
  bool contains(Id id) const noexcept;
  std::optional<Box3> box(Id id) const noexcept;
  std::optional<Filter> filter(Id id) const noexcept;
  std::optional<Motion> motion(Id id) const noexcept;
  std::size_t size() const noexcept;

  /// The rank whose domain holds the box's centre: where an application
  /// that follows the decomposition would own it (then its moves travel
  /// least). The domains of the last update().
  int domain_rank(const Box3& box) const noexcept;
  /// Collective: draws the domains from the centres of `boxes` (each
  /// rank's own, or any sample of them), as a domain-decomposed code does
  /// before it hands out its objects: while no object is live or staged on
  /// any rank they take effect at once (domain_rank() answers with them),
  /// otherwise at the next update(), which moves the boxes to their new
  /// domains. (update() draws them by itself too: at the first frame with
  /// objects, and whenever one rank comes to hold 1.25x the mean.)
  void plan_domains(std::span<const Box3> boxes);
  /// Rank r's domain, [min, max) on each axis (max included where it is
  /// +inf): the domains partition space. The domains of the last update().
  Box3 domain(int r) const noexcept;
  int rank() const noexcept;
  int ranks() const noexcept;
  std::uint64_t frame() const noexcept;
  const FrameStats& stats() const noexcept;
  /// The local broad phase's algorithm (what `auto` runs on this rank).
  std::string_view algorithm_name() const noexcept;
  /// Bytes this rank holds: its own objects, its local broad phase, the
  /// routing tables.
  std::size_t memory_bytes() const noexcept;

  struct Impl;

 private:
  explicit DistributedBroadPhase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Frames every rank holds whole (a trace's, a scenario's), staged rank by
/// rank. share_of(): into `share`, the operations of `frame` on the ids
/// `owns` says are this rank's. stage_frame(): stages a frame's
/// operations, all this rank's, in sapling::stage_frame()'s order
/// (trace.hpp); the first refusal is returned, the batches before it
/// staged. stage_share(): both.
void share_of(const TraceFrame& frame, const std::function<bool(Id)>& owns, TraceFrame& share);
Status stage_frame(DistributedBroadPhase& broad_phase, const TraceFrame& frame);
Status stage_share(DistributedBroadPhase& broad_phase, const TraceFrame& frame, const std::function<bool(Id)>& owns);

}  // namespace sapling::mpi
