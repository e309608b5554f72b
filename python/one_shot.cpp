// The one-shot queries: every overlapping pair of one set of boxes
// (complete_pairs, BoxPruner.complete, unisize_pairs) or between two
// (bipartite_pairs, BoxPruner.bipartite, and a set prepared once for many
// queries), as (k, 2) uint32 index arrays that own the library's output.
// The boxes are checked (and 2D ones lifted to 3D) before the pruner runs;
// the work runs without the GIL, a pool per pruner when threads > 1.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
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
