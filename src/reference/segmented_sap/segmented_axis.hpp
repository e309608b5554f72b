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
//   list is the same whatever the history and a binary search is exact. An
//   endpoint's place is its chunk and a hint of its index there (not
//   updated when others shift it): found near the hint or by binary search.
//   Entries and checkpoints carry a filter of the owner's bounds on the two
//   other axes (15 bits of each key, packed in 64 bits: make_filter()), so
//   that scans and swaps filter on all three axes without reading boxes.
// - Checkpoints (on one axis only, `with_checkpoints`): each chunk knows
//   the objects whose interval spans its leading edge, min in an earlier
//   chunk and max in this one or a later one. They make the objects
//   overlapping an inserted or erased one local: its chunk's checkpoints,
//   the mins before it in its chunk and the mins between its two endpoints
//   (or, from the nearer edge, the next chunk's checkpoints, the maxes after
//   its min in its chunk and the mins from there to its max).
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
// strictly increase along the list; every endpoint's recorded chunk and key
// are where and what it is; `order_` and the links agree; each chunk's
// checkpoint and fast-mover sets are exactly the objects of count +1 and -1
// at its edge, checkpoints with their object's filter.
//
// Cost: an insertion or erasure O(log chunks + chunk_capacity), plus the
// checkpoint sets it joins or leaves (a linear search in each); a split or
// merge O(chunk_capacity + its checkpoint set + chunks) (order_ shifts by
// one, a memmove); a local sort O(log chunk_capacity + endpoints passed).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sapling/algorithm.hpp"

namespace sapling::detail {

/// One axis' segmented interval list (the structure described above).
class SegmentedAxis {
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
  static constexpr std::uint32_t key(Endpoint e) noexcept { return static_cast<std::uint32_t>(e >> 32); }

  /// An object's bounds on the two other axes a and b, as a conservative
  /// filter: each sortable key's top 15 bits (a monotone map, so boxes that
  /// overlap always pass), in four 16-bit lanes [a_lo, b_lo, ~a_hi, ~b_hi]
  /// (the highs complemented within 15 bits), so that one subtraction tests
  /// all four bounds (overlap()).
  using Filter = std::uint64_t;
  static constexpr Filter kLanes = 0x7fff7fff7fff7fffull;   // a lane's 15 bits
  static constexpr Filter kGuards = 0x8000800080008000ull;  // a lane's top bit
  static constexpr Filter make_filter(std::uint32_t a_lo, std::uint32_t a_hi, std::uint32_t b_lo,
                                      std::uint32_t b_hi) noexcept {
    return Filter{a_lo >> 17} | (Filter{b_lo >> 17} << 16) | (Filter{0x7fffu ^ (a_hi >> 17)} << 32) |
           (Filter{0x7fffu ^ (b_hi >> 17)} << 48);
  }
  /// The probe of filter f: [a_hi, b_hi, ~a_lo, ~b_lo] with each lane's top
  /// bit set, so that probe - g keeps every top bit iff each lane of g is at
  /// most the probe's: g.a_lo <= f.a_hi, g.b_lo <= f.b_hi, f.a_lo <= g.a_hi,
  /// f.b_lo <= g.b_hi, the two boxes' filters overlap on both axes.
  static constexpr Filter probe(Filter f) noexcept { return (kLanes ^ ((f << 32) | (f >> 32))) | kGuards; }
  /// Zero iff filter g overlaps the filter whose probe is `p`.
  static constexpr Filter misses(Filter p, Filter g) noexcept { return ((p - g) & kGuards) ^ kGuards; }

  /// An endpoint as a chunk holds it, with its owner's filter: a scan or a
  /// swap tests the two other axes from the chunk itself, and reads the box
  /// only when they may overlap.
  struct Entry {
    Endpoint word = 0;
    Filter filter = 0;
  };
  /// Where an endpoint is: its chunk, its key, and where in the chunk it
  /// was last put. Entries shifted by others' insertions and moves do not
  /// update the hint (that would be a write per shift): the index is looked
  /// for near the hint, then by binary search.
  struct Place {
    std::uint32_t chunk = kNone;
    std::uint32_t key = 0;
    std::uint32_t hint = 0;
  };

