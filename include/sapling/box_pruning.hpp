// One-shot box pruning (Terdiman 2007, I.4c, with appendix A's integer keys
// and appendix B's sentinels): every overlapping pair among one set of boxes
// (complete) or between two sets (bipartite), from scratch, with no state
// kept between calls but buffers and an optional prepared set.
//
// The method: sort the boxes along one axis by their min, then for each box
// scan forward while the next min is not past its max ("prune"), testing the
// other two axes of each candidate. Our version:
// - the sweep axis is the one along which box centres spread most;
// - the other two axes are cut into a grid of cells sized from the data, so
//   a box is only swept against boxes of its own cells (PhysX's multi box
//   pruning idea, generalised from 4+1 buckets to a grid);
// - keys are sortable integers (float_key), sorted per cell by an LSD radix
//   sort into a structure of arrays, and the two other axes are tested with
//   one SIMD compare per candidate;
// - cells are swept in parallel through a TaskSystem.
// Invariants: a box lies in every cell it touches, and a pair is reported
// only by the cell holding the low corner of the pair's overlap, which both
// boxes touch: once, never twice; each cell ends with a sentinel key above
// every float's, +inf included, so the scan needs no bounds check; cells
// are split into tasks by the input alone and results combined in cell
// order, so the output is the same for any thread count.
//
// Cost: O(n) sort plus O(n + candidates + pairs) sweep; the grid keeps the
// candidates near the pairs in flat or crowded worlds where a single sweep
// axis would leave each box thousands of candidates. Semantics are the
// library's: closed intervals, infinite coordinates allowed, NaN not
// (callers validate; see check_box()).
//
// Choose it when everything moves every frame or for one-shot queries
// (complete, bipartite, or many sets against one prepared set); the
// persistent "box-pruning" runs it each frame. UnisizePruner
// (sapling/unisize.hpp) is faster for many boxes of one size with many
// overlaps. Measurements and tuning: docs/algorithms/box-pruning.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/debug_draw.hpp"
#include "sapling/pair.hpp"
#include "sapling/task_system.hpp"

namespace sapling {

/// Box pruning with reusable buffers: no allocation per call once warm.
/// Not thread-safe: use one BoxPruner per thread (it may itself use a
/// TaskSystem internally).
class BoxPruner {
 public:
  /// `tasks` = nullptr: run on the calling thread only.
  explicit BoxPruner(TaskSystem* tasks = nullptr);
  ~BoxPruner();
  BoxPruner(BoxPruner&&) noexcept;
  BoxPruner& operator=(BoxPruner&&) noexcept;

  /// Appends every pair {i, j} of overlapping boxes, i < j, once each.
  /// Order: deterministic for a given input (grouped by grid cell, then by
  /// sweep order), the same for any thread count.
  void complete(std::span<const Box3> boxes, std::vector<IndexPair>& out);

  /// Appends every pair (i, j) with boxes_a[i] overlapping boxes_b[j], once
  /// each. Order as for complete(), except when one set has at least 8 times
  /// as many boxes as the other: then only the smaller set is sorted, and the
  /// pairs come in index order of the larger set's boxes (each box's pairs
  /// grouped by cell), the same for any thread count.
  void bipartite(std::span<const Box3> boxes_a, std::span<const Box3> boxes_b, std::vector<IndexPair>& out);

  /// Lays out `boxes` once for many bipartite queries against them: bucketed
  /// into a grid and sorted per cell as bipartite() would do on every call
  /// (PhysX's automatic box pruning keeps its resting boxes sorted the same
  /// way). The span itself is not kept. Replaces any set prepared before;
  /// complete() and bipartite() leave the prepared set alone.
  void prepare(std::span<const Box3> boxes);
  /// The same, and appends every pair among `boxes` as complete() would
  /// (same pairs, same order), found in the same pass over the prepared
  /// cells: a persistent broad phase's first frame lays out its resting set
  /// for the price of finding its pairs.
  void prepare(std::span<const Box3> boxes, std::vector<IndexPair>& out);

  /// Lays out the prepared set again without sorting it anew, in the grid
  /// it has: prepared box i stays, with its index, where keep[i] != 0; the
  /// others leave and free their indices; the `added` boxes join, taking
  /// the free indices, lowest first, then new ones (added[k]'s in
  /// indices[k]). The added boxes alone are sorted into the cells and
  /// merged with the entries there, in one pass: O(prepared entries + added
  /// log added). Returns false, changing nothing, where the grid no longer
  /// suits the boxes (the set half or twice the size it was laid out at,
  /// added boxes copied into many cells, a cell crowded far beyond the
  /// largest then): prepare() them instead. `keep` holds prepared_size()
  /// flags, a free index's 0.
  bool update_prepared(std::span<const std::uint8_t> keep, std::span<const Box3> added,
                       std::vector<std::uint32_t>& indices);

  /// Forgets the prepared set, whose boxes are no longer wanted (every one
  /// moved since): its arrays become complete()'s room, which otherwise a
  /// caller recomputing after a layout would take afresh (a million boxes:
  /// 35 MB of new pages, a fifth of that frame), and are not held twice.
  void forget_prepared() noexcept;

  /// Takes `donor`'s buffers as its own room, keeping its own task system
  /// and settings; `donor`'s prepared set is forgotten and it is left with
  /// this pruner's old buffers. For a structure that replaces another which
  /// ran box pruning over as many boxes (auto's switch from sap to
  /// box-pruning): the donor's pages are in memory already, where fresh
  /// ones cost the first complete() half its time (half a million boxes:
  /// 64-80 ms against 23 once warm).
  void take_room(BoxPruner&& donor) noexcept;

