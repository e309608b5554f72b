// The interface every broad-phase algorithm implements (for users who
// register their own: registry.hpp; the built-in ones live in src/).
//
// Users do not call algorithms directly: a BroadPhase validates each call,
// turns user ids into dense slots, and hands the algorithm one frame's
// operations at a time. An algorithm therefore never sees an invalid box, an
// unknown id, or two operations on one object in a frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/debug_draw.hpp"
#include "sapling/filter.hpp"
#include "sapling/options.hpp"
#include "sapling/pair.hpp"
#include "sapling/pair_manager.hpp"
#include "sapling/ray.hpp"
#include "sapling/status.hpp"

namespace sapling {

/// Dense internal index of a live object, chosen by the BroadPhase. A slot
/// freed by a removal is reused no earlier than the next frame.
using Slot = std::uint32_t;

/// The collision filters (filter.hpp) an algorithm checks before it reports
/// a pair: by slot, the frame's categories and masks, or none when every
/// object has the default filter. The BroadPhase keeps static objects to
/// itself, so an algorithm sees only dynamic ones and checks only this.
class PairFilter {
 public:
  PairFilter() = default;
  explicit PairFilter(std::span<const Filter> by_slot) noexcept
      : by_slot_(by_slot.empty() ? nullptr : by_slot.data()) {}
  /// Whether slots a and b may pair (their boxes overlapping).
  bool accepts(Slot a, Slot b) const noexcept {
    return by_slot_ == nullptr || filters_accept(by_slot_[a], by_slot_[b]);
  }
  /// False when every pair is accepted.
  bool active() const noexcept { return by_slot_ != nullptr; }

 private:
  const Filter* by_slot_ = nullptr;
};

/// One frame's validated operations. Apply removals, then moves, then adds.
struct FrameOps {
  std::span<const Slot> removed;
  std::span<const Slot> moved;
  std::span<const Box3> moved_boxes;  // parallel to `moved`
  std::span<const Slot> added;
  std::span<const Box3> added_boxes;  // parallel to `added`
  /// By slot, the box of each object live before the frame (removed and
  /// moved ones included) as of the previous update(), the BroadPhase's own
  /// copy: an algorithm may read old boxes here rather than keep its own.
  /// Valid during update() only; other slots hold anything.
  std::span<const Box3> boxes{};
  /// The frame's filters: an overlapping pair of slots a, b is reported
  /// with PairManager::add() only if filter.accepts(a, b). (Removals need
  /// no check: removing a pair that is not there does nothing.) A change of
  /// filter is the BroadPhase's business, not the algorithm's.
  PairFilter filter{};
  /// The BroadPhase's box store itself, by slot (`boxes` is a view of it
  /// during the frame). Its address stays valid between frames, and once
  /// update() has returned and the BroadPhase has committed the frame it
  /// holds every live object's box as the frame left it: an algorithm that
  /// reads unchanged boxes here, and the frame's new ones from `moved_boxes`
  /// and `added_boxes`, keeps no copy of its own. Null where the caller
  /// keeps no such store (an algorithm driven directly).
  const std::vector<Box3>* store = nullptr;

  bool empty() const noexcept { return removed.empty() && moved.empty() && added.empty(); }
};

/// Thrown by an algorithm's factory that cannot take Options::settings (a
/// name it does not know, a value out of range); BroadPhase::create()
/// refuses the creation with StatusCode::kInvalidArgument and `detail`,
/// which must be a string with static storage duration.
struct SettingError {
  const char* detail;
};

/// What an Algorithm::update() reported to the pair manager.
enum class Reported : std::uint8_t {
  /// The pairs that changed for the objects the frame touched.
  kChanges,
  /// Every pair there is, anew: a recomputation (PairManager::assign(), or
  /// remove_all() and then add() for every pair). The BroadPhase's pairs
  /// with static objects, held (PairManager::add_held()), stay as they are.
  kEveryPair,
};

/// What Algorithm::ray_cast() calls for each hit: visit(slot, t), t the
/// hit's entry (ray_entry()); it returns the largest t still of interest
/// (the ray's max_t to see every hit, the best so far for the closest). A
/// reference to a callable, never owning it: no allocation, one indirect
/// call per hit.
class RayVisitor {
 public:
  template <class Visit>
  explicit RayVisitor(Visit& visit) noexcept
      : target_(&visit),
        call_([](const void* v, Slot s, float t) { return (*static_cast<Visit*>(const_cast<void*>(v)))(s, t); }) {}
  /// Reports slot `s` met at entry `t`; returns the bound on t from now on.
  float operator()(Slot s, float t) const { return call_(target_, s, t); }

