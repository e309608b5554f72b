// multi-sap's hashed grid of sorted cells (cell_grid.hpp).
#include "algorithms/multi_sap/cell_grid.hpp"

#include "detail/reserve.hpp"

#include <algorithm>
#include <limits>

namespace sapling::detail {
namespace {

// Free cells whose storage is kept for reuse, beyond a quarter of the live
// ones: an object crossing back and forth into an empty cell allocates
// nothing, a mass removal gives the memory back.
constexpr std::size_t kKeptFreeCells = 64;
// Beyond this many arrivals in a batch, settle() sorts the cell instead of
// sliding each arrival from the end into place.
constexpr std::size_t kSortArrivals = 32;

// The first entry of e[0, n) whose min x is not below `v` (is above `v`
// with kAfter): a branch-free binary search, whose steps a mispredicted
// branch would otherwise dominate.
template <bool kAfter, class T>
std::size_t first_at(const CellGrid::Entry* e, std::size_t n, T v) noexcept {
  if (n == 0) return 0;
  const CellGrid::Entry* base = e;
  while (n > 1) {
    const std::size_t half = n / 2;
    const T key = base[half - 1].min[0];
    base = (kAfter ? !(v < key) : key < v) ? base + half : base;
    n -= half;
  }
  const T key = base->min[0];
  return static_cast<std::size_t>(base - e) + ((kAfter ? !(v < key) : key < v) ? 1 : 0);
}

}  // namespace

std::uint32_t CellGrid::find(const Coord& c, int gen) const noexcept {
  const std::uint32_t id = index_.find(key(c, gen));
  return id == detail::HashIndex::kNotFound ? kNoCell : id;
}

std::uint32_t CellGrid::find_or_add(const Coord& c, int gen) {
  const std::uint64_t k = key(c, gen);
  const std::uint32_t found = index_.find(k);
  if (found != detail::HashIndex::kNotFound) return found;
  // An exception here leaves at worst an unused cell: the algorithm is
  // discarded after a failed update() anyway (algorithm.hpp).
  std::uint32_t id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(cells_.size());
    cells_.emplace_back();
    if (chunk_ != 0) segs_.emplace_back(chunk_);
  }
  index_.insert(k, id);
  Cell& cell = cells_[id];
  cell.coord = c;
  cell.gen = static_cast<std::uint8_t>(gen);
  cell.max_width = 0;
  cell.live = true;
  ++live_;
  grow_extent(c, gen);
  return id;
}

double CellGrid::lowest_min(const Cell& c, float lo) noexcept {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (!(c.max_width < kInf)) return -kInf;
  const double gap = double(lo) - c.max_width;
  const double from = gap - std::abs(gap) * 0x1p-40;  // rounded down, far beyond the error of one subtraction
  return from > -kInf ? from : -kInf;                 // lo = -inf, or +inf - inf: every entry
}

// Out of line: inlined into prefetch(), it made GCC 12 drop the sorted
// cells' prefetch loop as well (frames 8-10% slower).
void CellGrid::prefetch_segmented(std::uint32_t cell) const noexcept { segs_[cell].prefetch(); }

std::size_t CellGrid::first_candidate(const Cell& c, float lo) {
  const double from = lowest_min(c, lo);
  if (!(from > -std::numeric_limits<double>::infinity())) return 0;
  return first_at<false>(c.entries.data(), c.entries.size(), from);
}

std::size_t CellGrid::position_of(const Cell& c, float min_x, Slot slot) noexcept {
  std::size_t i = first_at<false>(c.entries.data(), c.entries.size(), min_x);
  while (c.entries[i].slot != slot) ++i;  // the entry is there: equal keys, then it
  return i;
}

void CellGrid::insert(std::uint32_t cell, const Box3& b, Slot slot, std::uint32_t tag) {
  const Entry e{b.min, b.max, slot, tag};
  Cell& c = cells_[cell];
  if (chunk_ != 0) {
    segs_[cell].insert(e);
    c.max_width = std::max(c.max_width, width(e));
    return;
  }
  const std::size_t at = first_at<true>(c.entries.data(), c.entries.size(), b.min[0]);
  detail::reserve_geometric(c.entries, c.entries.size() + 1);  // a quarter's slack, not vector's doubling
  c.entries.insert(c.entries.begin() + static_cast<std::ptrdiff_t>(at), e);
  c.max_width = std::max(c.max_width, width(e));
}

void CellGrid::erase(std::uint32_t cell, const Box3& old, Slot slot) {
  if (chunk_ != 0) return segs_[cell].erase_at(segs_[cell].locate(old.min[0], slot));
  Cell& c = cells_[cell];
  c.entries.erase(c.entries.begin() + static_cast<std::ptrdiff_t>(position_of(c, old.min[0], slot)));
}

void CellGrid::replace(std::uint32_t cell, const Box3& old, const Box3& now, Slot slot, std::uint32_t tag) {
  if (chunk_ != 0) {
    const Entry e{now.min, now.max, slot, tag};
    const std::uint32_t at = segs_[cell].locate(old.min[0], slot);
    if (!(old.min[0] < now.min[0])) {
      segs_[cell].slide_left(at, e);  // multi-sap's cover of old and new box
    } else {
      segs_[cell].erase_at(at);
      segs_[cell].insert(e);
    }
    cells_[cell].max_width = std::max(cells_[cell].max_width, width(e));
    return;
  }
  Cell& c = cells_[cell];
  std::size_t i = position_of(c, old.min[0], slot);
  const Entry e{now.min, now.max, slot, tag};
  Entry* x = c.entries.data();
  // Slide to the new place: past greater keys to the left, smaller ones to
  // the right (the insertion sort of one element; movers move little).
  while (i > 0 && x[i - 1].min[0] > e.min[0]) x[i] = x[i - 1], --i;
  while (i + 1 < c.entries.size() && x[i + 1].min[0] < e.min[0]) x[i] = x[i + 1], ++i;
  x[i] = e;
  c.max_width = std::max(c.max_width, width(e));
}

