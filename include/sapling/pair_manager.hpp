// The pair manager of Terdiman 2007, section I.6: the set of overlapping
// pairs as one contiguous array (the "direct results"), indexed by a hash
// table for O(1) add, remove and find, and the bookkeeping that turns a
// frame's adds and removes into the frame's created and deleted pairs (the
// "incremental results").
//
// During a frame an algorithm calls add() for pairs that (may) start
// overlapping and remove() for pairs that (may) stop; both are idempotent and
// may repeat. end_frame() then reports, exactly:
//   created = pairs present now and absent at the previous end_frame(),
//   deleted = pairs present then and absent now.
// A pair added then removed within one frame is reported nowhere; a pair
// removed then added again is reported nowhere either. Removal is deferred
// to end_frame() so that pair indices stay valid during the frame.
//
// Held pairs (add_held()): pairs a recomputation does not see, such as the
// BroadPhase's pairs with static objects, which its algorithm is never
// given. remove_all(), assign() and remove_if_involves() leave them as they
// are; remove() ends them. A pair is held or not for its whole life.
//
// Memory: 8 bytes per pair in the array, 1 byte of flags, and 16 bytes per
// hash slot at load 1/4..1/2 (32..64 bytes per pair).
//
// Failure: every call either completes or, when an allocation fails (or the
// budget's room runs out), throws having changed nothing, so a frame cut
// short by an exception leaves the frame's earlier calls recorded, and
// abandon_frame() (which cannot fail) returns to the set of the previous
// end_frame().
//
// Budget (set_budget()): a limit on the pairs after a frame, which only the
// frame's end knows (removals wait for it, and an incremental algorithm may
// add a pair it removes later in the same frame). During the frame the
// array may hold twice the budget, the previous frame's pairs and the new
// ones; beyond that add() throws. Whoever drives the frame decides with
// size_at_end() before end_frame(), and, when the room ran out first,
// by computing the frame again in a way that adds each pair once (then
// running out of room proves the frame over budget: BroadPhase::update()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <vector>

#include "sapling/detail/hash_index.hpp"
#include "sapling/pair.hpp"

namespace sapling {

/// Thrown by PairManager when a frame runs out of the room its budget gives
/// (set_budget(), from Options::max_pairs). BroadPhase::update() catches it
/// and decides whether the frame is over budget (StatusCode::kPairBudget).
struct PairBudgetExceeded : std::exception {
  const char* what() const noexcept override { return "sapling: pair budget exceeded"; }
};

class PairManager {
 public:
  /// Records that {x, y} overlaps now. Requires x != y.
  void add(Id x, Id y) { insert(x, y, 0); }
  /// The same for a held pair (see the opening): one that remove_all(),
  /// assign() and remove_if_involves() keep.
  void add_held(Id x, Id y) { insert(x, y, kHeld); }

  /// Records that {x, y} no longer overlaps; nothing if it was not a pair.
  /// Requires x != y ({~0, ~0} is the index's empty key).
  void remove(Id x, Id y) {
    if (index_stale_) rebuild_index();
    const std::uint32_t index = index_.find(pair_key(make_pair(x, y)));
    if (index != detail::HashIndex::kNotFound) mark_removed(index);
  }

  /// Hints that {x, y} will be added or removed soon (see HashIndex::prefetch):
  /// callers with many changes overlap the hash table's cache misses.
  void prefetch(Id x, Id y) const noexcept { index_.prefetch(pair_key(make_pair(x, y))); }
  /// Replaces the whole pair set, held pairs apart, by `pairs` (each pair
  /// once, a < b, any order, none of them held): a recomputation's frame in
  /// one call. The lists are sorted and
  /// merged instead of probing the hash table once per pair, which at a
  /// million pairs misses the cache on every probe; the hash index is then
  /// rebuilt only if add(), remove() or the like come later (they may: the
  /// frame's delta accounts for them). After add() or remove() in the same
  /// frame it falls back to remove_all() and add(). `pairs` is taken (its
  /// storage swapped for the old set's).
  void assign(std::vector<Pair>& pairs);
  /// Brings the hash index up to date now if assign() left it stale, so
  /// that the next frame's add() and remove() do not pay for it: a tracking
  /// algorithm after a frame it recomputed.
  void build_index() {
    if (index_stale_) rebuild_index();
  }

  /// What remove_all() does with held pairs.
  enum class Held : std::uint8_t { kKept, kRemoved };
  /// Records that no pair overlaps any more, held pairs apart unless `held`
  /// says otherwise: the start of a recomputation, after which add()
  /// re-asserts the pairs that still overlap.
  void remove_all(Held held = Held::kKept) {
    replaced_all_ = true;
    if (index_stale_) rebuild_index();
    const std::uint8_t spared = held == Held::kKept ? kHeld : 0;
    for (std::uint32_t i = 0; i < pairs_.size(); ++i) {
      if (!(flags_[i] & spared)) mark_removed(i);
    }
  }

  /// Records the removal of every pair, held ones apart, with an id for
  /// which `involved(id)`.
  template <class Predicate>
  void remove_if_involves(Predicate involved) {
    if (index_stale_) rebuild_index();
    for (std::uint32_t i = 0; i < pairs_.size(); ++i) {
      if (!(flags_[i] & kHeld) && (involved(pairs_[i].a) || involved(pairs_[i].b))) mark_removed(i);
    }
  }

