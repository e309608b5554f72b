// The module sapling._sapling_mpi (re-exported by python/sapling/mpi.py):
// sapling::mpi::DistributedBroadPhase over an mpi4py communicator, its
// calls taking numpy arrays by the input rules of binding.hpp and raising
// _sapling's sapling.Error by its error rule. The communicator comes from an
// mpi4py MPI.Comm through mpi4py's C API (COMM_WORLD when none is given);
// the broad phase duplicates it. Collective calls (the constructor,
// update, gather, gather_pairs, plan_domains) check their arguments before
// any message, so that a refused call raises on this rank without leaving
// the others waiting where every rank passes the same arguments. The work
// runs without the GIL, one call at a time per object (a mutex).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

// mpi4py's C API: import_mpi4py(), PyMPIComm_Type, PyMPIComm_Get().
#include <mpi4py/mpi4py.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "binding.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/filter.hpp"
#include "sapling/mpi/distributed_broad_phase.hpp"

namespace sapling::python {
namespace {

using mpi::DistributedBroadPhase;

// The MPI_Comm of an mpi4py MPI.Comm (None: COMM_WORLD), or a TypeError.
MPI_Comm as_comm(py::handle obj) {
  py::object comm = py::reinterpret_borrow<py::object>(obj);
  if (comm.is_none()) comm = py::module_::import("mpi4py.MPI").attr("COMM_WORLD");
  if (!PyObject_TypeCheck(comm.ptr(), &PyMPIComm_Type)) {
    throw py::type_error(std::string("comm must be an mpi4py MPI.Comm, not ") + Py_TYPE(comm.ptr())->tp_name);
  }
  MPI_Comm* handle = PyMPIComm_Get(comm.ptr());
  if (handle == nullptr) throw py::error_already_set();
  if (*handle == MPI_COMM_NULL) refuse("comm is MPI.COMM_NULL");
  return *handle;
}

// A box of `dims` as the distributed broad phase takes them: 3D (2D lifted, z = 0).
std::vector<Box3> lifted_boxes(const Boxes& boxes) {
  if (boxes.dims == 3) return {boxes.box3().begin(), boxes.box3().end()};
  std::vector<Box3> out;
  out.reserve(boxes.n);
  for (const Box2& b : boxes.box2()) out.push_back(lift(b));
  return out;
}

// (2 * dims,) float32: a 3D box, or a 2D one dropping z.
py::array_t<float> box_array(const Box3& box, int dims) {
  py::array_t<float> out(2 * dims);
  for (int k = 0; k < dims; ++k) out.mutable_data()[k] = box.min[k], out.mutable_data()[dims + k] = box.max[k];
  return out;
}

class PyDistributedBroadPhase {
  // Runs `f` holding the object's mutex, without the GIL (so that a
  // collective waiting on other ranks never holds it).
  template <class F>
  auto locked(F f) {
    py::gil_scoped_release release;
    std::lock_guard lock(mutex_);
    return f();
  }

 public:
  PyDistributedBroadPhase(py::handle comm_obj, const std::string& algorithm, py::handle dims_obj,
                          py::handle threads_obj) {
    const MPI_Comm comm = as_comm(comm_obj);
    dims_ = as_dims(dims_obj);
    const unsigned threads = as_threads(threads_obj);
    Status why;
    {
      py::gil_scoped_release release;
      broad_phase_ = DistributedBroadPhase::create(comm, algorithm, Options{.dims = dims_, .threads = threads}, &why);
    }
    if (!broad_phase_) {
      check(why, "DistributedBroadPhase('" + algorithm + "', dims=" + std::to_string(dims_) +
                     ", threads=" + std::to_string(threads) + "): ");
    }
  }

  // Filters: none when neither category nor mask is given, else the
  // default for the part not given (BroadPhase.add's rule).
  void add(py::handle ids_obj, py::handle boxes_obj, py::handle category, py::handle mask, bool is_static) {
    const Ids ids = as_ids(ids_obj, "ids");
    const FilterFields fields = as_filter_fields(category, mask, ids.n);
    std::vector<Filter> filters;
    if (fields.given()) filters = fields.filters(std::vector<Filter>(ids.n));
    const Boxes boxes = as_boxes(boxes_obj, dims_, "boxes");
    const Motion motion = is_static ? Motion::kStatic : Motion::kDynamic;
    check(locked([&] {
      return dims_ == 2 ? broad_phase_->add(ids.span(), boxes.box2(), filters, motion)
                        : broad_phase_->add(ids.span(), boxes.box3(), filters, motion);
    }));
  }