  /// For a caller that frames its calls (sap), when `framed`: a large
  /// prepare() keeps its staging buffer (32 bytes an entry) as a spare,
  /// which a complete() of as many boxes takes, and end_frame() gives it
  /// back at the end of the frame after the prepare()'s (at rest, the
  /// frames after a layout query few boxes and never need it). A world
  /// that all moves after its mass insertion then recomputes in the
  /// layout's room: at a million boxes that frame took 155-220 ms, 88-92
  /// with the spare. Off by default: the staging goes with the prepare().
  void set_framed(bool framed) noexcept;

  /// The least work given to one task of the TaskSystem, in entries (a box
  /// in a cell): kDefaultTaskGrain, below which the calling thread does the
  /// whole call alone. The boxes are counted into cells in chunks of four
  /// grains, cells swept in tasks of a grain or more, a probe's large set
  /// cut in chunks of two. The output is the same, in the same order, for
  /// any grain and thread count; a small grain only splits small inputs
  /// (tests of the threaded paths on inputs brute force can check).
  void set_task_grain(std::uint32_t entries) noexcept;
  static constexpr std::uint32_t kDefaultTaskGrain = 8192;
  /// The end of a frame, where set_framed(true).
  void end_frame() noexcept;

  /// Frees prepared box `index`, laid out with bounds `box`, in place: its
  /// entries stay where they sort, marked free, and no search reports them
  /// again; insert_prepared() may take their places. Returns false,
  /// changing nothing, where not every cell `box` touches holds an entry of
  /// `index` with its min (the box given is not the one laid out), or it
  /// touches many cells. The index stays taken until update_prepared()
  /// (keep it 0 there) or insert_prepared() gives it again.
  bool free_prepared(std::uint32_t index, const Box3& box);

  /// Lays out `box` in the prepared set in place, without a merge: in each
  /// cell it touches, its entry takes the place of the free entry
  /// (free_prepared()) nearest to where it sorts, within a few dozen
  /// entries, and those in between shift by one. Its index: that of a free
  /// entry it replaced which was its box's only one, else a new one,
  /// prepared_size(), which then grows by one. Returns false, changing
  /// nothing, where a cell has no free entry near enough, or the box
  /// touches many cells. O(log cell + the entries shifted) per cell.
  bool insert_prepared(const Box3& box, std::uint32_t& index);
  /// Fetches into the caches where insert_prepared(box) will read first
  /// (a hint, changing nothing), so that a caller inserting many boxes
  /// overlaps their waits on memory.
  void prefetch_insertion(const Box3& box) const noexcept;

  /// Appends every pair (i, j) with query[i] overlapping box j of the
  /// prepared set, once each. Only the query boxes are sorted, into the
  /// prepared grid, and only cells holding query boxes are swept: O(query +
  /// prepared entries of those cells + candidates); a cell whose prepared
  /// entries far outnumber its query boxes is searched from each query box
  /// instead (from the first entry within the cell's longest extent of it),
  /// O(query log + candidates) there. Order: by cell, then by sweep order;
  /// the same for any thread count. Declines (returns false,
  /// appends nothing) when the query boxes would be copied into many more
  /// cells than they number (boxes far larger than the prepared grid's
  /// cells): bipartite() over the boxes themselves is then the better call.
  [[nodiscard]] bool bipartite_prepared(std::span<const Box3> query, std::vector<IndexPair>& out);
  /// The same, and appends to `among` every pair {i, j}, i < j, of query
  /// boxes that overlap, once each: complete(query) found in the same pass,
  /// in the prepared grid's cells, without complete()'s own grid and sort
  /// (a persistent broad phase's changed boxes against its resting ones and
  /// among themselves). Order of `among`: by cell, then sweep order, the same
  /// for any thread count. Declines as above, appending to neither.
  [[nodiscard]] bool bipartite_prepared(std::span<const Box3> query, std::vector<IndexPair>& out,
                                        std::vector<IndexPair>& among);

  /// Indices of the prepared set (0 until prepare()): its boxes, and after
  /// update_prepared(), free_prepared() or insert_prepared() the free
  /// indices among them; and cells of its grid:
  /// a query box meets about prepared_size() / prepared_cells() of them.
  std::size_t prepared_size() const noexcept;
  std::size_t prepared_cells() const noexcept;
  /// Entries freed in place (free_prepared()) and not taken again
  /// (insert_prepared()) since the set was laid out or updated.
  std::size_t free_entries() const noexcept;

  /// Bytes held in buffers and the prepared set.
  std::size_t memory_bytes() const noexcept;
  /// Gives back the buffers of the calls so far (the prepared set stays):
  /// after a call with far more boxes than the ones to come. The next call
  /// allocates them again, at the size it needs.
  void release_buffers() noexcept;

  /// Draws the grid of the last complete() as boxes (DebugCategory::kCell):
  /// one per cell, -inf and +inf on the sweep axis and where a cell is open
  /// (the end cells of each grid axis, an axis with one cell); nothing
  /// before the first complete() of two boxes or more.
  void debug_draw(DebugDraw& draw) const;

 private:
  bool bipartite_prepared_impl(std::span<const Box3> query, std::vector<IndexPair>& out, std::vector<IndexPair>& among,
                               bool with_among);
  struct Impl;
  Impl* impl_;
};

/// Convenience one-shot calls on a thread-local BoxPruner.
void complete_pairs(std::span<const Box3> boxes, std::vector<IndexPair>& out);
void bipartite_pairs(std::span<const Box3> boxes_a, std::span<const Box3> boxes_b, std::vector<IndexPair>& out);

}  // namespace sapling
