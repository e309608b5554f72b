// The one-shot queries: every overlapping pair of one set of boxes
// (complete_pairs, BoxPruner.complete, unisize_pairs) or between two
// (bipartite_pairs, BoxPruner.bipartite, and a set prepared once for many
// queries), as (k, 2) uint32 index arrays that own the library's output.
// The boxes are checked (and 2D ones lifted to 3D) before the pruner runs;
// the work runs without the GIL, a pool per pruner when threads > 1. Also
// sapling.dask's private helpers (_split_boxes, _cell_pairs, _merge_pairs):
// a chunk split into spatial cells, a cell's pairs kept by the reference-point
// rule with global indices, and sorted runs of pairs merged.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <utility>
#include <vector>

#include "binding.hpp"
#include "sapling/box_pruning.hpp"
#include "sapling/unisize.hpp"

namespace sapling::python {
namespace {

// True when every box has min <= max on every axis (which NaN fails): one
// branch-free pass.
template <int D>
bool all_valid(std::span<const Box<D>> boxes) {
  unsigned valid = 1;
  for (const Box<D>& b : boxes) {
    for (int k = 0; k < D; ++k) valid &= static_cast<unsigned>(b.min[k] <= b.max[k]);
  }
  return valid != 0;
}

// Refuses the first invalid box of a one-shot query, naming it by index. The
// fast pass runs in parallel chunks on `tasks` when given; the per-box check
// runs only to name a fault.
template <int D>
void check_boxes(std::span<const Box<D>> boxes, TaskSystem* tasks) {
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  bool valid = true;
  if (tasks != nullptr && tasks->concurrency() > 1 && boxes.size() > kChunk) {
    const std::size_t chunks = (boxes.size() + kChunk - 1) / kChunk;
    std::vector<unsigned char> chunk_valid(chunks);
    auto task = [&](std::size_t t) {
      chunk_valid[t] = all_valid(boxes.subspan(t * kChunk, std::min(kChunk, boxes.size() - t * kChunk)));
    };
    tasks->run(chunks, task);
    for (const unsigned char v : chunk_valid) valid = valid && v != 0;
  } else {
    valid = all_valid(boxes);
  }
  if (valid) return;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (const BoxCheck c = check_box(boxes[i]); !c) {
      throw StatusError{Status::invalid_box(Operation::kNone, 0, i, c), ""};
    }
  }
}

// The boxes of a one-shot query as Box3, checked: 3D boxes in place, 2D ones
// lifted to z = [0, 0] into `lifted`.
std::span<const Box3> checked_box3(const Boxes& boxes, std::vector<Box3>& lifted, TaskSystem* tasks = nullptr) {
  if (boxes.dims == 2) {
    const auto b2 = boxes.box2();
    check_boxes(b2, tasks);
    lifted.resize(b2.size());
    for (std::size_t i = 0; i < b2.size(); ++i) lifted[i] = lift(b2[i]);
    return lifted;
  }
  check_boxes(boxes.box3(), tasks);
  return boxes.box3();
}

class PyBoxPruner {
 public:
  explicit PyBoxPruner(py::handle threads) : PyBoxPruner(as_threads(threads)) {}
  explicit PyBoxPruner(unsigned threads) : pool_(make_pool(threads)), pruner_(pool_.get()) {}

  py::array_t<std::uint32_t> complete(py::handle boxes_obj) {
    const Boxes boxes = as_boxes(boxes_obj, 0, "boxes");
    std::vector<IndexPair> out;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      std::vector<Box3> lifted;
      pruner_.complete(checked_box3(boxes, lifted, pool_.get()), out);
    }
    return take_pairs(std::move(out));
  }

