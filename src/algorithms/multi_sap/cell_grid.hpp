// multi-sap's grid: a hashed grid of cells covering all of space, each cell a
// small array of the boxes that touch it, sorted by min x (Terdiman 2007,
// II.2-II.3; the sorted array in place of a per-cell endpoint SAP:
// multi_sap.cpp says why).
//
// A cell coordinate is floor(coordinate / cell size), computed in double and
// clamped to +-kCoordLimit, per axis: a non-decreasing function of the float
// coordinate, infinities included. A box is entered in every cell of its
// range [cell(min), cell(max)] on each axis. Two boxes that overlap share a
// point p (the least corner of their intersection), and cell(p) lies in
// both ranges, so they share the cell of p: exactness never depends on the
// cell size or on rounding, only on this monotony. Far cells merged by the
// clamp are still correct, merely crowded.
//
// Two generations of cells share the grid, each with its cell size: while
// multi-sap moves its boxes to a grid of another size, a few per frame, the
// cells of both are live (multi_sap.cpp, "Regrid"). A cell is known by its
// generation and coordinates.
//
// With set_chunk(), every cell is instead a segmented list of small sorted
// chunks (segmented_cell.hpp, multi-sap's cells=segmented): the same
// operations, positions being its addresses; mark_gone() takes the entry
// out at once (that moves only later positions) and settle() merges small
// chunks.
//
// Invariants (validate()): every live cell is in the hash index under its
// generation and coordinates and holds at least one entry; its entries are sorted by min x;
// its max_width bounds every entry's x extent from above (a segmented cell:
// that and its own invariants); no tag is set between frames; every live
// cell lies in its generation's extent.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "algorithms/multi_sap/segmented_cell.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"
#include "sapling/detail/hash_index.hpp"

namespace sapling::detail {

/// The cells a box touches: [lo[k], hi[k]] on each axis k, inclusive.
struct CellRange {
  std::array<std::int32_t, 3> lo{};
  std::array<std::int32_t, 3> hi{};

  friend constexpr bool operator==(const CellRange&, const CellRange&) = default;
  constexpr bool contains(const std::array<std::int32_t, 3>& c) const noexcept {
    return lo[0] <= c[0] && c[0] <= hi[0] && lo[1] <= c[1] && c[1] <= hi[1] && lo[2] <= c[2] && c[2] <= hi[2];
  }
};

class CellGrid {
 public:
  /// One box in one cell: its bounds, its slot, and a tag its owner sets
  /// while it works on the cell (0 otherwise). 32 bytes.
  struct Entry {
    std::array<float, 3> min;
    std::array<float, 3> max;
    Slot slot;
    std::uint32_t tag;
  };
  using Coord = std::array<std::int32_t, 3>;
  // 21 bits per axis in a key, never all ones: with the generation bit, no
  // key is the hash index's empty key.
  static constexpr std::int32_t kCoordLimit = (1 << 20) - 2;
  static constexpr std::uint32_t kNoCell = ~std::uint32_t{0};
  static constexpr Slot kGone = ~Slot{0};  // an entry marked by mark_leaving()

  /// Sets the cell edge (> 0, finite) of generation `gen` (0 or 1), which
  /// must have no cell.
  void set_cell_size(double size, int gen = 0) noexcept {
    size_[gen] = size;
    inverse_[gen] = 1.0 / size;
    extent_[gen] = kNoExtent;
  }
  double cell_size(int gen = 0) const noexcept { return size_[gen]; }
  /// Whether the grid has only one cell on z (a 2D broad phase: z is 0).
  void set_flat(bool flat) noexcept { flat_ = flat; }
  /// Makes every cell a segmented list of chunks of `chunk` (at least 2)
  /// entries instead of one sorted array (0, the default). Set before the
  /// first cell.
  void set_chunk(std::uint32_t chunk) noexcept { chunk_ = chunk; }
  bool segmented() const noexcept { return chunk_ != 0; }

