// The segmented interval list of Tracy, Buss and Woods 2009, section 3.2.2:
// one axis' sorted endpoints kept as a sequence of small arrays ("chunks")
// instead of one long array, so that inserting or erasing an endpoint
// shifts at most one chunk, never the whole axis.
//
// - Chunks hold at most `chunk_capacity` endpoints and are never empty
//   (an empty list has no chunk). They are linked in order, and `order_`,
//   the paper's "array of pointers", lists them in order for the binary
//   search that finds where a new endpoint goes.
// - An endpoint is one 64-bit word, (key, max flag, owner slot), and the
//   list is sorted by the whole word: a strict total order (no two words are
//   equal), a min before a max at equal keys (closed intervals), so the
//   list is the same whatever the history and a binary search is exact.
// - Checkpoints (on one axis only, `with_checkpoints`): each chunk knows
//   the objects whose interval spans its leading edge, min in an earlier
//   chunk and max in this one or a later one. They make the objects
//   overlapping an inserted or erased one local: its chunk's checkpoints,
//   the mins before it in its chunk and the mins between its two endpoints.
//   (The paper keeps the set at each chunk's trailing edge: the same sets,
//   one chunk over.) A chunk split walks the half that stays to give the new
//   chunk its set; a merge keeps the left chunk's set.
// - Fast movers: an endpoint may cross a chunk edge while its object's min
//   and max are out of order (a max before its min, in the middle of a
//   sort). An object's count at an edge is then [min before] - [max before]
//   = -1, kept in the chunk's fast-mover set (the paper's set R) until the
//   other endpoint crosses back. segmented-sap moves each object's two
//   endpoints in the order that keeps them ordered, so there it stays empty.
//
// Invariants (validate()): chunks non-empty and at most full; the words
// strictly increase along the list; every endpoint's recorded place is
// where it is; `order_` and the links agree; each chunk's checkpoint and
// fast-mover sets are exactly the objects of count +1 and -1 at its edge.
//
// Cost: an insertion or erasure O(log chunks + chunk_capacity), plus the
// checkpoint sets it joins or leaves; a split or merge O(chunk_capacity +
// its checkpoint set + chunks) (order_ shifts by one, a memmove); a local
// sort O(endpoints passed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sapling/algorithm.hpp"

namespace sapling::detail {

class SegmentedList {
 public:
  /// The endpoint word: the sortable key (float_key) in the upper 32 bits,
  /// then the max flag (bit 31), then the owner's slot (below 2^31).
  using Endpoint = std::uint64_t;
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  static constexpr Endpoint make_endpoint(std::uint32_t key, bool is_max, Slot owner) noexcept {
    return (Endpoint{key} << 32) | (Endpoint{is_max} << 31) | owner;
  }
  static constexpr Slot owner(Endpoint e) noexcept { return static_cast<Slot>(e & 0x7fffffffu); }
  static constexpr bool is_max(Endpoint e) noexcept { return ((e >> 31) & 1u) != 0; }

  /// Where an endpoint is: its chunk and its index in the chunk.
  struct Place {
    std::uint32_t chunk = kNone;
    std::uint32_t index = 0;
  };

  /// An empty list of chunks of `chunk_capacity` (at least 2) endpoints;
  /// with `with_checkpoints`, it keeps checkpoint and fast-mover sets.
  SegmentedList(std::uint32_t chunk_capacity, bool with_checkpoints);

  std::uint32_t chunk_capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return head_ == kNone; }
  /// Endpoints in the list.
  std::size_t size() const noexcept { return endpoints_; }
  /// Whether slot s has its endpoints here.
  bool contains(Slot s) const noexcept { return 2 * std::size_t{s} < place_.size() && place_[2 * s].chunk != kNone; }

  /// Inserts s's min and max (binary search to the chunk, insertion sort in
  /// it, a split if full) and enters s in the checkpoint sets it spans.
  void insert(Slot s, std::uint32_t min_key, std::uint32_t max_key);
  /// Takes s out of the checkpoint sets, then its endpoints out of their
  /// chunks (a chunk left small merges with a neighbour).
  void erase(Slot s);
  /// Replaces the whole list by the endpoints of `slots` (keys by slot, the
  /// list empty before): one radix sort, chunks filled to 3/4, checkpoint
  /// sets by one sweep. `min_keys`/`max_keys` are indexed by slot.
  void build(std::span<const Slot> slots, std::span<const std::uint32_t> min_keys,
             std::span<const std::uint32_t> max_keys);