  py::array_t<std::uint32_t> bipartite(py::handle a_obj, py::handle b_obj) {
    const Boxes a = as_boxes(a_obj, 0, "a");
    const Boxes b = as_boxes(b_obj, a.dims, "b");
    std::vector<IndexPair> out;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      std::vector<Box3> lifted_a, lifted_b;
      const auto span_a = checked_box3(a, lifted_a, pool_.get());
      const auto span_b = checked_box3(b, lifted_b, pool_.get());
      pruner_.bipartite(span_a, span_b, out);
    }
    return take_pairs(std::move(out));
  }

  py::object prepare(py::handle boxes_obj, bool pairs) {
    const Boxes boxes = as_boxes(boxes_obj, 0, "boxes");
    std::vector<IndexPair> out;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      std::vector<Box3> lifted;
      const auto span = checked_box3(boxes, lifted, pool_.get());
      if (pairs) {
        pruner_.prepare(span, out);
      } else {
        pruner_.prepare(span);
      }
      prepared_dims_ = boxes.dims;
    }
    if (!pairs) return py::none();
    return take_pairs(std::move(out));
  }

  py::object bipartite_prepared(py::handle query_obj) {
    if (prepared_dims_ == 0) refuse("bipartite_prepared: no set prepared (call prepare(boxes) first)");
    const Boxes query = as_boxes(query_obj, prepared_dims_, "query");
    std::vector<IndexPair> out;
    bool done = false;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      std::vector<Box3> lifted;
      done = pruner_.bipartite_prepared(checked_box3(query, lifted, pool_.get()), out);
    }
    if (!done) return py::none();
    return take_pairs(std::move(out));
  }

  std::size_t prepared_size() {
    py::gil_scoped_release release;
    std::lock_guard lock(mutex_);
    return pruner_.prepared_size();
  }
  std::size_t memory_bytes() {
    py::gil_scoped_release release;
    std::lock_guard lock(mutex_);
    return pruner_.memory_bytes();
  }

 private:
  std::unique_ptr<ThreadPool> pool_;
  BoxPruner pruner_;
  int prepared_dims_ = 0;
  std::mutex mutex_;
};

// complete_pairs() and bipartite_pairs(): on one thread, the library's free
// functions (a warm pruner per thread); on more, a pool and a pruner per call.
py::array_t<std::uint32_t> one_shot_complete(py::handle boxes_obj, py::handle threads_obj) {
  const unsigned threads = as_threads(threads_obj);
  if (threads != 1) return PyBoxPruner(threads).complete(boxes_obj);
  const Boxes boxes = as_boxes(boxes_obj, 0, "boxes");
  std::vector<IndexPair> out;
  {
    py::gil_scoped_release release;
    std::vector<Box3> lifted;
    complete_pairs(checked_box3(boxes, lifted), out);
  }
  return take_pairs(std::move(out));
}

py::array_t<std::uint32_t> one_shot_bipartite(py::handle a_obj, py::handle b_obj, py::handle threads_obj) {
  const unsigned threads = as_threads(threads_obj);
  if (threads != 1) return PyBoxPruner(threads).bipartite(a_obj, b_obj);
  const Boxes a = as_boxes(a_obj, 0, "a");
  const Boxes b = as_boxes(b_obj, a.dims, "b");
  std::vector<IndexPair> out;
  {
    py::gil_scoped_release release;
    std::vector<Box3> lifted_a, lifted_b;
    const auto span_a = checked_box3(a, lifted_a);
    const auto span_b = checked_box3(b, lifted_b);
    bipartite_pairs(span_a, span_b, out);
  }
  return take_pairs(std::move(out));
}

class PyUnisizePruner {
 public:
  explicit PyUnisizePruner(py::handle threads) : PyUnisizePruner(as_threads(threads)) {}
  explicit PyUnisizePruner(unsigned threads) : pool_(make_pool(threads)), pruner_(pool_.get()) {}

  py::array_t<std::uint32_t> complete(py::handle boxes_obj) {
    const Boxes boxes = as_boxes(boxes_obj, 0, "boxes");
    std::vector<IndexPair> out;
    Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      std::vector<Box3> lifted;
      s = pruner_.complete(checked_box3(boxes, lifted, pool_.get()), out);
    }
    check(s);
    return take_pairs(std::move(out));
  }

 private:
  std::unique_ptr<ThreadPool> pool_;
  UnisizePruner pruner_;
  std::mutex mutex_;
};