  /// The cell coordinate of `x` on an axis: non-decreasing in x.
  std::int32_t coord(float x, int gen = 0) const noexcept {
    const double t = std::floor(double(x) * inverse_[gen]);
    if (!(t > -double(kCoordLimit))) return -kCoordLimit;  // -inf too
    if (t > double(kCoordLimit)) return kCoordLimit;
    return static_cast<std::int32_t>(t);
  }
  CellRange range(const Box3& b, int gen = 0) const noexcept {
    CellRange r;
    for (int k = 0; k < 3; ++k) r.lo[k] = coord(b.min[k], gen), r.hi[k] = coord(b.max[k], gen);
    if (flat_) r.lo[2] = r.hi[2] = 0;
    return r;
  }
  /// The number of cells in `r`.
  static std::uint64_t cells_in(const CellRange& r) noexcept {
    std::uint64_t n = 1;
    for (int k = 0; k < 3; ++k) n *= std::uint64_t(std::int64_t(r.hi[k]) - r.lo[k] + 1);
    return n;
  }
  /// The cell holding the least corner of the intersection of two
  /// overlapping boxes: the one cell that owns their pair.
  Coord home(const Box3& a, const Box3& b, int gen = 0) const noexcept {
    Coord c;
    for (int k = 0; k < 3; ++k) c[k] = coord(a.min[k] > b.min[k] ? a.min[k] : b.min[k], gen);
    if (flat_) c[2] = 0;
    return c;
  }

  /// The live cell at `c` of generation `gen`, or kNoCell.
  std::uint32_t find(const Coord& c, int gen = 0) const noexcept;
  /// Hints that the cell at `c` will be looked up soon.
  void prefetch_lookup(const Coord& c, int gen = 0) const noexcept { index_.prefetch(key(c, gen)); }
  /// The live cell at `c` of generation `gen`, made (empty) if absent.
  std::uint32_t find_or_add(const Coord& c, int gen = 0);
  const Coord& coord_of(std::uint32_t cell) const noexcept { return cells_[cell].coord; }
  int gen_of(std::uint32_t cell) const noexcept { return cells_[cell].gen; }
  std::size_t entries(std::uint32_t cell) const noexcept {
    return chunk_ != 0 ? segs_[cell].size() : cells_[cell].entries.size();
  }

  /// Enters `b` of `slot` in `cell`.
  void insert(std::uint32_t cell, const Box3& b, Slot slot, std::uint32_t tag = 0);
  /// Takes out the entry of `slot`, entered with box `old`.
  void erase(std::uint32_t cell, const Box3& old, Slot slot);
  /// Changes the entry of `slot` from `old` to `now`, keeping the order.
  void replace(std::uint32_t cell, const Box3& old, const Box3& now, Slot slot, std::uint32_t tag = 0);
  /// The position of an entry a query handed out (valid until the cell
  /// changes).
  std::uint32_t index_of(std::uint32_t cell, const Entry& e) const noexcept {
    if (chunk_ != 0) return segs_[cell].address_of(e);
    return static_cast<std::uint32_t>(&e - cells_[cell].entries.data());
  }
  /// At a known position: the entry takes box `now`, whose min x is not
  /// below its old one, and slides right into place, its tag cleared; or its
  /// tag is cleared; or it is taken out. Each moves only entries after it.
  void slide_right(std::uint32_t cell, std::uint32_t at, const Box3& now) noexcept;
  void clear_tag(std::uint32_t cell, std::uint32_t at) noexcept {
    (chunk_ != 0 ? segs_[cell].at(at) : cells_[cell].entries[at]).tag = 0;
  }
  void erase_at(std::uint32_t cell, std::uint32_t at) noexcept {
    if (chunk_ != 0) return segs_[cell].erase_at(at);
    std::vector<Entry>& v = cells_[cell].entries;
    v.erase(v.begin() + at);
  }
  /// Sets the tag of the entry of `slot`, whose box is `b`.
  void set_tag(std::uint32_t cell, const Box3& b, Slot slot, std::uint32_t tag) noexcept {
    if (chunk_ != 0) {
      segs_[cell].at(segs_[cell].locate(b.min[0], slot)).tag = tag;
      return;
    }
    Cell& c = cells_[cell];
    c.entries[position_of(c, b.min[0], slot)].tag = tag;
  }
  /// The batch form, for many changes in one cell: locate() every entry
  /// that changes first (positions hold while the order does), then
  /// overwrite() or mark_gone() it, append() the arrivals, and settle() the
  /// cell: gone entries dropped, order restored (insertion sort, the boxes
  /// having moved little, or a full sort for many arrivals), max_width
  /// tightened.
  std::uint32_t locate(std::uint32_t cell, const Box3& old, Slot slot) const {
    if (chunk_ != 0) return segs_[cell].locate(old.min[0], slot);
    return static_cast<std::uint32_t>(position_of(cells_[cell], old.min[0], slot));
  }
  void overwrite(std::uint32_t cell, std::uint32_t at, const Box3& now) noexcept {
    Entry& e = chunk_ != 0 ? segs_[cell].at(at) : cells_[cell].entries[at];
    e.min = now.min;
    e.max = now.max;
  }
  void mark_gone(std::uint32_t cell, std::uint32_t at) noexcept {
    if (chunk_ != 0) return segs_[cell].erase_at(at);
    cells_[cell].entries[at].slot = kGone;
  }
  /// Appends `b` out of order (a bulk arrival: settle() sorts), room for
  /// `more` appends made on the first.
  void append(std::uint32_t cell, const Box3& b, Slot slot, std::uint32_t tag = 0, std::size_t more = 1);
  void settle(std::uint32_t cell, std::size_t arrivals);
  /// Frees `cell` if it holds nothing; its storage is kept for reuse (see
  /// trim()).
  void release_if_empty(std::uint32_t cell);
  /// Gives back the storage of free cells beyond a small reserve, and all of
  /// it when no cell is live.
  void trim();