  void move(py::handle ids_obj, py::handle boxes_obj) {
    const Ids ids = as_ids(ids_obj, "ids");
    const Boxes boxes = as_boxes(boxes_obj, dims_, "boxes");
    check(locked([&] {
      return dims_ == 2 ? broad_phase_->move(ids.span(), boxes.box2()) : broad_phase_->move(ids.span(), boxes.box3());
    }));
  }

  void remove(py::handle ids_obj) {
    const Ids ids = as_ids(ids_obj, "ids");
    check(locked([&] { return broad_phase_->remove(ids.span()); }));
  }

  // The part of a filter not given keeps the object's current one.
  void set_filter(py::handle ids_obj, py::handle category, py::handle mask) {
    const Ids ids = as_ids(ids_obj, "ids");
    const FilterFields fields = as_filter_fields(category, mask, ids.n);
    check(locked([&] {
      std::vector<Filter> current(ids.n);
      if (!fields.category || !fields.mask) {
        for (std::size_t k = 0; k < ids.n; ++k) current[k] = broad_phase_->filter(ids.data[k]).value_or(Filter{});
      }
      return broad_phase_->set_filter(ids.span(), fields.filters(std::move(current)));
    }));
  }

  // ranks: an integer for every id, or one per id.
  void hand_over(py::handle ids_obj, py::handle ranks_obj) {
    const Ids ids = as_ids(ids_obj, "ids");
    std::vector<int> ranks;
    const auto as_rank = [](std::uint64_t r) {
      if (r > static_cast<std::uint64_t>(INT_MAX)) refuse("rank " + std::to_string(r) + " is out of range");
      return static_cast<int>(r);
    };
    if (is_scalar(ranks_obj)) {
      ranks.assign(ids.n, as_rank(as_uint32(ranks_obj, "rank")));
    } else {
      const Ids per_id = as_ids(ranks_obj, "ranks", false);
      if (per_id.n != ids.n) {
        refuse("ranks must be an integer or hold one value per id (" + std::to_string(ids.n) + "), not " +
               std::to_string(per_id.n));
      }
      for (std::size_t k = 0; k < per_id.n; ++k) ranks.push_back(as_rank(per_id.data[k]));
    }
    check(locked([&] { return broad_phase_->hand_over(ids.span(), ranks); }));
  }

  void drop_staged() {
    locked([&] { broad_phase_->drop_staged(); });
  }

  // Collective: this rank's share of the frame's (created, deleted).
  py::tuple update() {
    std::vector<Pair> created, deleted;
    const Status s = locked([&] {
      const FrameDelta& delta = broad_phase_->update();
      if (delta.status) {
        created.assign(delta.created.begin(), delta.created.end());
        deleted.assign(delta.deleted.begin(), delta.deleted.end());
      }
      return delta.status;
    });
    check(s);
    return py::make_tuple(take_pairs(std::move(created)), take_pairs(std::move(deleted)));
  }

  // Collective: the whole frame's (created, deleted) on `root`, empty elsewhere.
  py::tuple gather(py::handle root_obj) {
    const int root = as_root(root_obj);
    std::vector<Pair> created, deleted;
    locked([&] { broad_phase_->gather(root, created, deleted); });
    return py::make_tuple(take_pairs(std::move(created)), take_pairs(std::move(deleted)));
  }

  py::array_t<std::uint32_t> pairs() {
    std::vector<Pair> out;
    locked([&] { broad_phase_->pairs(out); });
    return take_pairs(std::move(out));
  }

  py::array_t<std::uint32_t> gather_pairs(py::handle root_obj) {
    const int root = as_root(root_obj);
    std::vector<Pair> out;
    locked([&] { broad_phase_->gather_pairs(root, out); });
    return take_pairs(std::move(out));
  }

  // Collective.
  void plan_domains(py::handle boxes_obj) {
    const std::vector<Box3> boxes = lifted_boxes(as_boxes(boxes_obj, dims_, "boxes"));
    locked([&] { broad_phase_->plan_domains(boxes); });
  }

