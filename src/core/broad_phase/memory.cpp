// A broad phase's memory (broad_phase.hpp, reserve()): room made up front,
// memory given back after a frame that left most of it empty, and the
// bytes held.
//
// Giving back is optional work, skipped where memory is too short to do it:
// each step changes nothing unless it succeeds. The per-slot arrays shrink
// by renumbering the live objects densely and rebuilding the algorithm and
// the static tree from them (a frame's worth of work over the live objects
// that reports nothing: the pairs found are the pairs there are); the pair
// manager shrinks to its pairs. Then, with glibc, the allocator is asked to
// hand its free pages back (malloc_trim): the blocks freed are otherwise
// kept for reuse, and a process that unloaded a world would go on holding
// its resident set.
#include <limits>
#include <new>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "core/broad_phase/impl.hpp"
#include "detail/reserve.hpp"

namespace sapling {

void BroadPhase::reserve(std::size_t objects, std::size_t pairs) {
  // Slots and pair positions are 32-bit: more cannot be held, which the
  // contract reports as memory that cannot be had (std::vector's
  // length_error is no part of it), before anything is asked of the system.
  constexpr std::size_t kMostHeld = std::numeric_limits<std::uint32_t>::max();
  if (objects > kMostHeld || pairs > kMostHeld) throw std::bad_alloc();
  Impl& m = *impl_;
  detail::ObjectTable& table = m.objects;
  table.ids.reserve(objects);
  table.states.reserve(objects);
  table.stamps.reserve(objects);
  table.boxes.reserve(objects);
  table.free_slots.reserve(objects);
  if (table.uses_filters) table.filters.reserve(objects);
  if (table.uses_statics) table.motions.reserve(objects);
  table.contact.reserve_slots(objects);
  table.exact.reserve_slots(objects);
  m.staged.added.reserve(objects);
  m.staged.added_boxes.reserve(objects);
  m.pairs.reserve(pairs);
  m.algorithm->reserve(objects);
}

void BroadPhase::Impl::give_back_memory() {
  constexpr std::size_t kMinRoom = 65536;
  bool gave_back = false;
  try {
    if (objects.slots() >= kMinRoom && 4 * objects.live < objects.slots()) compact_slots(), gave_back = true;
    // A pair costs the manager 25 to 100 bytes while frames run (its slot,
    // its hash entry, the scratch of a frame): far beyond that, pairs went.
    constexpr std::size_t kMinPairBytes = std::size_t{1} << 20, kMaxBytesPerPair = 256;
    const std::size_t pair_bytes = pairs.memory_bytes();
    if (pair_bytes >= kMinPairBytes && pair_bytes > kMaxBytesPerPair * pairs.size()) {
      pairs.shrink_to_fit();
      gave_back = true;
    }
  } catch (const std::bad_alloc&) {
  }
#if defined(__GLIBC__)
  if (gave_back) malloc_trim(0);
#endif
}

// Renumbers the live objects 0..live-1 (in slot order) and rebuilds the
// algorithm and the static tree from them. The pairs found are the pairs
// there are, so the pair manager's frame changes nothing; the pairs() order
// may.
void BroadPhase::Impl::compact_slots() {
  detail::ObjectTable dense = objects.compacted();
  std::swap(objects, dense);
  std::vector<Pair> no_created, no_deleted;
  try {
    rebuild_from_live();
    pairs.end_frame(no_created, no_deleted);
  } catch (...) {
    pairs.abandon_frame();
    std::swap(objects, dense);
    throw;
  }
  // The staging room of the large frames goes too (delta still needs
  // created and deleted).
  staged.free_storage();
  large.free_staging();
  detail::free_storage(lifted);
  detail::free_storage(lifted_exact);
}

std::size_t BroadPhase::memory_bytes() const noexcept {
  const Impl& m = *impl_;
  const auto bytes = [](const auto& v) { return v.capacity() * sizeof(v[0]); };
  return sizeof(*this) + sizeof(Impl) + m.algorithm->memory_bytes() + m.pairs.memory_bytes() +
         m.objects.memory_bytes() + m.statics.memory_bytes() + m.query_tree.memory_bytes() + m.staged.memory_bytes() +
         m.large.memory_bytes() + bytes(m.created) + bytes(m.deleted) + bytes(m.lifted) + bytes(m.lifted_exact) +
         bytes(m.before_shift) + bytes(m.own_before_shift) + bytes(m.overlap_slots);
}

std::size_t BroadPhase::pair_memory_bytes() const noexcept { return impl_->pairs.memory_bytes(); }

}  // namespace sapling