  /// Calls hit(entry) for every entry of `cell` whose box overlaps `b`
  /// (closed), in the cell's order. kSegmented is segmented(): the caller
  /// compiles its loop once per kind of cell.
  template <bool kSegmented, class Hit>
  void query(std::uint32_t cell, const Box3& b, Hit&& hit) const {
    if constexpr (kSegmented) {
      segs_[cell].query(b, lowest_min(cells_[cell], b.min[0]), hit);
      return;
    }
    const Cell& c = cells_[cell];
    const Entry* e = c.entries.data();
    const std::size_t n = c.entries.size();
    for (std::size_t i = first_candidate(c, b.min[0]); i < n && e[i].min[0] <= b.max[0]; ++i) {
      const Entry& x = e[i];
      // Every test evaluated (no branch per axis): ints, as a bitwise & of bools.
      const int hit_x = int(b.min[0] <= x.max[0]) & int(x.min[1] <= b.max[1]) & int(b.min[1] <= x.max[1]) &
                        int(x.min[2] <= b.max[2]) & int(b.min[2] <= x.max[2]);
      if (hit_x != 0) hit(x);
    }
  }

  /// Hints that `cell` comes next: loads its entries into the cache, so that
  /// their misses overlap instead of stalling a binary search one by one.
  void prefetch(std::uint32_t cell) const noexcept {
    if (chunk_ != 0) return prefetch_segmented(cell);
    const Cell& c = cells_[cell];
    const char* p = reinterpret_cast<const char*>(c.entries.data());
    const std::size_t bytes = std::min<std::size_t>(c.entries.size() * sizeof(Entry), 16384);
    for (std::size_t b = 0; b < bytes; b += 64) __builtin_prefetch(p + b);
  }
  /// Hints that `cell` comes soon: loads its header (where its entries are).
  void prefetch_header(std::uint32_t cell) const noexcept { __builtin_prefetch(&cells_[cell]); }

