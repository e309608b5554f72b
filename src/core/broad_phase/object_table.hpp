// The broad phase's store of objects, by slot: each object's user id, its
// state in the frame protocol, the frame of its last staged operation, its
// box as of the last update(), its filter and its motion. Every job of the
// broad phase (staging, the frame, static objects, queries, memory,
// validation) reads and writes objects here and nowhere else.
//
// Invariants between calls (ObjectTable::validate()):
// - slot_of_id holds exactly the live and pending-add ids; their slots'
//   states are kLive or kPendingAdd and ids maps back;
// - a slot is in free_slots iff its state is kFree;
// - stamps[s] == frame_stamp(frame) iff slot s has an operation staged this
//   frame (16-bit stamps: see frame_stamp());
// - every per-slot array has one entry per slot; filters, motions and
//   contact distances are kept only once an object needs them
//   (uses_filters, uses_statics, contact.in_use), so a world without them
//   pays nothing for them;
// - live counts the kLive slots.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/broad_phase/contact_distance.hpp"
#include "core/broad_phase/large_world.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"
#include "sapling/detail/id_index.hpp"
#include "sapling/filter.hpp"

namespace sapling::detail {

/// The stamp of a frame's staged operations: 1 to kStampPeriod, 0 never.
/// Stamps repeat every kStampPeriod frames (18 minutes at 60 frames a
/// second), so advance() clears every stamp whenever the frame count
/// reaches a multiple of it: a stamp left from an earlier period never
/// matches the frame's. 16 bits: 2 bytes an object, and a pass over them
/// (2 MB at a million objects) every 65,535 frames.
using Stamp = std::uint16_t;
inline constexpr std::uint64_t kStampPeriod = 0xffffu;
constexpr Stamp frame_stamp(std::uint64_t frame) noexcept { return static_cast<Stamp>(frame % kStampPeriod + 1); }

// kPendingRemove: during update() only, a live object the frame removes.
enum class SlotState : std::uint8_t { kFree, kPendingAdd, kLive, kPendingRemove };

struct ObjectTable {
  IdIndex slot_of_id;             // live and pending-add ids -> slot
  std::vector<Id> ids;            // slot -> user id
  std::vector<SlotState> states;  // slot -> state
  std::vector<Stamp> stamps;      // slot -> frame_stamp() of the frame of its last staged operation
  std::vector<Box3> boxes;       // slot -> broad box of a live object (the one algorithms see), as of the last update()
  std::vector<Slot> free_slots;  // LIFO
  std::vector<Filter> filters;   // slot -> filter, while uses_filters
  std::vector<Motion> motions;   // slot -> motion, while uses_statics
  ContactDistances contact;      // own boxes and contact distances, once an object has a distance
  ExactBoxes exact;              // the user's double boxes, once an object is given in doubles
  bool uses_filters = false, uses_statics = false;
  std::size_t live = 0;

  std::size_t slots() const noexcept { return ids.size(); }
  bool is_static(Slot s) const noexcept { return uses_statics && motions[s] == Motion::kStatic; }
  Filter filter_of(Slot s) const noexcept { return uses_filters ? filters[s] : Filter{}; }
  Motion motion_of(Slot s) const noexcept { return is_static(s) ? Motion::kStatic : Motion::kDynamic; }
  /// The slot of a live object, or IdIndex::kNotFound.
  std::uint32_t live_slot(Id id) const noexcept {
    const std::uint32_t s = slot_of_id.find(id);
    return s != IdIndex::kNotFound && states[s] == SlotState::kLive ? s : IdIndex::kNotFound;
  }

  /// The filter table comes into being with the first filter other than the
  /// default (all defaults until then); the motion table likewise with the
  /// first static object.
  void keep_filters_for(std::span<const Filter> batch) {
    if (uses_filters || std::none_of(batch.begin(), batch.end(), [](Filter f) { return f != Filter{}; })) return;
    filters.assign(slots(), Filter{});
    uses_filters = true;
  }
  void keep_motions_for(Motion motion) {
    if (uses_statics || motion != Motion::kStatic) return;
    motions.assign(slots(), Motion::kDynamic);
    uses_statics = true;
  }

  /// Room for `slots` slots in every per-slot array, grown geometrically.
  void reserve_slots(std::size_t slots);
  /// A free slot, reused or new (reserve_slots() made the room: the arrays
  /// grow together or not at all).
  Slot allocate();
  /// Gives a slot staged for addition back, as it was before allocate():
  /// one taken from the free list goes back to it (within the room it left
  /// there), one `appended` (the last slot, as additions are undone newest
  /// first) is taken off every per-slot array. So the free list needs no
  /// room kept for undoing additions.
  void release(Slot s, bool appended) noexcept {
    slot_of_id.erase(ids[s]);
    if (appended) return pop_last_slot();
    states[s] = SlotState::kFree;
    stamps[s] = 0;
    free_slots.push_back(s);
  }
  void pop_last_slot() noexcept;
  /// The frame count moves on (see frame_stamp()).
  void advance(std::uint64_t& frame) noexcept {
    if (++frame % kStampPeriod == 0) std::fill(stamps.begin(), stamps.end(), Stamp{0});
  }

  /// visit(s) for every dynamic object live now or, with `frame_end` (while
  /// update() applies a frame), at the frame's end: staged additions in,
  /// staged removals out.
  template <class Visit>
  void for_each_dynamic(bool frame_end, Visit&& visit) const {
    const SlotState added = frame_end ? SlotState::kPendingAdd : SlotState::kLive;
    for (Slot s = 0; s < states.size(); ++s) {
      const SlotState state = states[s];
      if ((state == SlotState::kLive || state == added) && !is_static(s)) visit(s);
    }
  }
  /// visit(s) for every static object live at the last update() (its
  /// removal may be staged; its addition is not yet seen).
  template <class Visit>
  void for_each_static(Visit&& visit) const {
    if (!uses_statics) return;
    for (Slot s = 0; s < states.size(); ++s) {
      if ((states[s] == SlotState::kLive || states[s] == SlotState::kPendingRemove) && is_static(s)) visit(s);
    }
  }

  /// The same objects renumbered densely, 0..live-1 in slot order, with no
  /// operation staged; `this` is unchanged. May throw std::bad_alloc.
  ObjectTable compacted() const;

  std::size_t memory_bytes() const noexcept;
  bool validate() const;
};

}  // namespace sapling::detail