  /// Moves one endpoint of s to `key` by local sort: adjacent swaps within
  /// its chunk, and across chunk edges (counts unchanged, checkpoints
  /// updated). Calls `passed(moving, other)` with its new word for every
  /// endpoint it passes, in order (rightward iff moving > other). The min
  /// and max may end out of order (fast movers).
  template <class Passed>
  void move_endpoint(Slot s, bool is_max, std::uint32_t key, Passed&& passed);
  /// Moves both endpoints of s, the one that keeps them ordered first.
  template <class Passed>
  void move(Slot s, std::uint32_t min_key, std::uint32_t max_key, Passed&& passed) {
    const Endpoint new_max = make_endpoint(max_key, true, s);
    if (new_max > word(place_[2 * s + 1])) {
      move_endpoint(s, true, max_key, passed);
      move_endpoint(s, false, min_key, passed);
    } else {
      move_endpoint(s, false, min_key, passed);
      move_endpoint(s, true, max_key, passed);
    }
  }

  /// Calls `f(other)` for every object that may overlap s on this axis: the
  /// checkpoints of s's min's chunk, the mins before s's min in that chunk
  /// and the mins between s's min and max. A superset (each object once,
  /// s never): the caller tests the boxes. Needs checkpoints and no fast
  /// movers.
  template <class F>
  void for_each_candidate(Slot s, F&& f) const;

  // Inspection, for validate() and tests.
  /// The chunks in order.
  std::span<const std::uint32_t> chunks() const noexcept { return order_; }
  /// The endpoints of a chunk, sorted.
  std::span<const Endpoint> chunk_endpoints(std::uint32_t c) const noexcept {
    return {words_.data() + std::size_t{c} * capacity_, meta_[c].count};
  }
  /// The objects spanning a chunk's leading edge (count +1 there).
  std::span<const Slot> checkpoints(std::uint32_t c) const noexcept {
    return with_checkpoints_ ? std::span<const Slot>(sets_[c].spans) : std::span<const Slot>();
  }
  /// The objects with count -1 at a chunk's leading edge (max before min).
  std::span<const Slot> fast_movers(std::uint32_t c) const noexcept {
    return with_checkpoints_ ? std::span<const Slot>(sets_[c].fast) : std::span<const Slot>();
  }
  /// Where an endpoint of s is.
  Place place(Slot s, bool is_max) const noexcept { return place_[2 * s + is_max]; }
  /// The endpoint word at a place.
  Endpoint word(Place p) const noexcept { return words_[std::size_t{p.chunk} * capacity_ + p.index]; }

  /// Makes room for slots below `slots` and about `endpoints` endpoints.
  void reserve(std::size_t slots, std::size_t endpoints);
  /// Gives back the chunks freed by merges and the places of slots at and
  /// above `slots` (none live): called after mass removals.
  void shrink_to_fit(std::size_t slots);
  std::size_t memory_bytes() const noexcept;
  /// Checks every invariant in the file opening; false on the first violation.
  bool validate() const;

 private:
  struct ChunkMeta {
    std::uint32_t count = 0;
    std::uint32_t prev = kNone, next = kNone;
  };
  struct CheckpointSets {
    std::vector<Slot> spans;  // count +1 at the leading edge
    std::vector<Slot> fast;   // count -1 (the paper's R)
  };

  Endpoint* data(std::uint32_t c) noexcept { return words_.data() + std::size_t{c} * capacity_; }
  const Endpoint* data(std::uint32_t c) const noexcept { return words_.data() + std::size_t{c} * capacity_; }
  Endpoint first(std::uint32_t c) const noexcept { return data(c)[0]; }
  void set_place(Endpoint e, std::uint32_t c, std::uint32_t index) noexcept {
    place_[2 * std::size_t{owner(e)} + is_max(e)] = {c, index};
  }
  // +1 / -1 to s's count at chunk c's leading edge (the paper's add and
  // remove, through the fast-mover set).
  void count_up(std::uint32_t c, Slot s);
  void count_down(std::uint32_t c, Slot s);
  // An endpoint crossing c's leading edge leftward (into earlier chunks) or rightward.
  void cross_edge(std::uint32_t c, Endpoint e, bool leftward) {
    if (!with_checkpoints_) return;
    if (is_max(e) == leftward) {
      count_down(c, owner(e));
    } else {
      count_up(c, owner(e));
    }
  }