// ---- sapling.dask's cell work (python/sapling/dask.py) ----------------------

// Bit k of box r: it starts below the cell's lower border on axis k (never,
// where that border is -inf).
std::vector<std::uint8_t> starts_below(const Boxes& boxes, const std::array<float, 3>& cell_lo) {
  std::vector<std::uint8_t> bits(boxes.n);
  const auto width = static_cast<std::size_t>(2 * boxes.dims);
  for (std::size_t r = 0; r < boxes.n; ++r) {
    const float* row = boxes.data + r * width;
    unsigned b = 0;
    for (int k = 0; k < boxes.dims; ++k) b |= static_cast<unsigned>(row[k] < cell_lo[static_cast<std::size_t>(k)]) << k;
    bits[r] = static_cast<std::uint8_t>(b);
  }
  return bits;
}

// sapling.dask's buffers: an allocator whose resize() leaves new values unset
// (the code writes every slot it keeps), and whose large buffers ask for
// transparent huge pages, as numpy does for its arrays: a fresh buffer then
// faults a page per 2 MiB, not per 4 KiB. Dask's workers return freed memory
// to the system at once (MALLOC_TRIM_THRESHOLD_), so every task's buffers are
// fresh pages.
template <class T>
struct UnsetAllocator : std::allocator<T> {
  static constexpr std::size_t kHugePage = std::size_t{1} << 21;
  template <class U>
  struct rebind {
    using other = UnsetAllocator<U>;
  };
  UnsetAllocator() = default;
  template <class U>
  explicit UnsetAllocator(const UnsetAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = n * sizeof(T);
    if (bytes < 2 * kHugePage) return std::allocator<T>::allocate(n);
    void* p = std::aligned_alloc(kHugePage, (bytes + kHugePage - 1) / kHugePage * kHugePage);
    if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
    madvise(p, bytes, MADV_HUGEPAGE);  // advice only: ignored where huge pages are off
#endif
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) {
    if (n * sizeof(T) < 2 * kHugePage) {
      std::allocator<T>::deallocate(p, n);
    } else {
      std::free(p);
    }
  }
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T>
using UnsetVector = std::vector<T, UnsetAllocator<T>>;

// Sorts pairs of local indices by i, then j: a least-significant-digit radix
// sort on i (i < n_first, 11 bits a pass: two passes up to 2^22 boxes), stable,
// then each run of one i by j, in place (runs are short: a few pairs a box).
void sort_local_pairs(std::vector<IndexPair>& pairs, std::size_t n_first) {
  constexpr int kDigit = 11;
  constexpr std::uint32_t kMask = (1u << kDigit) - 1;
  const int bits = n_first > 1 ? std::bit_width(n_first - 1) : 0;
  if (bits > 0) {
    UnsetVector<IndexPair> buffer(pairs.size());
    IndexPair* from = pairs.data();
    IndexPair* to = buffer.data();
    for (int shift = 0; shift < bits; shift += kDigit) {
      std::array<std::size_t, kMask + 1> next{};
      for (std::size_t r = 0; r < pairs.size(); ++r) ++next[(from[r].i >> shift) & kMask];
      std::size_t sum = 0;
      for (std::size_t& n : next) sum += std::exchange(n, sum);
      for (std::size_t r = 0; r < pairs.size(); ++r) to[next[(from[r].i >> shift) & kMask]++] = from[r];
      std::swap(from, to);
    }
    if (from != pairs.data()) std::copy(from, from + pairs.size(), pairs.data());
  }
  for (std::size_t r = 1; r < pairs.size(); ++r) {
    const IndexPair x = pairs[r];
    std::size_t q = r;
    for (; q > 0 && pairs[q - 1].i == x.i && pairs[q - 1].j > x.j; --q) pairs[q] = pairs[q - 1];
    pairs[q] = x;
  }
}

bool rising(const Ids& ids) {
  for (std::size_t r = 1; r < ids.n; ++r) {
    if (ids.data[r] <= ids.data[r - 1]) return false;
  }
  return true;
}

// One cell's pairs for sapling.dask: the pairs of boxes (or between a and b)
// whose reference point, max(min_i, min_j) per axis, lies at or above the
// cell's lower corner on every axis (a pair is dropped when both boxes start
// below it on one axis), as global indices index_a[i], index_b[j] (rising),
// sorted by i then j when `sort`. b = None: complete pairs of a.
py::array_t<std::uint32_t> cell_pairs(py::handle a_obj, py::handle index_a_obj, py::handle b_obj,
                                      py::handle index_b_obj, py::handle cell_lo_obj, py::handle threads_obj,
                                      bool sort) {
  const unsigned threads = as_threads(threads_obj);
  const bool complete = b_obj.is_none();
  const Boxes a = as_boxes(a_obj, 0, "a");
  const Boxes b = complete ? a : as_boxes(b_obj, a.dims, "b");
  const Ids index_a = as_ids(index_a_obj, "index_a", false);
  const Ids index_b = complete ? index_a : as_ids(index_b_obj, "index_b", false);
  const std::array<float, 3> cell_lo = as_vector(cell_lo_obj, a.dims, "cell_lo");
  if (index_a.n != a.n || index_b.n != b.n) refuse("cell_pairs: one index per box");
  if (!rising(index_a) || !rising(index_b)) refuse("cell_pairs: indices must rise");
  std::vector<IndexPair> out;
  {
    py::gil_scoped_release release;
    std::vector<Box3> lifted_a, lifted_b;
    if (threads == 1) {  // the library's free functions: a warm pruner per thread, as complete_pairs()
      const auto span_a = checked_box3(a, lifted_a);
      if (complete) {
        complete_pairs(span_a, out);
      } else {
        bipartite_pairs(span_a, checked_box3(b, lifted_b), out);
      }
    } else {
      const auto pool = make_pool(threads);
      BoxPruner pruner(pool.get());
      const auto span_a = checked_box3(a, lifted_a, pool.get());
      if (complete) {
        pruner.complete(span_a, out);
      } else {
        pruner.bipartite(span_a, checked_box3(b, lifted_b, pool.get()), out);
      }
    }
    const auto below_a = starts_below(a, cell_lo);
    const auto below_b = complete ? std::vector<std::uint8_t>{} : starts_below(b, cell_lo);
    const std::uint8_t* bits_b = complete ? below_a.data() : below_b.data();
    std::size_t kept = 0;
    for (const IndexPair& p : out) {
      out[kept] = p;
      kept += static_cast<std::size_t>((below_a[p.i] & bits_b[p.j]) == 0);
    }
    out.resize(kept);
    if (sort) sort_local_pairs(out, a.n);
    for (IndexPair& p : out) p = IndexPair{index_a.data[p.i], index_b.data[p.j]};
  }
  return take_pairs(std::move(out));
}

// A vector's values as a numpy array of `shape`, owning them: no copy.
template <class T>
py::array_t<T> take_array(UnsetVector<T>&& values, std::vector<py::ssize_t> shape) {
  auto* owner = new UnsetVector<T>(std::move(values));
  py::capsule free_owner(owner, [](void* p) { delete static_cast<UnsetVector<T>*>(p); });
  return py::array_t<T>(shape, owner->data(), free_owner);
}

template <int D>
struct ChunkSplit {
  std::vector<UnsetVector<std::uint32_t>> indices;
  std::vector<UnsetVector<float>> boxes;
};

// Whether a row meets a cell: max >= lo and min <= top on every axis, where
// top is the float below the cell's hi (min < hi), or +inf for hi = +inf (the
// top cell holds +inf).
template <int D>
bool meets_cell(const float* row, const float* lo, const float* top) {
  bool meets = true;
  for (int k = 0; k < D; ++k) meets &= (row[k] <= top[k]) & (row[D + k] >= lo[k]);
  return meets;
}

// Two passes over the rows per 32 cells: each row's mask of the cells it
// meets (and each cell's count), then each row copied to every cell of its
// mask (mostly one).
template <int D>
ChunkSplit<D> split_rows(const float* rows, std::size_t n, std::uint32_t first_row, const float* lo, const float* hi,
                         std::size_t cells) {
  std::vector<float> top(hi, hi + cells * D);
  for (float& t : top) {
    if (t != std::numeric_limits<float>::infinity()) t = std::nextafter(t, -std::numeric_limits<float>::infinity());
  }
  ChunkSplit<D> out;
  out.indices.resize(cells);
  out.boxes.resize(cells);
  std::vector<std::uint32_t> masks(n);
  for (std::size_t first_cell = 0; first_cell < cells; first_cell += 32) {
    const std::size_t group = std::min<std::size_t>(32, cells - first_cell);
    std::array<std::size_t, 32> count{};
    for (std::size_t r = 0; r < n; ++r) {
      const float* row = rows + r * 2 * D;
      std::uint32_t mask = 0;
      for (std::size_t c = 0; c < group; ++c) {
        const bool meets = meets_cell<D>(row, lo + (first_cell + c) * D, top.data() + (first_cell + c) * D);
        mask |= static_cast<std::uint32_t>(meets) << c;
        count[c] += meets ? 1 : 0;
      }
      masks[r] = mask;
    }
    std::array<std::uint32_t*, 32> next_index{};
    std::array<float*, 32> next_box{};
    for (std::size_t c = 0; c < group; ++c) {
      out.indices[first_cell + c].resize(count[c]);
      out.boxes[first_cell + c].resize(count[c] * 2 * D);
      next_index[c] = out.indices[first_cell + c].data();
      next_box[c] = out.boxes[first_cell + c].data();
    }
    for (std::size_t r = 0; r < n; ++r) {
      for (std::uint32_t mask = masks[r]; mask != 0; mask &= mask - 1) {
        const auto c = static_cast<std::size_t>(std::countr_zero(mask));
        *next_index[c]++ = first_row + static_cast<std::uint32_t>(r);
        std::memcpy(next_box[c], rows + r * 2 * D, sizeof(float) * 2 * D);
        next_box[c] += 2 * D;
      }
    }
  }
  return out;
}

// sapling.dask's split of one chunk: for each cell c, the global rows
// (first_row + r) and the boxes of the chunk's boxes meeting it (min < hi or
// hi = +inf, and max >= lo, on every axis), as a list of (indices, boxes);
// None when a box is invalid (NaN, min > max), for the caller to name it.
py::object split_boxes(py::handle boxes_obj, std::uint64_t first_row, py::handle lo_obj, py::handle hi_obj) {
  const Boxes boxes = as_boxes(boxes_obj, 0, "boxes");
  using Cells = py::array_t<float, py::array::c_style | py::array::forcecast>;
  const Cells lo = Cells::ensure(lo_obj), hi = Cells::ensure(hi_obj);
  if (!lo || !hi || lo.ndim() != 2 || hi.ndim() != 2 || lo.shape(1) != boxes.dims || hi.shape(1) != boxes.dims ||
      lo.shape(0) != hi.shape(0)) {
    refuse("split_boxes: lo and hi must be (cells, dims) arrays of the boxes' dims");
  }
  if (first_row + boxes.n > (std::uint64_t{1} << 32)) refuse("split_boxes: indices are uint32");
  const auto cells = static_cast<std::size_t>(lo.shape(0));
  const auto first = static_cast<std::uint32_t>(first_row);
  ChunkSplit<3> split3;
  ChunkSplit<2> split2;
  bool valid = true;
  {
    py::gil_scoped_release release;
    if (boxes.dims == 2) {
      valid = all_valid(boxes.box2());
      if (valid) split2 = split_rows<2>(boxes.data, boxes.n, first, lo.data(), hi.data(), cells);
    } else {
      valid = all_valid(boxes.box3());
      if (valid) split3 = split_rows<3>(boxes.data, boxes.n, first, lo.data(), hi.data(), cells);
    }
  }
  if (!valid) return py::none();
  auto& indices = boxes.dims == 2 ? split2.indices : split3.indices;
  auto& kept = boxes.dims == 2 ? split2.boxes : split3.boxes;
  py::list out;
  for (std::size_t c = 0; c < cells; ++c) {
    const auto k = static_cast<py::ssize_t>(indices[c].size());
    out.append(py::make_tuple(take_array(std::move(indices[c]), {k}),
                              take_array(std::move(kept[c]), {k, static_cast<py::ssize_t>(2 * boxes.dims)})));
  }
  return out;
}

// Sorted runs of pairs (each by i, then j) merged into one: sapling.dask's
// merge of a row range from every cell.
py::array_t<std::uint32_t> merge_pairs(const py::sequence& runs_obj) {
  std::vector<py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>> runs;
  for (const py::handle r : runs_obj) {
    runs.emplace_back(py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>::ensure(r));
    if (!runs.back() || runs.back().ndim() != 2 || runs.back().shape(1) != 2) refuse("merge_pairs: (k, 2) uint32 runs");
  }
  std::vector<std::span<const IndexPair>> spans;
  for (const auto& r : runs)
    spans.emplace_back(reinterpret_cast<const IndexPair*>(r.data()), static_cast<std::size_t>(r.shape(0)));
  std::vector<IndexPair> out;
  {
    py::gil_scoped_release release;
    const auto less = [](const IndexPair& x, const IndexPair& y) { return x.i < y.i || (x.i == y.i && x.j < y.j); };
    std::vector<std::vector<IndexPair>> merged;  // runs merged two at a time until one is left
    while (spans.size() > 1) {
      std::vector<std::span<const IndexPair>> next;
      std::vector<std::vector<IndexPair>> next_merged;
      next_merged.reserve((spans.size() + 1) / 2);
      for (std::size_t r = 0; r + 1 < spans.size(); r += 2) {
        auto& m = next_merged.emplace_back(spans[r].size() + spans[r + 1].size());
        std::merge(spans[r].begin(), spans[r].end(), spans[r + 1].begin(), spans[r + 1].end(), m.begin(), less);
        next.emplace_back(m);
      }
      if (spans.size() % 2 != 0) {  // the odd run waits a round, kept alive if it was merged
        if (!merged.empty() && spans.back().data() == merged.back().data()) {
          next.emplace_back(next_merged.emplace_back(std::move(merged.back())));
        } else {
          next.push_back(spans.back());
        }
      }
      spans.swap(next);
      merged.swap(next_merged);  // frees the runs merged a round ago, after their last use
    }
    if (!spans.empty()) {
      if (!merged.empty() && spans[0].data() == merged.back().data()) {
        out = std::move(merged.back());
      } else {
        out.assign(spans[0].begin(), spans[0].end());
      }
    }
  }
  return take_pairs(std::move(out));
}

}  // namespace

