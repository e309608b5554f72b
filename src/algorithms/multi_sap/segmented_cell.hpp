// One cell of multi-sap's grid kept as a segmented interval list (Tracy,
// Buss and Woods 2009, section 3.2.2), for multi-sap's cells=segmented: the
// cell's entries, sorted by min x, lie in a sequence of small arrays
// ("chunks") of at most `capacity` entries, listed in order by `order_` (the
// paper's array of pointers, binary searched), so that an insertion or an
// erasure shifts the entries of one chunk, never the whole cell.
//
// In place of the paper's checkpoint sets (the objects spanning a chunk's
// edge), each chunk keeps its reach, the largest max x of its entries: a
// query skips every chunk whose intervals all end before it begins, so that
// one wide box slows the scan of its own chunk only (a sorted cell bounds
// its scan by its widest entry). The cell holds one entry per box, not two
// endpoints; multi-sap queries it per change instead of sorting it.
//
// An entry's address is rank * capacity + index: its chunk's place in the
// order, then its place in the chunk. Addresses are compared as the list
// order; slide_right() and erase_at() move only entries at larger addresses
// (a chunk they empty leaves the order, a later one), so that a batch of
// them applied from the largest address down finds every address it holds
// valid. insert() may split a chunk and tidy() merges small neighbours: both
// renumber, so no address is held across them.
//
// Invariants (valid()): every chunk in the order holds 1 to capacity
// entries; the entries increase by min x along the order; each chunk's
// reach bounds its entries' max x from above; rank_of_ inverts order_;
// size_ counts the entries. Free chunks are in free_ only.
//
// Cost, for m entries: insertion O(log(m / capacity) + capacity), plus
// O(m / capacity) to renumber after a split; erasure O(capacity); a query
// O(m / capacity) chunk heads plus the entries of the chunks it reaches.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "sapling/algorithm.hpp"
#include "sapling/box.hpp"

namespace sapling::detail {

/// A cell of entries (min, max, slot, tag, as CellGrid::Entry) kept as the
/// segmented list described above.
template <class Entry>
class SegmentedCell {
 public:
  /// An empty cell of chunks of `capacity` (at least 2) entries.
  explicit SegmentedCell(std::uint32_t capacity) noexcept : capacity_(std::max<std::uint32_t>(2, capacity)) {}

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::uint32_t capacity() const noexcept { return capacity_; }

  /// The address of an entry handed out by query() or for_each().
  std::uint32_t address_of(const Entry& e) const noexcept {
    const auto p = static_cast<std::uint32_t>(&e - pool_.data());
    return rank_of_[p / capacity_] * capacity_ + p % capacity_;
  }
  Entry& at(std::uint32_t address) noexcept {
    return pool_[std::size_t{order_[address / capacity_]} * capacity_ + address % capacity_];
  }

  /// Enters `e` after the entries of equal min x: the chunk found by binary
  /// search over the order, split first when full.
  void insert(const Entry& e) {
    const float key = e.min[0];
    const bool first = order_.empty();
    if (first) {
      order_.push_back(new_chunk());
      renumber(0);
    }
    // The first chunk whose last entry comes after `key`, else the last.
    std::size_t lo = 0, n = first ? 0 : order_.size();
    while (n > 0) {
      const std::size_t half = n / 2;
      if (!(key < last_min(order_[lo + half]))) {
        lo += half + 1;
        n -= half + 1;
      } else {
        n = half;
      }
    }
    std::size_t r = std::min(lo, order_.size() - 1);
    if (chunks_[order_[r]].count == capacity_) {
      split(r);
      if (!(key < data(order_[r + 1])[0].min[0])) ++r;
    }
    const std::uint32_t c = order_[r];
    Entry* d = data(c);
    std::uint32_t i = chunks_[c].count;
    for (; i > 0 && key < d[i - 1].min[0]; --i) d[i] = d[i - 1];  // insertion sort in the chunk
    d[i] = e;
    ++chunks_[c].count;
    chunks_[c].reach = std::max(chunks_[c].reach, e.max[0]);
    ++size_;
  }

  /// The address of the entry of `slot`, whose min x is `min_x`: the first
  /// entry at `min_x` by binary search, then the equal keys after it.
  std::uint32_t locate(float min_x, Slot slot) const noexcept {
    std::size_t r = 0, n = order_.size();
    while (n > 0) {  // the first chunk whose last entry is not before min_x
      const std::size_t half = n / 2;
      if (last_min(order_[r + half]) < min_x) {
        r += half + 1;
        n -= half + 1;
      } else {
        n = half;
      }
    }
    const Entry* d = data(order_[r]);
    std::uint32_t i = static_cast<std::uint32_t>(
        std::lower_bound(d, d + chunks_[order_[r]].count, min_x, [](const Entry& x, float v) { return x.min[0] < v; }) -
        d);
    for (;;) {
      if (i == chunks_[order_[r]].count) {
        ++r;
        i = 0;
        d = data(order_[r]);
      }
      if (d[i].slot == slot) return static_cast<std::uint32_t>(r) * capacity_ + i;
      ++i;
    }
  }