  /// Whether {x, y} is a pair now (during a frame: as recorded so far).
  bool contains(Id x, Id y) const {
    if (index_stale_) return sorted_contains(make_pair(x, y));  // then nothing is pending
    const std::uint32_t index = index_.find(pair_key(make_pair(x, y)));
    return index != detail::HashIndex::kNotFound && !(flags_[index] & kRemoved);
  }

  /// Ends the frame: appends its created and deleted pairs (in no particular
  /// order) to the two vectors, and applies the removals. An empty vector
  /// holding room for 65,536 pairs or more, over twice what the frame could
  /// report, is given that room back first (then sized for the frame).
  void end_frame(std::vector<Pair>& created, std::vector<Pair>& deleted);

  /// Forgets the frame's calls so far: the set is again the one of the
  /// previous end_frame(). Never fails; for a frame cut short by an
  /// exception.
  void abandon_frame() noexcept;

  /// The most pairs a frame may leave, 0 for no limit. Room during a frame:
  /// twice that, beyond which add() throws PairBudgetExceeded; assign()
  /// throws when given more than the budget.
  void set_budget(std::size_t pairs) noexcept {
    budget_ = pairs;
    room_ = pairs > SIZE_MAX / 2 ? SIZE_MAX : 2 * pairs;
  }
  std::size_t budget() const noexcept { return budget_; }
  /// The number of pairs end_frame() would leave if called now.
  std::size_t size_at_end() const noexcept;

  /// All current pairs, contiguous; valid after end_frame() until the next
  /// call that changes the manager. The order is deterministic for a given
  /// sequence of calls, otherwise unspecified (sorted after assign()).
  std::span<const Pair> pairs() const noexcept { return pairs_; }
  std::size_t size() const noexcept { return pairs_.size(); }

  /// Makes room for `pairs` pairs, so that frames up to that many allocate
  /// nothing for them.
  void reserve(std::size_t pairs);
  /// Gives back the memory held beyond what the current pairs need (after
  /// many pairs have gone). Outside a frame only; the order of pairs() is
  /// kept. On std::bad_alloc nothing has changed.
  void shrink_to_fit();
  /// Forgets every pair without reporting them (not a frame's change).
  void clear();
  std::size_t memory_bytes() const noexcept;

  /// Checks every invariant (the hash index maps each pair to its slot, no
  /// pending state outside a frame); returns false on the first violation.
  bool validate() const;

 private:
  static constexpr std::uint8_t kNew = 1;      // not a pair at the previous end_frame()
  static constexpr std::uint8_t kRemoved = 2;  // to be removed at end_frame()
  static constexpr std::uint8_t kTouched = 4;  // listed in touched_
  static constexpr std::uint8_t kHeld = 8;     // add_held(): kept across frames, unlike the three above

  void insert(Id x, Id y, std::uint8_t held) {
    if (index_stale_) rebuild_index();
    const Pair p = make_pair(x, y);
    // Room first (the slow path, rarely taken), so that nothing below fails
    // after the index has changed.
    if ((pairs_.size() == pairs_.capacity() || pairs_.size() == room_) && !make_room(p, held)) return;
    const auto [index, inserted] = index_.insert(pair_key(p), static_cast<std::uint32_t>(pairs_.size()));
    if (inserted) {
      pairs_.push_back(p);
      flags_.push_back(kNew | kTouched | held);
      touched_.push_back(*index);
    } else {
      flags_[*index] = static_cast<std::uint8_t>((flags_[*index] & ~kRemoved) | held);
    }
  }

  void rebuild_index();
  void abandon_changes() noexcept;
  bool sorted_contains(Pair p) const;
  bool make_room(Pair p, std::uint8_t held);
  void merge_held(std::vector<Pair>& pairs);
  void mark_held() noexcept;  // false if p is a pair already (then recorded as present)

  void mark_removed(std::uint32_t index) {
    std::uint8_t& f = flags_[index];
    if (!(f & kTouched)) touched_.push_back(index);
    f |= kRemoved | kTouched;
  }

  std::vector<Pair> pairs_;
  std::vector<std::uint8_t> flags_;     // parallel to pairs_
  detail::HashIndex index_;             // pair_key -> position in pairs_
  std::vector<std::uint32_t> touched_;  // positions changed this frame
  std::vector<std::uint64_t> doomed_;   // scratch: keys removed in end_frame()
  // assign(): pairs_ is sorted and index_ out of date until rebuild_index();
  // the frame's delta waits in assigned_created_ / assigned_deleted_.
  bool index_stale_ = false;
  bool replaced_all_ = false;  // this frame: assign() or remove_all()
  std::vector<Pair> assigned_created_, assigned_deleted_;
  std::vector<std::uint8_t> struck_;  // scratch of end_frame(): assign()'s pairs cancelled by later calls
  std::vector<Pair> held_;            // scratch of assign(): the held pairs, sorted
  std::vector<std::uint64_t> sort_keys_, sort_scratch_;  // scratch of assign()
  std::vector<std::uint32_t> sort_counts_;
  std::size_t budget_ = 0;
  std::size_t room_ = 0;  // 2 * budget_: the most pairs_ holds during a frame
};

}  // namespace sapling
