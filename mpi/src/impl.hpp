// The distributed broad phase's state on one rank (distributed_broad_phase.hpp):
//
// - the owner's ledger: the objects this rank added, in the single-process
//   broad phase's own object table and staging (core/broad_phase/), so that
//   every staging call is checked exactly as BroadPhase checks it;
// - the id directory: the live ids whose hash falls to this rank, to find
//   an id added on two ranks;
// - the domain: the local BroadPhase holding every box that meets this
//   rank's domain, plus for one frame those that have just left it, and
//   the decompositions of this frame and the last.
//
// On one rank the local broad phase is the ledger: every call goes to it.
//
// The frame (distributed_frame.cpp) rests on one rule. Rank r reports a
// pair created when the least corner of the boxes' intersection, now, lies
// in r's domain now, and deleted when that corner, a frame ago, lay in r's
// domain a frame ago; so each change is reported once. Rank r holds, during
// frame t, every object whose box at t meets D_r(t) or whose box at t-1 met
// D_r(t-1): then its local broad phase sees both frames of every pair it
// must judge, and the owners send a box only where it is or was.
#pragma once

#include <mpi.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/broad_phase/object_table.hpp"
#include "core/broad_phase/staged_frame.hpp"
#include "decomposition.hpp"
#include "sapling/detail/id_index.hpp"
#include "sapling/mpi/distributed_broad_phase.hpp"

namespace sapling::mpi {

namespace detail {

/// Centres each rank samples when the domains are drawn.
inline constexpr std::size_t kSamples = 1024;

/// One object's change, sent by its owner to each rank whose domain its box
/// meets now or met a frame ago. An unchanged object is sent only when the
/// domains are redrawn, to the ranks that gain or lose it.
struct Record {
  enum Flags : std::uint32_t { kLiveNow = 1, kLiveBefore = 2, kStatic = 4, kMoved = 8, kRefiltered = 16 };
  Id id;
  std::uint32_t flags;
  Filter filter_now, filter_before;
  Box3 now, before;
};

/// An add or a removal, told to the id's directory rank.
struct Claim {
  Id id;
  std::uint32_t index;  // the add's position among its rank's adds this frame
  std::uint32_t is_add;
};

/// An object handed to a new owner, as the frame leaves it.
struct Transfer {
  Id id;
  std::uint32_t is_static;
  Filter filter;
  Box3 box;
};

/// What each rank tells all at the start of a frame: a fault its directory
/// found (code 0: none), and its counts.
struct Verdict {
  std::uint32_t code, op;
  Id id;
  std::uint32_t index;
  std::uint64_t owned_after, held;
};

/// An object as the local broad phase held it a frame ago.
struct Before {
  Id id;
  Box3 box;
  Filter filter;
  bool live;   // live a frame ago
  bool fresh;  // new to the local broad phase this frame
};

/// A frame's working lists, kept from frame to frame so that a frame in a
/// steady world allocates nothing (and touches no fresh page).
struct FrameScratch {
  std::vector<std::vector<Claim>> claims;
  std::vector<Claim> told;
  std::vector<std::vector<Record>> out;
  std::vector<Record> received;
  std::vector<std::vector<Transfer>> transfers_out;
  std::vector<Transfer> transfers_in;
  std::vector<unsigned char> send;
  std::vector<int> now_ranks, before_ranks;
  std::vector<Before> befores;
  std::vector<Id> inside_movers;              // the movers marked kInside in touched
  sapling::detail::IdIndex touched;           // id -> its entry in befores (or kInside), emptied after each frame
  sapling::detail::IdIndex removing, adding;  // the directory's claims, emptied after its check
  std::vector<Id> removes, moves, refiltered, adds, static_adds, leaving;
  std::vector<Box3> move_boxes, add_boxes, static_boxes;
  std::vector<Filter> refilters, add_filters, static_filters;

  void clear(std::size_t ranks);
};

/// Accepts every box: the ledger stages with the single-process checks and
/// no algorithm of its own.
class AcceptAll final : public Algorithm {
 public:
  Reported update(const FrameOps&, std::span<const Id>, PairManager&) override { return Reported::kChanges; }
};

}  // namespace detail

struct DistributedBroadPhase::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, ranks = 1;
  Options options;
  std::uint64_t frame = 0;

  // The owner's ledger.
  sapling::detail::ObjectTable objects;
  sapling::detail::StagedFrame staged;
  detail::AcceptAll accept_all;
  std::vector<Box3> lifted;
  // This frame's hand-overs, and the ids it removes (to refuse a hand-over
  // of a removed object, and a removal of a handed one).
  std::vector<Id> handed_ids;
  std::vector<int> handed_to;
  sapling::detail::IdIndex handed_index, removed_now;
  sapling::detail::IdIndex added_alone;  // on one rank only: this frame's adds

  // The id directory.
  sapling::detail::IdIndex directory;

  // The domain.
  std::unique_ptr<BroadPhase> local;
  detail::Decomposition before, now;  // D(t-1) and D(t) during update(); equal between frames
  bool drawn = false;                 // whether the domains were ever drawn from samples
  std::uint64_t drawn_at = 0;
  std::optional<detail::Decomposition> planned;  // plan_domains()'s, for the next update()
  std::vector<Id> departing;  // held objects whose box no longer meets the domain: dropped next frame

  detail::FrameScratch scratch;

  // The frame's results.
  std::vector<Pair> created, deleted;
  FrameDelta delta;
  FrameStats stats;

  ~Impl();
  /// The rank keeping `id` in its directory.
  int directory_rank(Id id) const noexcept;
  /// The share of `pairs` this rank reports: those whose home corner
  /// (boxes from `box_of`) lies in its domain of `domains`.
  const FrameDelta& run_frame();
  const FrameDelta& run_alone(double start);
  /// Forgets this frame's hand-overs and removals.
  void forget_handovers() noexcept;
  /// The hand-overs, after the frame: the objects leave this rank's
  /// ledger and join their new owners'. Collective.
  void hand_over_objects(std::size_t& bytes);
};

}  // namespace sapling::mpi