void CellGrid::slide_right(std::uint32_t cell, std::uint32_t at, const Box3& now) noexcept {
  if (chunk_ != 0) {
    segs_[cell].slide_right(at, now);
    cells_[cell].max_width = std::max(cells_[cell].max_width, width(Entry{now.min, now.max, 0, 0}));
    return;
  }
  Cell& c = cells_[cell];
  const Entry e{now.min, now.max, c.entries[at].slot, 0};
  Entry* x = c.entries.data();
  std::size_t i = at;
  while (i + 1 < c.entries.size() && x[i + 1].min[0] < e.min[0]) x[i] = x[i + 1], ++i;
  x[i] = e;
  c.max_width = std::max(c.max_width, width(e));
}

void CellGrid::append(std::uint32_t cell, const Box3& b, Slot slot, std::uint32_t tag, std::size_t more) {
  if (chunk_ != 0) return insert(cell, b, slot, tag);  // bounded: no batch needed
  detail::reserve_geometric(cells_[cell].entries, cells_[cell].entries.size() + more);
  cells_[cell].entries.push_back(Entry{b.min, b.max, slot, tag});
}

void CellGrid::settle(std::uint32_t cell, std::size_t arrivals) {
  if (chunk_ != 0) {  // in order already: neighbours merged, max_width tightened
    segs_[cell].tidy();
    cells_[cell].max_width = 0;
    segs_[cell].for_each([&](const Entry& e) { cells_[cell].max_width = std::max(cells_[cell].max_width, width(e)); });
    return;
  }
  Cell& c = cells_[cell];
  std::vector<Entry>& v = c.entries;
  c.max_width = 0;
  std::size_t n = 0;
  for (const Entry& e : v) {
    if (e.slot == kGone) continue;
    v[n++] = e;
    c.max_width = std::max(c.max_width, width(e));
  }
  v.resize(n);
  // Ties by slot: the same input gives the same order.
  const auto before = [](const Entry& a, const Entry& b) {
    return a.min[0] < b.min[0] || (a.min[0] == b.min[0] && a.slot < b.slot);
  };
  if (arrivals > kSortArrivals) {
    std::sort(v.begin(), v.end(), before);
    return;
  }
  for (std::size_t i = 1; i < n; ++i) {
    if (!before(v[i], v[i - 1])) continue;
    const Entry e = v[i];
    std::size_t j = i;
    for (; j > 0 && before(e, v[j - 1]); --j) v[j] = v[j - 1];
    v[j] = e;
  }
}

void CellGrid::release_if_empty(std::uint32_t cell) {
  Cell& c = cells_[cell];
  if (!c.live || entries(cell) != 0) return;
  index_.erase(key(c.coord, c.gen));
  c.live = false;
  c.max_width = 0;
  --live_;
  ++freed_;
  free_.push_back(cell);
}

void CellGrid::trim() {
  if (freed_ > 64 + live_ / 4) {
    // Rays walk the extent: made tight again once many cells are gone (a
    // drifting world), at O(cells) per a quarter of them freed.
    freed_ = 0;
    extent_[0] = extent_[1] = kNoExtent;
    for (const Cell& c : cells_) {
      if (c.live) grow_extent(c.coord, c.gen);
    }
  }
  if (live_ == 0) {
    extent_[0] = extent_[1] = kNoExtent;
    freed_ = 0;
    detail::free_storage(cells_);
    detail::free_storage(segs_);
    detail::free_storage(free_);
    index_ = detail::HashIndex{};
    return;
  }
  if (cells_.size() > 2 * kKeptFreeCells && live_ * 8 < cells_.size()) {
    // Most cells emptied (a mass removal): the live ones are renumbered into
    // a fresh array and index. Cell ids live only within a frame.
    std::vector<Cell> kept;
    std::vector<SegmentedCell<Entry>> kept_segs;
    kept.reserve(live_);
    for (std::size_t i = 0; i < cells_.size(); ++i) {
      if (!cells_[i].live) continue;
      kept.push_back(std::move(cells_[i]));
      if (chunk_ != 0) kept_segs.push_back(std::move(segs_[i]));
    }
    cells_.swap(kept);
    segs_.swap(kept_segs);
    detail::free_storage(free_);
    index_ = detail::HashIndex{};  // reset() would keep the old table's storage
    index_.reserve(cells_.size());
    for (std::uint32_t i = 0; i < cells_.size(); ++i) index_.insert(key(cells_[i].coord, cells_[i].gen), i);
    return;
  }
  const std::size_t keep = kKeptFreeCells + live_ / 4;
  for (std::size_t i = keep; i < free_.size(); ++i) {
    detail::free_storage(cells_[free_[i]].entries);
    if (chunk_ != 0) segs_[free_[i]].release();
  }
}

std::size_t CellGrid::memory_bytes() const noexcept {
  std::size_t bytes =
      cells_.capacity() * sizeof(Cell) + free_.capacity() * sizeof(std::uint32_t) + index_.memory_bytes();
  for (const Cell& c : cells_) bytes += c.entries.capacity() * sizeof(Entry);
  for (const SegmentedCell<Entry>& s : segs_) bytes += sizeof(s) + s.memory_bytes();
  return bytes;
}

}  // namespace sapling::detail