  /// Takes out the entry at `address`; a chunk it empties leaves the order.
  void erase_at(std::uint32_t address) noexcept {
    const std::size_t r = address / capacity_;
    const std::uint32_t c = order_[r];
    Entry* d = data(c);
    const float gone = d[address % capacity_].max[0];
    const std::uint32_t count = --chunks_[c].count;
    std::copy(d + address % capacity_ + 1, d + count + 1, d + address % capacity_);
    --size_;
    if (count == 0) {
      order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(r));
      free_.push_back(c);
      renumber(r);
    } else if (!(gone < chunks_[c].reach)) {
      set_reach(c);  // it may have been the farthest
    }
  }

  /// The entry at `address` becomes `e`, whose min x is not above its old
  /// one: it moves left past the greater keys, across a chunk edge by
  /// exchange with the previous chunk's last entry.
  void slide_left(std::uint32_t address, const Entry& e) noexcept {
    std::size_t r = address / capacity_;
    std::uint32_t c = order_[r], i = address % capacity_;
    Entry* d = data(c);
    for (;;) {
      while (i > 0 && e.min[0] < d[i - 1].min[0]) d[i] = d[i - 1], --i;
      if (i > 0 || r == 0) break;
      const std::uint32_t previous = order_[r - 1];
      const Entry& other = data(previous)[chunks_[previous].count - 1];
      if (!(e.min[0] < other.min[0])) break;
      d[0] = other;  // previous's last entry goes over the edge
      chunks_[c].reach = std::max(chunks_[c].reach, other.max[0]);
      c = previous, d = data(c), i = chunks_[c].count - 1, --r;
    }
    d[i] = e;
    chunks_[c].reach = std::max(chunks_[c].reach, e.max[0]);  // the chunk left keeps a reach that is merely loose
  }

  /// The entry at `address` takes box `now`, whose min x is not below its
  /// old one, and its tag is cleared: it moves right past the smaller keys,
  /// across a chunk edge by exchange with the next chunk's first entry, so
  /// that no chunk's count changes (the paper's local sort).
  void slide_right(std::uint32_t address, const Box3& now) noexcept {
    std::size_t r = address / capacity_;
    const std::uint32_t start = order_[r];
    std::uint32_t c = start, i = address % capacity_;
    Entry* d = data(c);
    Entry moving = d[i];
    const float old_max = moving.max[0];
    moving.min = now.min, moving.max = now.max, moving.tag = 0;
    for (;;) {
      const std::uint32_t count = chunks_[c].count;
      while (i + 1 < count && d[i + 1].min[0] < moving.min[0]) d[i] = d[i + 1], ++i;
      if (i + 1 < count || r + 1 == order_.size()) break;
      const std::uint32_t next = order_[r + 1];
      if (!(data(next)[0].min[0] < moving.min[0])) break;
      d[i] = data(next)[0];  // next's first entry comes back over the edge
      chunks_[c].reach = std::max(chunks_[c].reach, d[i].max[0]);
      c = next, d = data(c), i = 0, ++r;
    }
    d[i] = moving;
    // Reaches stay upper bounds as entries arrive; the chunk the old box
    // left is tightened when that box may have been its farthest.
    chunks_[c].reach = std::max(chunks_[c].reach, moving.max[0]);
    if (!(old_max < chunks_[start].reach)) set_reach(start);
  }