  /// An empty list of chunks of `chunk_capacity` (at least 2) endpoints;
  /// with `with_checkpoints`, it keeps checkpoint and fast-mover sets.
  SegmentedAxis(std::uint32_t chunk_capacity, bool with_checkpoints);

  std::uint32_t chunk_capacity() const noexcept { return capacity_; }
  bool empty() const noexcept { return head_ == kNone; }
  /// Endpoints in the list.
  std::size_t size() const noexcept { return endpoints_; }
  /// Whether slot s has its endpoints here.
  bool contains(Slot s) const noexcept { return 2 * std::size_t{s} < place_.size() && place_[2 * s].chunk != kNone; }

  /// Inserts s's min and max with its filter (binary search to the chunk,
  /// insertion sort in it, a split if full) and enters s in the checkpoint
  /// sets it spans.
  void insert(Slot s, std::uint32_t min_key, std::uint32_t max_key, Filter filter);
  /// Takes s out of the checkpoint sets, then its endpoints out of their
  /// chunks (a chunk left small merges with a neighbour).
  void erase(Slot s);
  /// Gives an empty list chunks of `chunk_capacity` (at least 2) endpoints
  /// from now on, and its storage back.
  void reset(std::uint32_t chunk_capacity);
  /// Empties the list as reset() does but keeps its storage (chunks,
  /// places) for a build() that follows: a run of builds allocates once.
  void clear(std::uint32_t chunk_capacity);
  /// Replaces the whole list, empty before, by the endpoints of `slots`
  /// (keys indexed by slot): one radix sort, chunks filled to 3/4,
  /// checkpoint sets by one sweep. The sort's scratch is given back unless
  /// `keep_scratch` (then by give_back_scratch()).
  void build(std::span<const Slot> slots, std::span<const std::uint32_t> min_keys,
             std::span<const std::uint32_t> max_keys, std::span<const Filter> filters, bool keep_scratch = false);
  /// Gives back the scratch a build() kept.
  void give_back_scratch() noexcept;

  /// Moves one endpoint of s to `key` by local sort: adjacent swaps within
  /// its chunk, and across chunk edges (counts unchanged, checkpoints
  /// updated). Calls `passed(moving, other)` (Entry, the moving one with its
  /// new word) for every endpoint it passes, in order (rightward iff
  /// moving.word > other.word). The min and max may end out of order (fast
  /// movers).
  template <class Passed>
  void move_endpoint(Slot s, bool is_max, std::uint32_t key, Passed&& passed) {
    const Place p = place(s, is_max);
    const Entry& e = data(p.chunk)[find_index(p.chunk, make_endpoint(p.key, is_max, s), p.hint)];
    move_endpoint(s, is_max, key, e.filter, passed);
  }
  /// Gives s a new filter (in its entries and checkpoints), then moves both
  /// endpoints, the one that keeps them ordered first. s must be in order.
  template <class Passed>
  void move(Slot s, std::uint32_t min_key, std::uint32_t max_key, Filter filter, Passed&& passed) {
    set_checkpoint_filter(s, filter);
    if (max_key > place_[2 * std::size_t{s} + 1].key) {
      move_endpoint(s, true, max_key, filter, passed);
      move_endpoint(s, false, min_key, filter, passed);
    } else {
      move_endpoint(s, false, min_key, filter, passed);
      move_endpoint(s, true, max_key, filter, passed);
    }
  }
  /// Moves one endpoint as move_endpoint(), giving it a new filter.
  template <class Passed>
  void move_endpoint(Slot s, bool is_max, std::uint32_t key, Filter filter, Passed&& passed);

  /// Calls `f(other)` for every object that may overlap s on this axis and
  /// whose filter overlaps s's: among the checkpoints of s's min's chunk,
  /// the mins before s's min in that chunk and the mins between s's min and
  /// max, or, when fewer, the checkpoints of the next chunk, the maxes after
  /// s's min in its chunk and the mins from the next chunk to s's max. A superset of s's overlaps (each object once, s
  /// never): the caller tests the boxes. Needs checkpoints, s in order, and no fast movers.
  template <class F>
  void for_each_candidate(Slot s, F&& f) const;