  std::size_t live_cells() const noexcept { return live_; }
  /// A cell range holding every live cell of generation `gen` (lo > hi on
  /// an axis when there is none): grown as cells are made, made tight again
  /// by trim() once many cells have been freed.
  const CellRange& extent(int gen) const noexcept { return extent_[gen]; }
  /// Calls each(entry) for every entry of `cell`, in the cell's order.
  template <class Each>
  void for_each_entry(std::uint32_t cell, Each&& each) const {
    if (chunk_ != 0) return segs_[cell].for_each(each);
    for (const Entry& e : cells_[cell].entries) each(e);
  }
  /// Calls each(bounds) with the region of every live cell (for debug
  /// drawing): [c, c + 1) cell sizes per axis, z = [0, 0] when flat.
  template <class Each>
  void for_each_cell(Each&& each) const {
    for (const Cell& c : cells_) {
      if (!c.live) continue;
      Box3 b;
      for (int k = 0; k < 3; ++k) {
        b.min[k] = static_cast<float>(c.coord[k] * size_[c.gen]);
        b.max[k] = static_cast<float>((c.coord[k] + 1) * size_[c.gen]);
      }
      if (flat_) b.min[2] = b.max[2] = 0.0f;
      each(b);
    }
  }
  /// Calls each(gen, coord, entries) for every live cell.
  template <class Each>
  void for_each_cell_entries(Each&& each) const {
    for (std::uint32_t i = 0; i < cells_.size(); ++i) {
      if (cells_[i].live)
        with_entries(i, [&](std::span<const Entry> e) { each(int(cells_[i].gen), cells_[i].coord, e); });
    }
  }
  /// Calls each(entries) with the entries of `cell` in order (a segmented
  /// cell's gathered into one array first: for queries and checks, not
  /// frames).
  template <class Each>
  void with_entries(std::uint32_t cell, Each&& each) const {
    if (chunk_ == 0) return each(std::span<const Entry>(cells_[cell].entries));
    std::vector<Entry> all;
    all.reserve(segs_[cell].size());
    segs_[cell].for_each([&](const Entry& e) { all.push_back(e); });
    each(std::span<const Entry>(all));
  }
  std::size_t memory_bytes() const noexcept;
  /// Checks the invariants above; false on the first violation. Calls
  /// each(gen, coord, entry) for every entry of every live cell.
  template <class Each>
  bool validate(Each&& each) const {
    std::size_t live = 0;
    for (std::uint32_t i = 0; i < cells_.size(); ++i) {
      const Cell& c = cells_[i];
      if (!c.live) continue;
      ++live;
      if (entries(i) == 0 || find(c.coord, c.gen) != i || !extent_[c.gen].contains(c.coord)) return false;
      if (chunk_ != 0) {
        if (!c.entries.empty() || !segs_[i].valid()) return false;
        bool ok = true;
        segs_[i].for_each(
            [&](const Entry& e) { ok = ok && width(e) <= c.max_width && e.tag == 0 && each(int(c.gen), c.coord, e); });
        if (!ok) return false;
        continue;
      }
      for (std::size_t j = 0; j < c.entries.size(); ++j) {
        const Entry& e = c.entries[j];
        if (j > 0 && c.entries[j - 1].min[0] > e.min[0]) return false;
        if (!(width(e) <= c.max_width) || e.tag != 0) return false;
        if (!each(int(c.gen), c.coord, e)) return false;
      }
    }
    return live == live_ && index_.size() == live_;
  }

 private:
  struct Cell {
    Coord coord{};
    std::vector<Entry> entries;  // sorted by min[0]
    double max_width = 0;        // >= every entry's max[0] - min[0]
    bool live = false;
    std::uint8_t gen = 0;
  };

  std::uint64_t key(const Coord& c, int gen) const noexcept {
    const auto u = [](std::int32_t v) { return std::uint64_t(std::uint32_t(v + kCoordLimit + 1)); };
    return u(c[0]) | (u(c[1]) << 21) | (u(c[2]) << 42) | (std::uint64_t(gen) << 63);
  }
  // The x extent rounded up: an upper bound of max - min in exact arithmetic.
  static double width(const Entry& e) noexcept {
    if (e.max[0] == e.min[0]) return 0;                    // [inf, inf] included
    const double d = double(e.max[0]) - double(e.min[0]);  // relative error <= 2^-53
    return d + d * 0x1p-40;
  }
  // The first entry that can reach min x `lo`: every entry before it has
  // max x < lo, since its min x is below lo - max_width.
  static std::size_t first_candidate(const Cell& c, float lo);
  // The least min x of an entry that can reach `lo`, rounded down; -inf
  // when every entry can.
  static double lowest_min(const Cell& c, float lo) noexcept;
  void prefetch_segmented(std::uint32_t cell) const noexcept;
  static std::size_t position_of(const Cell& c, float min_x, Slot slot) noexcept;

  static constexpr CellRange kNoExtent{{kCoordLimit, kCoordLimit, kCoordLimit},
                                       {-kCoordLimit, -kCoordLimit, -kCoordLimit}};
  void grow_extent(const Coord& c, int gen) noexcept {
    CellRange& e = extent_[gen];
    for (int k = 0; k < 3; ++k) e.lo[k] = std::min(e.lo[k], c[k]), e.hi[k] = std::max(e.hi[k], c[k]);
  }

  std::vector<Cell> cells_;
  std::vector<SegmentedCell<Entry>> segs_;  // by cell id, when chunk_ > 0 (cells_' entries then unused)
  std::uint32_t chunk_ = 0;
  std::vector<std::uint32_t> free_;  // ids of cells not live, storage maybe kept
  detail::HashIndex index_;          // key(coord) -> cell id, live cells only
  std::size_t live_ = 0;
  std::size_t freed_ = 0;  // cells freed since the extents were last made tight
  CellRange extent_[2] = {kNoExtent, kNoExtent};
  double size_[2] = {1, 1}, inverse_[2] = {1, 1};
  bool flat_ = false;
};

}  // namespace sapling::detail