void bind_one_shot(py::module_& m) {
  py::class_<PyBoxPruner>(m, "BoxPruner", "One-shot box pruning with reusable buffers (and a prepared set).")
      .def(py::init<py::handle>(), py::arg("threads") = 1)
      .def("complete", &PyBoxPruner::complete, py::arg("boxes"),
           "Every overlapping pair (i, j), i < j, of boxes: (k, 2) uint32 indices.")
      .def("bipartite", &PyBoxPruner::bipartite, py::arg("a"), py::arg("b"),
           "Every (i, j) with a[i] overlapping b[j]: (k, 2) uint32 indices.")
      .def("prepare", &PyBoxPruner::prepare, py::arg("boxes"), py::kw_only(), py::arg("pairs") = false,
           "Lays out a set once for bipartite_prepared(); with pairs=True also returns its pairs, as complete() "
           "would, found in the same pass.")
      .def("bipartite_prepared", &PyBoxPruner::bipartite_prepared, py::arg("query"),
           "Every (i, j) with query[i] overlapping prepared box j, or None when the pruner declines "
           "(query boxes far larger than the prepared grid's cells: use bipartite()).")
      .def_property_readonly("prepared_size", &PyBoxPruner::prepared_size)
      .def_property_readonly("memory_bytes", &PyBoxPruner::memory_bytes);

  py::class_<PyUnisizePruner>(m, "UnisizePruner", "The one-shot sweep for boxes all of one size.")
      .def(py::init<py::handle>(), py::arg("threads") = 1)
      .def("complete", &PyUnisizePruner::complete, py::arg("boxes"),
           "Every overlapping pair (i, j), i < j; raises sapling.Error (code 'unsupported') for boxes not all of "
           "one size.");

  m.def(
      "_time_complete_pairs",
      [](py::handle boxes_obj, py::handle threads_obj, int repeats) {
        // For bench/python_bench.py: sapling::complete_pairs (threads = 1,
        // the library's warm pruner) or BoxPruner::complete on one pruner
        // over a pool, timed in C++ with no Python in the timed region;
        // seconds of each repeat.
        const Boxes boxes = as_boxes(boxes_obj, 3, "boxes");
        const auto pool = make_pool(as_threads(threads_obj));
        BoxPruner pruner(pool.get());  // threads > 1: one pruner, warm after the first repeat
        std::vector<double> seconds;
        std::size_t pairs = 0;
        {
          py::gil_scoped_release release;
          for (int r = 0; r < repeats; ++r) {
            std::vector<IndexPair> out;
            const auto start = std::chrono::steady_clock::now();
            if (pool) {
              pruner.complete(boxes.box3(), out);
            } else {
              complete_pairs(boxes.box3(), out);
            }
            seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            pairs = out.size();
          }
        }
        return py::make_tuple(seconds, pairs);
      },
      py::arg("boxes"), py::arg("threads") = 1, py::arg("repeats") = 1);
  m.def("_cell_pairs", &cell_pairs, py::arg("a"), py::arg("index_a"), py::arg("b"), py::arg("index_b"),
        py::arg("cell_lo"), py::arg("threads") = 1, py::arg("sort") = false,
        "sapling.dask's pairs of one cell: the sweep's pairs kept by the reference-point rule, as global indices.");
  m.def("_split_boxes", &split_boxes, py::arg("boxes"), py::arg("first_row"), py::arg("lo"), py::arg("hi"),
        "sapling.dask's split of a chunk into cells: [(indices, boxes)] per cell, or None for an invalid box.");
  m.def("_merge_pairs", &merge_pairs, py::arg("runs"),
        "Sorted (k, 2) uint32 runs merged into one, sorted by i then j.");
  m.def("complete_pairs", &one_shot_complete, py::arg("boxes"), py::arg("threads") = 1,
        "Every overlapping pair (i, j), i < j, of (n, 4) or (n, 6) boxes: (k, 2) uint32 indices.");
  m.def("bipartite_pairs", &one_shot_bipartite, py::arg("a"), py::arg("b"), py::arg("threads") = 1,
        "Every (i, j) with a[i] overlapping b[j]: (k, 2) uint32 indices.");
  m.def(
      "unisize_pairs", [](py::handle boxes, py::handle threads) { return PyUnisizePruner(threads).complete(boxes); },
      py::arg("boxes"), py::arg("threads") = 1,
      "complete_pairs for boxes all of one size (UnisizePruner); raises sapling.Error otherwise.");
}

}  // namespace sapling::python