  // Inspection, for validate() and tests.
  /// The chunks in order.
  std::span<const std::uint32_t> chunks() const noexcept { return order_; }
  /// The entries of a chunk, sorted.
  std::span<const Entry> chunk_entries(std::uint32_t c) const noexcept {
    return {entries_.data() + std::size_t{c} * capacity_, meta_[c].count};
  }
  /// The objects spanning a chunk's leading edge (count +1 there).
  std::span<const Slot> checkpoints(std::uint32_t c) const noexcept {
    return with_checkpoints_ ? std::span<const Slot>(sets_[c].slots) : std::span<const Slot>();
  }
  /// Their filters, in the same order.
  std::span<const Filter> checkpoint_filters(std::uint32_t c) const noexcept {
    return with_checkpoints_ ? std::span<const Filter>(sets_[c].filters) : std::span<const Filter>();
  }
  /// The objects with count -1 at a chunk's leading edge (max before min).
  std::span<const Slot> fast_movers(std::uint32_t c) const noexcept {
    return with_checkpoints_ ? std::span<const Slot>(sets_[c].fast) : std::span<const Slot>();
  }
  /// Where an endpoint of s is.
  Place place(Slot s, bool is_max) const noexcept { return place_[2 * std::size_t{s} + is_max]; }
  /// The index of an endpoint of s in its chunk.
  std::uint32_t index_of(Slot s, bool is_max) const noexcept {
    const Place p = place(s, is_max);
    return find_index(p.chunk, make_endpoint(p.key, is_max, s), p.hint);
  }

  /// Makes room for slots below `slots` and about `endpoints` endpoints.
  void reserve(std::size_t slots, std::size_t endpoints);
  /// Gives back the chunks freed by merges (when at least half the pool)
  /// and the places of slots at and above `slots` (none live): called after
  /// mass removals.
  void shrink_to_fit(std::size_t slots);
  std::size_t memory_bytes() const noexcept;
  /// Checks every invariant in the file opening; false on the first violation.
  bool validate() const;

 private:
  struct ChunkMeta {
    std::uint32_t count = 0;
    std::uint32_t prev = kNone, next = kNone;
  };
  // Structure of arrays: a query scans the filters, a removal searches the slots.
  struct CheckpointSets {
    std::vector<Slot> slots;      // count +1 at the leading edge
    std::vector<Filter> filters;  // their filters
    std::vector<Slot> fast;       // count -1 (the paper's R)
    void clear() noexcept {
      slots.clear();
      filters.clear();
      fast.clear();
    }
  };

  Entry* data(std::uint32_t c) noexcept { return entries_.data() + std::size_t{c} * capacity_; }
  const Entry* data(std::uint32_t c) const noexcept { return entries_.data() + std::size_t{c} * capacity_; }
  Endpoint first(std::uint32_t c) const noexcept { return data(c)[0].word; }
  // The index of endpoint e, present in chunk c: at or near `hint` (a few
  // places either side), else by a branch-free binary search (a conditional
  // move per step, no mispredicted branches).
  std::uint32_t find_index(std::uint32_t c, Endpoint e, std::uint32_t hint) const noexcept {
    constexpr std::uint32_t kNear = 4;
    const Entry* const d = data(c);
    const std::uint32_t n = meta_[c].count;
    if (hint < n) {
      if (d[hint].word == e) return hint;
      const std::uint32_t lo = hint > kNear ? hint - kNear : 0, hi = std::min(n, hint + kNear + 1);
      for (std::uint32_t k = lo; k < hi; ++k) {
        if (d[k].word == e) return k;
      }
    }
    const Entry* base = d;
    std::uint32_t m = n;
    while (m > 1) {
      const std::uint32_t half = m / 2;
      base = base[half].word <= e ? base + half : base;
      m -= half;
    }
    return static_cast<std::uint32_t>(base - d);
  }
  void set_place(Endpoint e, std::uint32_t c, std::uint32_t index) noexcept {
    Place& p = place_[2 * std::size_t{owner(e)} + is_max(e)];
    p.chunk = c;
    p.hint = index;
  }
  // +1 / -1 to an object's count at chunk c's leading edge (the paper's add
  // and remove, through the fast-mover set).
  void count_up(std::uint32_t c, const Entry& e);
  void count_down(std::uint32_t c, Slot s);
  // A new filter for s (in order) in the checkpoints it is in.
  void set_checkpoint_filter(Slot s, Filter filter);
  // An entry crossing c's leading edge leftward (into earlier chunks) or rightward.
  void cross_edge(std::uint32_t c, const Entry& e, bool leftward) {
    if (!with_checkpoints_) return;
    if (is_max(e.word) == leftward) {
      count_down(c, owner(e.word));
    } else {
      count_up(c, e);
    }
  }