  /// Merges neighbouring chunks that together fill at most half of one (the
  /// paper's merge against fragmentation), after a batch of erasures.
  void tidy() {
    bool merged = false;
    for (std::size_t r = 0; r + 1 < order_.size();) {
      const std::uint32_t a = order_[r], b = order_[r + 1];
      if (chunks_[a].count + chunks_[b].count > capacity_ / 2) {
        ++r;
        continue;
      }
      std::copy(data(b), data(b) + chunks_[b].count, data(a) + chunks_[a].count);
      chunks_[a].count += chunks_[b].count;
      chunks_[a].reach = std::max(chunks_[a].reach, chunks_[b].reach);
      chunks_[b].count = 0;
      order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(r + 1));
      free_.push_back(b);
      merged = true;
    }
    if (merged) renumber(0);
  }

  /// Calls hit(entry) for every entry whose box overlaps `b` (closed), in
  /// the list's order, given that no entry of min x below `from` does: the
  /// walk starts at the first min x at or above `from` (binary search over
  /// the order, then in the chunk), skips chunks whose reach ends before b
  /// and stops at the first min x past b.
  template <class Hit>
  void query(const Box3& b, double from, Hit&& hit) const {
    std::size_t r = 0, n = order_.size();
    while (n > 0) {  // the first chunk whose last entry is not below `from`
      const std::size_t half = n / 2;
      if (last_min(order_[r + half]) < from) {
        r += half + 1;
        n -= half + 1;
      } else {
        n = half;
      }
    }
    for (std::uint32_t start = 0; r < order_.size(); ++r, start = 0) {
      const std::uint32_t c = order_[r];
      const Entry* d = data(c);
      if (d[0].min[0] > b.max[0]) return;
      if (chunks_[c].reach < b.min[0]) continue;
      const std::uint32_t count = chunks_[c].count;
      if (d[0].min[0] < from) {
        start = static_cast<std::uint32_t>(
            std::lower_bound(d, d + count, from, [](const Entry& x, double v) { return x.min[0] < v; }) - d);
      }
      for (std::uint32_t i = start; i < count; ++i) {
        const Entry& x = d[i];
        if (x.min[0] > b.max[0]) return;
        // Every test evaluated (no branch per axis): ints, as a bitwise & of bools.
        const int hit_x = int(b.min[0] <= x.max[0]) & int(x.min[1] <= b.max[1]) & int(b.min[1] <= x.max[1]) &
                          int(x.min[2] <= b.max[2]) & int(b.min[2] <= x.max[2]);
        if (hit_x != 0) hit(x);
      }
    }
  }
  /// Calls each(entry) for every entry, in order.
  template <class Each>
  void for_each(Each&& each) const {
    for (const std::uint32_t c : order_) {
      for (std::uint32_t i = 0; i < chunks_[c].count; ++i) each(data(c)[i]);
    }
  }

  /// Hints that the cell comes next: its first chunks (reading the order).
  void prefetch() const noexcept {
    // A fixed count with a test inside: GCC 12 at -O3 drops a loop of
    // prefetches bounded by the size (with any prefetch beside it).
    const std::size_t n = order_.size();
    for (std::size_t r = 0; r < 8; ++r) {
      if (r < n) __builtin_prefetch(data(order_[r]));
    }
  }
  /// Gives the storage back (the cell must be empty).
  void release() noexcept { *this = SegmentedCell(capacity_); }
  std::size_t memory_bytes() const noexcept {
    return pool_.capacity() * sizeof(Entry) + chunks_.capacity() * sizeof(Chunk) +
           (order_.capacity() + rank_of_.capacity() + free_.capacity()) * sizeof(std::uint32_t);
  }
  /// Checks the invariants in the file opening.
  bool valid() const {
    std::size_t seen = 0;
    const Entry* previous = nullptr;
    for (std::size_t r = 0; r < order_.size(); ++r) {
      const std::uint32_t c = order_[r];
      if (rank_of_[c] != r || chunks_[c].count == 0 || chunks_[c].count > capacity_) return false;
      for (std::uint32_t i = 0; i < chunks_[c].count; ++i) {
        const Entry& e = data(c)[i];
        if ((previous != nullptr && previous->min[0] > e.min[0]) || !(e.max[0] <= chunks_[c].reach)) return false;
        previous = &e;
      }
      seen += chunks_[c].count;
    }
    return seen == size_ && order_.size() + free_.size() == chunks_.size();
  }

 private:
  struct Chunk {
    std::uint32_t count = 0;
    float reach = -std::numeric_limits<float>::infinity();  // >= every entry's max x
  };

  Entry* data(std::uint32_t c) noexcept { return pool_.data() + std::size_t{c} * capacity_; }
  const Entry* data(std::uint32_t c) const noexcept { return pool_.data() + std::size_t{c} * capacity_; }
  float last_min(std::uint32_t c) const noexcept { return data(c)[chunks_[c].count - 1].min[0]; }
  void set_reach(std::uint32_t c) noexcept {
    float reach = -std::numeric_limits<float>::infinity();
    for (std::uint32_t i = 0; i < chunks_[c].count; ++i) reach = std::max(reach, data(c)[i].max[0]);
    chunks_[c].reach = reach;
  }
  std::uint32_t new_chunk() {
    if (!free_.empty()) {
      const std::uint32_t c = free_.back();
      free_.pop_back();
      chunks_[c] = Chunk{};
      return c;
    }
    const auto c = static_cast<std::uint32_t>(chunks_.size());
    chunks_.push_back(Chunk{});
    rank_of_.push_back(0);
    pool_.resize(pool_.size() + capacity_);
    return c;
  }
  // The upper half of the full chunk at rank r goes to a new chunk after it.
  void split(std::size_t r) {
    const std::uint32_t right = new_chunk(), left = order_[r];  // new_chunk() may move the pool
    const std::uint32_t keep = capacity_ / 2;
    std::copy(data(left) + keep, data(left) + capacity_, data(right));
    chunks_[right].count = capacity_ - keep;
    chunks_[left].count = keep;
    set_reach(left);
    set_reach(right);
    order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(r + 1), right);
    renumber(r + 1);
  }
  void renumber(std::size_t from) noexcept {
    for (std::size_t r = from; r < order_.size(); ++r) rank_of_[order_[r]] = static_cast<std::uint32_t>(r);
  }

  std::uint32_t capacity_;
  std::vector<Entry> pool_;             // chunk c's entries at [c * capacity_, + count)
  std::vector<Chunk> chunks_;           // by chunk
  std::vector<std::uint32_t> order_;    // the chunks in list order
  std::vector<std::uint32_t> rank_of_;  // by chunk: its place in order_
  std::vector<std::uint32_t> free_;     // chunks out of the order, for reuse
  std::size_t size_ = 0;
};

}  // namespace sapling::detail
