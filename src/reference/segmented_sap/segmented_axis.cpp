// The segmented interval list (segmented_axis.hpp teaches the structure).
#include "reference/segmented_sap/segmented_axis.hpp"

#include <algorithm>
#include <unordered_map>

#include "detail/radix_sort.hpp"
#include "detail/reserve.hpp"

namespace sapling::detail {

SegmentedAxis::SegmentedAxis(std::uint32_t chunk_capacity, bool with_checkpoints)
    : capacity_(std::max<std::uint32_t>(chunk_capacity, 2)), with_checkpoints_(with_checkpoints) {}

void SegmentedAxis::reset(std::uint32_t chunk_capacity) {
  const std::size_t slots = place_.size() / 2;
  *this = SegmentedAxis(chunk_capacity, with_checkpoints_);
  place_.resize(2 * slots);
}

void SegmentedAxis::clear(std::uint32_t chunk_capacity) {
  capacity_ = std::max<std::uint32_t>(chunk_capacity, 2);
  entries_.clear();
  meta_.clear();
  free_.clear();  // sets_ stays: new_chunk() empties each set it takes again
  order_.clear();
  firsts_.clear();
  std::fill(place_.begin(), place_.end(), Place{});
  head_ = kNone;
  endpoints_ = 0;
}

// ---------------------------------------------------------------------------
// Checkpoint counts (the paper's add, remove and set R).

void SegmentedAxis::count_up(std::uint32_t c, const Entry& e) {
  const Slot s = owner(e.word);
  std::vector<Slot>& fast = sets_[c].fast;
  const auto it = std::find(fast.begin(), fast.end(), s);
  if (it != fast.end()) {
    *it = fast.back();
    fast.pop_back();
    return;
  }
  sets_[c].slots.push_back(s);
  sets_[c].filters.push_back(e.filter);
}

void SegmentedAxis::count_down(std::uint32_t c, Slot s) {
  CheckpointSets& set = sets_[c];
  const auto it = std::find(set.slots.begin(), set.slots.end(), s);
  if (it != set.slots.end()) {
    const std::size_t k = static_cast<std::size_t>(it - set.slots.begin());
    *it = set.slots.back();
    set.slots.pop_back();
    set.filters[k] = set.filters.back();
    set.filters.pop_back();
    return;
  }
  set.fast.push_back(s);
}

// ---------------------------------------------------------------------------
// Chunks.

std::uint32_t SegmentedAxis::new_chunk() {
  if (!free_.empty()) {
    const std::uint32_t c = free_.back();
    free_.pop_back();
    meta_[c] = {};
    return c;
  }
  const auto c = static_cast<std::uint32_t>(meta_.size());
  reserve_geometric(entries_, (std::size_t{c} + 1) * capacity_);
  entries_.resize((std::size_t{c} + 1) * capacity_);
  meta_.emplace_back();
  if (with_checkpoints_ && sets_.size() > c) {  // kept by clear()
    sets_[c].clear();
  } else if (with_checkpoints_) {
    sets_.emplace_back();
  }
  return c;
}

// The last chunk whose first word is below e (the first chunk if none): a
// branch-free binary search over firsts_, which may be stale, then a walk
// that reads the chunks' real first words on either side (refreshing them)
// until the answer is exact. The binary search reads a dense array instead
// of a chunk's first entry per step, each a cache and TLB miss in a large list.
std::uint32_t SegmentedAxis::find_chunk(Endpoint e) {
  const std::size_t n = order_.size();
  const Endpoint* base = firsts_.data();
  for (std::size_t m = n; m > 1;) {
    const std::size_t half = m / 2;
    __builtin_prefetch(base + (m - half) / 2);  // both places the next step may read
    __builtin_prefetch(base + half + (m - half) / 2);
    base = base[half] < e ? base + half : base;
    m -= half;
  }
  std::size_t r = static_cast<std::size_t>(base - firsts_.data());
  while (r > 0) {
    const Endpoint f = firsts_[r] = first(order_[r]);
    if (f < e) break;
    --r;
  }
  while (r + 1 < n) {
    const Endpoint f = firsts_[r + 1] = first(order_[r + 1]);
    if (f > e) break;
    ++r;
  }
  return order_[r];
}

// Where non-empty chunk c (or the head, empty or not) stands in order_.
std::size_t SegmentedAxis::rank(std::uint32_t c) const {
  if (c == head_) return 0;
  const Endpoint key = first(c);
  return static_cast<std::size_t>(
      std::partition_point(order_.begin(), order_.end(), [&](std::uint32_t x) { return first(x) < key; }) -
      order_.begin());
}

// Splits full chunk c: its upper half moves to a new chunk after it, whose
// checkpoints are c's updated by the half that stays (a min entering, a max
// leaving the span). `skip` is an object half-inserted, entered later.
void SegmentedAxis::split(std::uint32_t c, Slot skip) {
  const std::uint32_t d = new_chunk();
  const std::uint32_t keep = meta_[c].count / 2, moved = meta_[c].count - keep;
  const Entry* const from = data(c) + keep;
  Entry* const to = data(d);
  for (std::uint32_t i = 0; i < moved; ++i) {
    to[i] = from[i];
    set_place(to[i].word, d, i);
  }
  meta_[d].count = moved;
  meta_[c].count = keep;
  meta_[d].prev = c;
  meta_[d].next = meta_[c].next;
  if (meta_[c].next != kNone) meta_[meta_[c].next].prev = d;
  meta_[c].next = d;
  const std::size_t at = rank(c) + 1;
  order_.insert(order_.begin() + static_cast<std::ptrdiff_t>(at), d);
  firsts_.insert(firsts_.begin() + static_cast<std::ptrdiff_t>(at), first(d));
  if (!with_checkpoints_) return;
  sets_[d].slots = sets_[c].slots;
  sets_[d].filters = sets_[c].filters;
  sets_[d].fast = sets_[c].fast;
  const Entry* const kept = data(c);
  for (std::uint32_t i = 0; i < keep; ++i) {
    if (owner(kept[i].word) == skip) continue;
    if (is_max(kept[i].word)) {
      count_down(d, owner(kept[i].word));
    } else {
      count_up(d, kept[i]);
    }
  }
}

// Appends chunk `right` (next after `left`) to `left` and frees it; the
// merged chunk keeps left's leading edge, so its checkpoints.
void SegmentedAxis::merge(std::uint32_t left, std::uint32_t right) {
  const std::size_t at = rank(left) + 1;
  Entry* const to = data(left);
  const Entry* const from = data(right);
  const std::uint32_t base = meta_[left].count;
  for (std::uint32_t i = 0; i < meta_[right].count; ++i) {
    to[base + i] = from[i];
    set_place(from[i].word, left, base + i);
  }
  meta_[left].count += meta_[right].count;
  meta_[left].next = meta_[right].next;
  if (meta_[right].next != kNone) meta_[meta_[right].next].prev = left;
  order_.erase(order_.begin() + static_cast<std::ptrdiff_t>(at));
  firsts_.erase(firsts_.begin() + static_cast<std::ptrdiff_t>(at));
  meta_[right] = {};
  if (with_checkpoints_) sets_[right].clear();
  free_.push_back(right);
}

// ---------------------------------------------------------------------------
// Insertion and erasure.

// Binary search to the chunk, a split if it is full, then insertion sort from
// the chunk's end.
void SegmentedAxis::insert_entry(const Entry& e, Slot skip) {
  ++endpoints_;
  if (head_ == kNone) {
    head_ = new_chunk();
    order_.push_back(head_);
    firsts_.push_back(e.word);
    data(head_)[0] = e;
    meta_[head_].count = 1;
    set_place(e.word, head_, 0);
    return;
  }
  std::uint32_t c = find_chunk(e.word);
  if (meta_[c].count == capacity_) {
    split(c, skip);
    if (first(meta_[c].next) < e.word) c = meta_[c].next;
  }
  Entry* const d = data(c);
  std::uint32_t i = meta_[c].count++;
  for (; i > 0 && d[i - 1].word > e.word; --i) d[i] = d[i - 1];
  d[i] = e;
  set_place(e.word, c, i);
}

// Removes an endpoint; a chunk left empty, or small enough to fit with a
// neighbour into half a chunk, merges with it.
void SegmentedAxis::erase_endpoint(Slot s, bool max_end) {
  --endpoints_;
  const std::uint32_t c = place_[2 * std::size_t{s} + max_end].chunk;
  const std::uint32_t at = index_of(s, max_end);
  Entry* const d = data(c);
  const std::uint32_t count = --meta_[c].count;
  for (std::uint32_t i = at; i < count; ++i) d[i] = d[i + 1];
  place_[2 * std::size_t{s} + max_end] = {};
  const std::uint32_t next = meta_[c].next, prev = meta_[c].prev;
  if (count == 0) {
    if (prev != kNone) {
      merge(prev, c);
    } else if (next != kNone) {
      merge(c, next);  // c is the head: it takes its neighbour's entries
    } else {           // the only chunk
      order_.clear();
      firsts_.clear();
      free_.push_back(c);
      if (with_checkpoints_) sets_[c].clear();
      head_ = kNone;
    }
    return;
  }
  const std::uint32_t small = capacity_ / 2;
  if (next != kNone && count + meta_[next].count <= small) {
    merge(c, next);
  } else if (prev != kNone && meta_[prev].count + count <= small) {
    merge(prev, c);
  }
}

void SegmentedAxis::insert(Slot s, std::uint32_t min_key, std::uint32_t max_key, Filter filter) {
  if (place_.size() < 2 * (std::size_t{s} + 1)) {
    reserve_geometric(place_, 2 * (std::size_t{s} + 1));
    place_.resize(2 * (std::size_t{s} + 1));
  }
  place_[2 * std::size_t{s}].key = min_key;
  place_[2 * std::size_t{s} + 1].key = max_key;
  const Entry lo{make_endpoint(min_key, false, s), filter};
  insert_entry(lo, s);
  insert_entry({make_endpoint(max_key, true, s), filter}, s);
  if (!with_checkpoints_) return;
  const std::uint32_t last = place_[2 * std::size_t{s} + 1].chunk;
  for (std::uint32_t c = place_[2 * std::size_t{s}].chunk; c != last;) {
    c = meta_[c].next;
    count_up(c, lo);
  }
}

void SegmentedAxis::erase(Slot s) {
  if (with_checkpoints_) {
    const std::uint32_t last = place_[2 * std::size_t{s} + 1].chunk;
    for (std::uint32_t c = place_[2 * std::size_t{s}].chunk; c != last;) {
      c = meta_[c].next;
      count_down(c, s);
    }
  }
  erase_endpoint(s, false);
  erase_endpoint(s, true);
}

void SegmentedAxis::set_checkpoint_filter(Slot s, Filter filter) {
  if (!with_checkpoints_) return;
  const std::uint32_t last = place_[2 * std::size_t{s} + 1].chunk;
  for (std::uint32_t c = place_[2 * std::size_t{s}].chunk; c != last;) {
    c = meta_[c].next;
    CheckpointSets& set = sets_[c];
    const auto it = std::find(set.slots.begin(), set.slots.end(), s);
    if (it != set.slots.end()) set.filters[static_cast<std::size_t>(it - set.slots.begin())] = filter;
  }
}

// The global path (the paper's section 4, for a list built from nothing):
// radix sort the words, fill chunks to 3/4 so that the first insertions do
// not split at once, and give each chunk the objects open at its edge.
void SegmentedAxis::build(std::span<const Slot> slots, std::span<const std::uint32_t> min_keys,
                          std::span<const std::uint32_t> max_keys, std::span<const Filter> filters, bool keep_scratch) {
  if (slots.empty()) return;
  sort_items_.clear();
  Slot top = 0;
  for (const Slot s : slots) {
    sort_items_.push_back({make_endpoint(min_keys[s], false, s), filters[s]});
    sort_items_.push_back({make_endpoint(max_keys[s], true, s), filters[s]});
    top = std::max(top, s);
  }
  if (place_.size() < 2 * (std::size_t{top} + 1)) place_.resize(2 * (std::size_t{top} + 1));
  // 16-bit digits take 4 passes but clear and sum 2^18 counts, which
  // outweighs the sort below ~100k endpoints: 11-bit digits there (6 passes).
  const RadixDigits digits =
      sort_items_.size() < (std::size_t{1} << 17) ? RadixDigits{11, 6, 64} : RadixDigits{16, 4, 64};
  radix_counts_.resize(digits.counts());
  radix_sort(
      sort_items_, sort_scratch_, [](const Entry& e) { return e.word; }, digits, radix_counts_.data());
  const std::uint32_t fill = std::max<std::uint32_t>(1, capacity_ * 3 / 4);
  CheckpointSets& open = sweep_open_;  // the objects open at the sweep (with checkpoints)
  std::vector<std::uint32_t>& open_at = sweep_open_at_;
  open.clear();
  if (with_checkpoints_) open_at.resize(std::size_t{top} + 1);
  std::uint32_t c = kNone;
  for (const Entry& e : sort_items_) {
    if (c == kNone || meta_[c].count == fill) {
      const std::uint32_t d = new_chunk();
      if (c == kNone) {
        head_ = d;
      } else {
        meta_[c].next = d;
        meta_[d].prev = c;
      }
      order_.push_back(d);
      if (with_checkpoints_) {
        sets_[d].slots = open.slots;
        sets_[d].filters = open.filters;
      }
      c = d;
    }
    data(c)[meta_[c].count++] = e;
    place_[2 * std::size_t{owner(e.word)} + is_max(e.word)] = {c, key(e.word), meta_[c].count - 1};
    if (!with_checkpoints_) continue;
    const Slot o = owner(e.word);
    if (!is_max(e.word)) {
      open_at[o] = static_cast<std::uint32_t>(open.slots.size());
      open.slots.push_back(o);
      open.filters.push_back(e.filter);
    } else {
      const std::uint32_t at = open_at[o];
      const Slot last = open.slots.back();
      open.slots[at] = last;
      open.filters[at] = open.filters.back();
      open_at[last] = at;
      open.slots.pop_back();
      open.filters.pop_back();
    }
  }
  for (const std::uint32_t x : order_) firsts_.push_back(first(x));
  endpoints_ = sort_items_.size();
  if (!keep_scratch) give_back_scratch();
}

void SegmentedAxis::give_back_scratch() noexcept {
  free_storage(sort_items_);
  free_storage(sort_scratch_);
  free_storage(radix_counts_);
  free_storage(sweep_open_.slots);
  free_storage(sweep_open_.filters);
  free_storage(sweep_open_at_);
}

// ---------------------------------------------------------------------------

void SegmentedAxis::reserve(std::size_t slots, std::size_t endpoints) {
  if (place_.size() < 2 * slots) place_.resize(2 * slots);
  const std::size_t chunks = endpoints / std::max<std::uint32_t>(1, capacity_ / 2) + 1;
  entries_.reserve(chunks * capacity_);
  meta_.reserve(chunks);
  order_.reserve(chunks);
  firsts_.reserve(chunks);
  free_.reserve(chunks);
  if (with_checkpoints_) sets_.reserve(chunks);
}

// Renumbers the live chunks in order when at least half the chunk pool is
// free, so that their storage can be given back.
void SegmentedAxis::shrink_to_fit(std::size_t slots) {
  if (2 * slots < place_.size()) {
    place_.resize(2 * slots);
    place_.shrink_to_fit();
  }
  if (free_.size() * 2 < meta_.size() + 1) return;
  const std::size_t live = order_.size();
  std::vector<Entry> entries(live * capacity_);
  std::vector<ChunkMeta> meta(live);
  std::vector<CheckpointSets> sets(with_checkpoints_ ? live : 0);
  for (std::uint32_t r = 0; r < live; ++r) {
    const std::uint32_t c = order_[r];
    meta[r].count = meta_[c].count;
    meta[r].prev = r == 0 ? kNone : r - 1;
    meta[r].next = r + 1 == live ? kNone : r + 1;
    std::copy_n(data(c), meta_[c].count, entries.data() + std::size_t{r} * capacity_);
    for (std::uint32_t i = 0; i < meta_[c].count; ++i) set_place(data(c)[i].word, r, i);
    if (with_checkpoints_) sets[r] = std::move(sets_[c]);
  }
  for (std::uint32_t r = 0; r < live; ++r) order_[r] = r;
  entries_.swap(entries);
  meta_.swap(meta);
  sets_.swap(sets);
  free_storage(free_);
  order_.shrink_to_fit();
  firsts_.shrink_to_fit();
  head_ = live == 0 ? kNone : 0;
}

std::size_t SegmentedAxis::memory_bytes() const noexcept {
  std::size_t bytes = entries_.capacity() * sizeof(Entry) + meta_.capacity() * sizeof(ChunkMeta) +
                      sets_.capacity() * sizeof(CheckpointSets) + (free_.capacity() + order_.capacity()) * 4 +
                      firsts_.capacity() * sizeof(Endpoint) + place_.capacity() * sizeof(Place) +
                      (sort_items_.capacity() + sort_scratch_.capacity()) * sizeof(Entry) +
                      radix_counts_.capacity() * 4 + sweep_open_.slots.capacity() * sizeof(Slot) +
                      sweep_open_.filters.capacity() * sizeof(Filter) + sweep_open_at_.capacity() * 4;
  for (const CheckpointSets& s : sets_) {
    bytes += (s.slots.capacity() + s.fast.capacity()) * sizeof(Slot) + s.filters.capacity() * sizeof(Filter);
  }
  return bytes;
}

// Walks the chunks in order with each object's count, [min passed] - [max
// passed], and checks every invariant of the file opening.
bool SegmentedAxis::validate() const {
  if (head_ == kNone) return order_.empty() && firsts_.empty() && endpoints_ == 0;
  if (order_.empty() || order_[0] != head_ || meta_[head_].prev != kNone) return false;
  if (firsts_.size() != order_.size()) return false;
  std::unordered_map<Slot, int> count;
  std::unordered_map<Slot, Entry> min_entry;
  std::size_t seen = 0;
  bool have_last = false;
  Endpoint last = 0;
  std::uint32_t c = head_;
  for (std::size_t r = 0; r < order_.size(); ++r) {
    if (c == kNone || order_[r] != c) return false;
    const ChunkMeta& m = meta_[c];
    if (m.count == 0 || m.count > capacity_) return false;
    if (m.next != kNone && meta_[m.next].prev != c) return false;
    if (with_checkpoints_) {
      std::vector<Slot> spans, fast, have_spans;
      for (const auto& [o, n] : count) {
        if (n == 1) spans.push_back(o);
        if (n == -1) fast.push_back(o);
        if (n < -1 || n > 1) return false;
      }
      const CheckpointSets& set = sets_[c];
      if (set.filters.size() != set.slots.size()) return false;
      for (std::size_t k = 0; k < set.slots.size(); ++k) {
        have_spans.push_back(set.slots[k]);
        const auto it = min_entry.find(set.slots[k]);
        if (it == min_entry.end() || it->second.filter != set.filters[k]) return false;
      }
      std::vector<Slot> have_fast = sets_[c].fast;
      std::sort(spans.begin(), spans.end());
      std::sort(fast.begin(), fast.end());
      std::sort(have_spans.begin(), have_spans.end());
      std::sort(have_fast.begin(), have_fast.end());
      if (spans != have_spans || fast != have_fast) return false;
    }
    for (std::uint32_t i = 0; i < m.count; ++i) {
      const Entry& e = data(c)[i];
      if (have_last && !(last < e.word)) return false;
      have_last = true;
      last = e.word;
      const Place p = place(owner(e.word), is_max(e.word));
      if (p.chunk != c || p.key != key(e.word)) return false;
      if (with_checkpoints_) {
        int& n = count[owner(e.word)];
        n += is_max(e.word) ? -1 : 1;
        if (n == 0) count.erase(owner(e.word));
        if (!is_max(e.word)) min_entry[owner(e.word)] = e;
      }
      ++seen;
    }
    c = m.next;
  }
  if (c != kNone || seen != endpoints_ || !count.empty()) return false;
  std::size_t placed = 0;
  for (const Place& p : place_) placed += p.chunk != kNone;
  return placed == endpoints_;
}

}  // namespace sapling::detail