 private:
  const void* target_;
  float (*call_)(const void*, Slot, float);
};

/// A persistent broad-phase algorithm.
class Algorithm {
 public:
  virtual ~Algorithm() = default;

  /// Applies one frame and records in `pairs` every pair that starts or
  /// stops overlapping (PairManager::add/remove), in terms of user ids:
  /// slot s belongs to user id `ids[s]`. Removed slots keep their id during
  /// the call. The BroadPhase calls this only for frames with operations.
  /// Returns what it reported (Reported). It may throw std::bad_alloc or
  /// PairBudgetExceeded part-way: the BroadPhase then discards the
  /// algorithm and makes a new one.
  virtual Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) = 0;

  /// Refuses boxes this algorithm cannot take (for example a box of another
  /// size for a unisize method). The BroadPhase asks once per add or move
  /// batch, after it has accepted every id and box of it, with `staged` the
  /// frame's operations accepted before this batch. Must not change the
  /// algorithm: a refused batch leaves nothing behind, and an accepted one
  /// reaches the algorithm only through update(). Answers from the state of
  /// the last update() that returned: one that threw part-way (out of
  /// memory) must not change the answer. A refusal names the offending
  /// element: its id and its index in `boxes`.
  virtual Status accepts(Operation /*op*/, std::span<const Id> /*ids*/, std::span<const Box3> /*boxes*/,
                         const FrameOps& /*staged*/) const {
    return {};
  }

  /// Makes room for `objects` live objects (slots below `objects`), so that
  /// frames up to that size allocate as little as the algorithm can; a
  /// hint, which an algorithm may ignore.
  virtual void reserve(std::size_t /*objects*/) {}

  /// Appends to `out` the slot of every live object whose box overlaps
  /// `box` (closed intervals), each once, in any order, as of the last
  /// update() that returned; or returns false, appending nothing, if the
  /// algorithm keeps no structure that answers it (the BroadPhase then
  /// tests its own copy of every box). Must not change the algorithm, nor
  /// any scratch it shares: the BroadPhase's reads call it from many
  /// threads at once (broad_phase.hpp, "Threads").
  virtual bool query(const Box3& /*box*/, std::vector<Slot>& /*out*/) const { return false; }

  /// Calls visit(slot, t) for every live object whose box the valid ray
  /// meets, each once, in any order, t its entry exactly as ray_entry()
  /// computes it, as of the last update() that returned; the algorithm may
  /// skip every object whose entry is greater than the bound visit last
  /// returned (never one at the bound). Or returns false, calling nothing,
  /// if it keeps no structure that answers rays (the BroadPhase then casts
  /// through a tree of its own). Must not change the algorithm, nor any
  /// scratch it shares: called from many threads at once, as query().
  virtual bool ray_cast(const Ray3& /*ray*/, RayVisitor /*visit*/) const { return false; }

  /// Bytes held by the algorithm's own structures.
  virtual std::size_t memory_bytes() const { return 0; }

  /// Checks the algorithm's invariants (written out where it is defined);
  /// false on the first violation. Costs O(n) or more: for tests, and after
  /// every update() in builds with SAPLING_VALIDATE.
  virtual bool validate() const { return true; }

  /// Draws the algorithm's structure as of the last update() into `draw`
  /// (debug_draw.hpp), `ids` as update() has them (slot s belongs to user
  /// id ids[s]), so that an algorithm need not keep its own; draws nothing
  /// by default.
  virtual void debug_draw(DebugDraw& /*draw*/, std::span<const Id> /*ids*/) const {}
};

}  // namespace sapling