  // One box (2 * dims numbers): an int; boxes (n, 2 * dims): an int32 array.
  py::object domain_rank(py::handle boxes_obj) {
    const py::array a = to_array(boxes_obj, "boxes");
    if (a.ndim() == 1 && a.shape(0) == 2 * dims_) {
      const std::vector<Box3> box = lifted_boxes(as_box(a, dims_, "box"));
      return py::int_(locked([&] { return broad_phase_->domain_rank(box[0]); }));
    }
    const std::vector<Box3> boxes = lifted_boxes(as_boxes(a, dims_, "boxes"));
    py::array_t<std::int32_t> out(static_cast<py::ssize_t>(boxes.size()));
    std::int32_t* dst = out.mutable_data();
    locked([&] {
      for (std::size_t k = 0; k < boxes.size(); ++k) dst[k] = broad_phase_->domain_rank(boxes[k]);
    });
    return out;
  }

  py::array_t<float> domain(py::handle rank_obj) {
    const int r = as_root(rank_obj, "rank");
    return box_array(locked([&] { return broad_phase_->domain(r); }), dims_);
  }

  bool contains(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    return locked([&] { return broad_phase_->contains(id); });
  }

  py::object box(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    const std::optional<Box3> b = locked([&] { return broad_phase_->box(id); });
    if (!b) return py::none();
    return box_array(*b, dims_);
  }

  py::object filter(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    const std::optional<Filter> f = locked([&] { return broad_phase_->filter(id); });
    if (!f) return py::none();
    return py::make_tuple(f->category, f->mask);
  }

  py::object is_static(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    const std::optional<Motion> m = locked([&] { return broad_phase_->motion(id); });
    if (!m) return py::none();
    return py::bool_(*m == Motion::kStatic);
  }

  py::dict stats() {
    const mpi::FrameStats s = locked([&] { return broad_phase_->stats(); });
    py::dict out;
    out["owned"] = s.owned;
    out["held"] = s.held;
    out["records_sent"] = s.records_sent;
    out["bytes_sent"] = s.bytes_sent;
    out["handed_over"] = s.handed_over;
    out["max_held"] = s.max_held;
    out["total_held"] = s.total_held;
    out["ranks"] = s.ranks;
    out["redrawn"] = s.redrawn;
    out["seconds"] = s.seconds;
    out["local_seconds"] = s.local_seconds;
    out["imbalance"] = s.imbalance();
    return out;
  }

  std::size_t size() {
    return locked([&] { return broad_phase_->size(); });
  }
  std::uint64_t frame() {
    return locked([&] { return broad_phase_->frame(); });
  }
  std::size_t memory_bytes() {
    return locked([&] { return broad_phase_->memory_bytes(); });
  }
  int rank() const { return broad_phase_->rank(); }
  int ranks() const { return broad_phase_->ranks(); }
  int dims() const { return dims_; }
  std::string algorithm() const { return std::string(broad_phase_->algorithm_name()); }

  std::string repr() {
    return locked([&] {
      return "<sapling.mpi.DistributedBroadPhase '" + std::string(broad_phase_->algorithm_name()) +
             "' dims=" + std::to_string(dims_) + " rank " + std::to_string(broad_phase_->rank()) + " of " +
             std::to_string(broad_phase_->ranks()) + ": " + std::to_string(broad_phase_->size()) +
             " objects owned, frame " + std::to_string(broad_phase_->frame()) + ">";
    });
  }

 private:
  // A rank of the communicator.
  int as_root(py::handle obj, const char* what = "root") const {
    const int n = broad_phase_->ranks();
    return static_cast<int>(as_unsigned(obj, what, 0, static_cast<std::uint64_t>(n - 1),
                                        "an integer in [0, " + std::to_string(n) + ") (a rank)"));
  }

  std::unique_ptr<DistributedBroadPhase> broad_phase_;
  int dims_ = 3;
  std::mutex mutex_;
};

}  // namespace
}  // namespace sapling::python