  std::uint32_t new_chunk();
  std::uint32_t find_chunk(Endpoint e) const;
  std::size_t rank(std::uint32_t c) const;
  void insert_endpoint(Endpoint e, Slot skip);
  void erase_endpoint(Place p);
  void split(std::uint32_t c, Slot skip);
  void merge(std::uint32_t left, std::uint32_t right);

  std::uint32_t capacity_;
  bool with_checkpoints_;
  std::vector<Endpoint> words_;       // chunk c's endpoints at [c * capacity_, + count)
  std::vector<ChunkMeta> meta_;       // by chunk
  std::vector<CheckpointSets> sets_;  // by chunk, with checkpoints only
  std::vector<std::uint32_t> free_;   // chunks freed by merges, for reuse
  std::vector<std::uint32_t> order_;  // the chunks in order (binary search)
  std::vector<Place> place_;          // by 2 * slot + is_max
  std::uint32_t head_ = kNone;        // the first chunk
  std::size_t endpoints_ = 0;
  std::vector<Endpoint> sort_items_, sort_scratch_;  // scratch of build(), given back after it
  std::vector<std::uint32_t> radix_counts_;
};

// Moves one endpoint by local sort (the paper's "sort during movement"): the
// word shifts its neighbours one place at a time while it is out of order;
// at a chunk edge it swaps with the neighbouring chunk's end, so chunk counts
// never change, and both words crossing the edge update its checkpoints.
template <class Passed>
void SegmentedList::move_endpoint(Slot s, bool max_end, std::uint32_t key, Passed&& passed) {
  const Endpoint moving = make_endpoint(key, max_end, s);
  Place p = place_[2 * std::size_t{s} + max_end];
  std::uint32_t c = p.chunk, i = p.index;
  Endpoint* d = data(c);
  if (moving > d[i]) {
    for (;;) {
      const std::uint32_t count = meta_[c].count;
      while (i + 1 < count && d[i + 1] < moving) {
        const Endpoint other = d[i + 1];
        passed(moving, other);
        d[i] = other;
        set_place(other, c, i);
        ++i;
      }
      if (i + 1 < count) break;
      const std::uint32_t n = meta_[c].next;
      if (n == kNone || first(n) > moving) break;
      const Endpoint other = first(n);  // crosses n's leading edge leftward, `moving` rightward
      passed(moving, other);
      d[i] = other;
      set_place(other, c, i);
      cross_edge(n, other, true);
      cross_edge(n, moving, false);
      c = n;
      d = data(c);
      i = 0;
    }
  } else {
    for (;;) {
      while (i > 0 && d[i - 1] > moving) {
        const Endpoint other = d[i - 1];
        passed(moving, other);
        d[i] = other;
        set_place(other, c, i);
        --i;
      }
      if (i > 0) break;
      const std::uint32_t b = meta_[c].prev;
      if (b == kNone) break;
      const std::uint32_t last = meta_[b].count - 1;
      const Endpoint other = data(b)[last];
      if (other < moving) break;
      passed(moving, other);  // crosses c's leading edge rightward, `moving` leftward
      d[0] = other;
      set_place(other, c, 0);
      cross_edge(c, other, false);
      cross_edge(c, moving, true);
      c = b;
      d = data(c);
      i = last;
    }
  }
  d[i] = moving;
  place_[2 * std::size_t{s} + max_end] = {c, i};
}

// The paper's insertion query: the objects spanning the chunk's leading edge,
// then the chunk's mins up to s's min, then every min up to s's max.
template <class F>
void SegmentedList::for_each_candidate(Slot s, F&& f) const {
  const Place lo = place_[2 * std::size_t{s}], hi = place_[2 * std::size_t{s} + 1];
  for (const Slot o : sets_[lo.chunk].spans) f(o);
  const Endpoint* d = data(lo.chunk);
  for (std::uint32_t i = 0; i < lo.index; ++i) {
    if (!is_max(d[i])) f(owner(d[i]));
  }
  std::uint32_t c = lo.chunk, i = lo.index + 1;
  for (;;) {
    d = data(c);
    const std::uint32_t end = c == hi.chunk ? hi.index : meta_[c].count;
    for (; i < end; ++i) {
      if (!is_max(d[i])) f(owner(d[i]));
    }
    if (c == hi.chunk) return;
    c = meta_[c].next;
    i = 0;
  }
}

}  // namespace sapling::detail