  std::uint32_t new_chunk();
  std::uint32_t find_chunk(Endpoint e);
  std::size_t rank(std::uint32_t c) const;
  void insert_entry(const Entry& e, Slot skip);
  void erase_endpoint(Slot s, bool is_max);
  void split(std::uint32_t c, Slot skip);
  void merge(std::uint32_t left, std::uint32_t right);

  std::uint32_t capacity_;
  bool with_checkpoints_;
  std::vector<Entry> entries_;        // chunk c's entries at [c * capacity_, + count)
  std::vector<ChunkMeta> meta_;       // by chunk
  std::vector<CheckpointSets> sets_;  // by chunk, with checkpoints only
  std::vector<std::uint32_t> free_;   // chunks freed by merges, for reuse
  std::vector<std::uint32_t> order_;  // the chunks in order (binary search)
  // By rank, each chunk's first word as last seen: find_chunk() searches it
  // and refreshes what it checks; moves and insertions at a chunk's front
  // leave it stale, splits and merges keep it in step with order_.
  std::vector<Endpoint> firsts_;
  std::vector<Place> place_;    // by 2 * slot + is_max
  std::uint32_t head_ = kNone;  // the first chunk
  std::size_t endpoints_ = 0;
  std::vector<Entry> sort_items_, sort_scratch_;  // scratch of build(), given back unless kept
  std::vector<std::uint32_t> radix_counts_;
  CheckpointSets sweep_open_;                 // scratch of build(): the objects open at the sweep
  std::vector<std::uint32_t> sweep_open_at_;  // and where each is in it, by slot
};

// Moves one endpoint by local sort (the paper's "sort during movement"): the
// entry shifts its neighbours one place at a time while it is out of order;
// at a chunk edge it swaps with the neighbouring chunk's end, so chunk counts
// never change, and both entries crossing the edge update its checkpoints.
template <class Passed>
void SegmentedAxis::move_endpoint(Slot s, bool max_end, std::uint32_t key, Filter filter, Passed&& passed) {
  Place& at = place_[2 * std::size_t{s} + max_end];
  std::uint32_t c = at.chunk;
  Entry* d = data(c);
  std::uint32_t i = find_index(c, make_endpoint(at.key, max_end, s), at.hint);
  const Entry moving{make_endpoint(key, max_end, s), filter};
  if (moving.word > d[i].word) {
    for (;;) {
      const std::uint32_t count = meta_[c].count;
      while (i + 1 < count && d[i + 1].word < moving.word) {
        passed(moving, d[i + 1]);
        d[i] = d[i + 1];
        ++i;
      }
      if (i + 1 < count) break;
      const std::uint32_t n = meta_[c].next;
      if (n == kNone || first(n) > moving.word) break;
      const Entry other = data(n)[0];  // crosses n's leading edge leftward, `moving` rightward
      passed(moving, other);
      d[i] = other;
      set_place(other.word, c, i);
      cross_edge(n, other, true);
      cross_edge(n, moving, false);
      c = n;
      d = data(c);
      i = 0;
    }
  } else {
    for (;;) {
      while (i > 0 && d[i - 1].word > moving.word) {
        passed(moving, d[i - 1]);
        d[i] = d[i - 1];
        --i;
      }
      if (i > 0) break;
      const std::uint32_t b = meta_[c].prev;
      if (b == kNone) break;
      const std::uint32_t last = meta_[b].count - 1;
      const Entry other = data(b)[last];
      if (other.word < moving.word) break;
      passed(moving, other);  // crosses c's leading edge rightward, `moving` leftward
      d[0] = other;
      set_place(other.word, c, 0);
      cross_edge(c, other, false);
      cross_edge(c, moving, true);
      c = b;
      d = data(c);
      i = last;
    }
  }
  d[i] = moving;
  at = {c, key, i};
}

// The paper's insertion query, from whichever edge of s's min's chunk is
// nearer: the objects spanning the chunk's leading edge, the chunk's mins
// before s's min and the mins up to s's max; or the objects spanning the
// next chunk's leading edge, the maxes after s's min in the chunk (the
// objects that end inside it) and the mins from the next chunk up to s's
// max (each object in one of the three). Each entry is tested on the two
// other axes by its filter, from the list itself.
template <class F>
void SegmentedAxis::for_each_candidate(Slot s, F&& f) const {
  const Place lo = place_[2 * std::size_t{s}], hi = place_[2 * std::size_t{s} + 1];
  const std::uint32_t lo_index = find_index(lo.chunk, make_endpoint(lo.key, false, s), lo.hint);
  const std::uint32_t hi_index = find_index(hi.chunk, make_endpoint(hi.key, true, s), hi.hint);
  const Filter p = probe(data(lo.chunk)[lo_index].filter);
  constexpr Endpoint kMaxFlag = Endpoint{1} << 31;
  // The entries of [from, to) of one kind (`kind`: 0 for mins, kMaxFlag for
  // maxes) whose filters overlap s's, with one rarely taken branch: the
  // misses of the four lanes and the kind's mismatch in one word. Half the
  // entries of a scan are of the other kind and few pass: a branch per test
  // would mispredict on every other one. s itself passes its own filter.
  const auto scan = [&](const Entry* from, const Entry* to, Endpoint kind) {
    for (const Entry* e = from; e != to; ++e) {
      if ((misses(p, e->filter) | ((e->word & kMaxFlag) ^ kind)) == 0) [[unlikely]] {
        if (owner(e->word) != s) f(owner(e->word));
      }
    }
  };
  const auto scan_checkpoints = [&](std::uint32_t c) {
    const CheckpointSets& set = sets_[c];
    const Filter* const filters = set.filters.data();
    for (std::size_t k = 0, n = set.filters.size(); k < n; ++k) {
      if (misses(p, filters[k]) == 0) [[unlikely]] {
        if (set.slots[k] != s) f(set.slots[k]);
      }
    }
  };
  const Entry* const d = data(lo.chunk);
  const std::uint32_t count = meta_[lo.chunk].count, next = meta_[lo.chunk].next;
  const bool one_chunk = hi.chunk == lo.chunk;
  // Entries each way (a checkpoint is half an entry's bytes).
  const std::size_t from_left = sets_[lo.chunk].slots.size() / 2 + (one_chunk ? hi_index : count);
  const std::size_t from_right = (next == kNone ? 0 : sets_[next].slots.size() / 2) + (count - lo_index - 1);
  if (from_left <= from_right) {
    scan_checkpoints(lo.chunk);
    scan(d, d + lo_index, 0);
    scan(d + lo_index + 1, d + (one_chunk ? hi_index : count), 0);
  } else {
    if (next != kNone) scan_checkpoints(next);
    scan(d + lo_index + 1, d + count, kMaxFlag);
  }
  if (one_chunk) return;
  for (std::uint32_t c = next;; c = meta_[c].next) {
    const Entry* const e = data(c);
    scan(e, e + (c == hi.chunk ? hi_index : meta_[c].count), 0);
    if (c == hi.chunk) return;
  }
}

}  // namespace sapling::detail