PYBIND11_MODULE(_sapling_mpi, m) {
  using namespace sapling;
  using namespace sapling::python;
  m.doc() =
      "sapling.mpi's extension: the distributed broad phase over an mpi4py communicator. Errors follow "
      "sapling._sapling's rule and raise its sapling.Error.";
  if (import_mpi4py() < 0) throw py::error_already_set();
  share_errors(py::module_::import("sapling._sapling"));

  py::class_<PyDistributedBroadPhase>(
      m, "DistributedBroadPhase",
      "The broad phase spread over the ranks of an MPI communicator: each rank stages the objects it owns, "
      "update() is collective (docs/distributed.md).")
      .def(py::init<py::handle, const std::string&, py::handle, py::handle>(), py::arg("comm") = py::none(),
           py::arg("algorithm") = "auto", py::arg("dims") = 3, py::arg("threads") = 1,
           "Collective over comm (an mpi4py MPI.Comm, duplicated; None: MPI.COMM_WORLD): every rank passes the same "
           "algorithm (any but unisize), dims (2 or 3) and threads (of its local broad phase).")
      .def("add", &PyDistributedBroadPhase::add, py::arg("ids"), py::arg("boxes"), py::arg("category") = py::none(),
           py::arg("mask") = py::none(), py::arg("static") = false,
           "Stages objects this rank will own, as BroadPhase.add (ids unique across ranks).")
      .def("move", &PyDistributedBroadPhase::move, py::arg("ids"), py::arg("boxes"),
           "Stages new boxes for objects this rank owns.")
      .def("remove", &PyDistributedBroadPhase::remove, py::arg("ids"), "Stages removals of objects this rank owns.")
      .def("set_filter", &PyDistributedBroadPhase::set_filter, py::arg("ids"), py::arg("category") = py::none(),
           py::arg("mask") = py::none(),
           "Stages new categories and masks for objects this rank owns; the one not given keeps each object's.")
      .def("hand_over", &PyDistributedBroadPhase::hand_over, py::arg("ids"), py::arg("ranks"),
           "After this frame's update(), rank ranks[i] (an integer for all, or one per id) owns ids[i]; no pair "
           "changes.")
      .def("drop_staged", &PyDistributedBroadPhase::drop_staged, "Forgets this rank's staged operations.")
      .def("update", &PyDistributedBroadPhase::update,
           "Collective: applies every rank's staged operations; returns this rank's share of the frame's (created, "
           "deleted), (k, 2) uint32 arrays, a < b, sorted by (a, b). A frame refused on any rank raises "
           "sapling.Error on every rank.")
      .def("gather", &PyDistributedBroadPhase::gather, py::arg("root") = 0,
           "Collective: the last frame's whole (created, deleted), sorted, on rank root; empty on the others.")
      .def("pairs", &PyDistributedBroadPhase::pairs, "This rank's share of the current pairs, (k, 2) uint32, sorted.")
      .def("gather_pairs", &PyDistributedBroadPhase::gather_pairs, py::arg("root") = 0,
           "Collective: every current pair, sorted, on rank root; empty on the others.")
      .def("plan_domains", &PyDistributedBroadPhase::plan_domains, py::arg("boxes"),
           "Collective: draws the domains from the centres of boxes (each rank's own, or a sample).")
      .def("domain_rank", &PyDistributedBroadPhase::domain_rank, py::arg("boxes"),
           "The rank whose domain holds a box's centre: an int for one box (2 * dims numbers), an int32 array for "
           "boxes (n, 2 * dims).")
      .def("domain", &PyDistributedBroadPhase::domain, py::arg("rank"),
           "Rank's domain, (2 * dims,) float32, min then max: [min, max) on each axis.")
      .def("contains", &PyDistributedBroadPhase::contains, py::arg("id"), "Whether this rank owns id.")
      .def("__contains__", &PyDistributedBroadPhase::contains, py::arg("id"))
      .def("box", &PyDistributedBroadPhase::box, py::arg("id"),
           "The box of an object this rank owns, (2 * dims,) float32, or None.")
      .def("filter", &PyDistributedBroadPhase::filter, py::arg("id"),
           "(category, mask) of an object this rank owns, or None.")
      .def("is_static", &PyDistributedBroadPhase::is_static, py::arg("id"),
           "Whether an object this rank owns is static; None if it owns none of that id.")
      .def("stats", &PyDistributedBroadPhase::stats, "What the last update() did, as a dict (FrameStats).")
      .def("__len__", &PyDistributedBroadPhase::size, "Number of objects this rank owns.")
      .def("__repr__", &PyDistributedBroadPhase::repr)
      .def_property_readonly("size", &PyDistributedBroadPhase::size, "Number of objects this rank owns.")
      .def_property_readonly("frame", &PyDistributedBroadPhase::frame, "Number of update() calls so far.")
      .def_property_readonly("rank", &PyDistributedBroadPhase::rank, "This rank in the communicator.")
      .def_property_readonly("ranks", &PyDistributedBroadPhase::ranks, "The communicator's size.")
      .def_property_readonly("dims", &PyDistributedBroadPhase::dims)
      .def_property_readonly("algorithm", &PyDistributedBroadPhase::algorithm,
                             "The local broad phase's algorithm (what auto runs).")
      .def_property_readonly("algorithm_name", &PyDistributedBroadPhase::algorithm)
      .def_property_readonly("memory_bytes", &PyDistributedBroadPhase::memory_bytes, "Bytes this rank holds.");
}
