// The persistent broad phase, sapling.BroadPhase: a sapling::BroadPhase
// behind a readers-writer lock, its calls taking numpy arrays by the input
// rules (binding.hpp): add, move and remove staged, update() returning the
// frame's (created, deleted) pairs; filters and static objects; region
// queries and rays, one or many; the figures (size, frame, memory). Each
// call checks its arguments before it takes the lock, then runs without the
// GIL; reads share the lock (broad_phase.hpp, "Threads"), so that Python
// threads query at once.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <vector>

#include "binding.hpp"
#include "sapling/broad_phase.hpp"

namespace sapling::python {
namespace {

// Ray hits as numpy arrays: (ids uint32, t float32).
py::tuple hit_arrays(const std::vector<RayHit>& hits) {
  py::array_t<std::uint32_t> ids(static_cast<py::ssize_t>(hits.size()));
  py::array_t<float> t(static_cast<py::ssize_t>(hits.size()));
  for (std::size_t k = 0; k < hits.size(); ++k) {
    ids.mutable_data()[k] = hits[k].id;
    t.mutable_data()[k] = hits[k].t;
  }
  return py::make_tuple(ids, t);
}

// A batch's offsets as a uint64 array.
py::array_t<std::uint64_t> offsets_array(const std::vector<std::size_t>& offsets) {
  py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(offsets.size()));
  std::copy(offsets.begin(), offsets.end(), out.mutable_data());
  return out;
}

class PyBroadPhase {
  // Runs the read `f` sharing the lock, without the GIL (so a holder that
  // wants the GIL back never waits on us).
  template <class F>
  auto locked(F f) {
    py::gil_scoped_release release;
    std::shared_lock lock(mutex_);
    return f();
  }

 public:
  PyBroadPhase(const std::string& algorithm, py::handle dims_obj, py::handle threads_obj, py::handle max_pairs_obj,
               bool exact_pairs) {
    const int dims = as_dims(dims_obj);
    const unsigned threads = as_threads(threads_obj);
    const std::size_t max_pairs = as_unsigned(max_pairs_obj, "max_pairs", 0, std::numeric_limits<std::size_t>::max(),
                                              "an integer in [0, 2**64) (0: no budget)");
    Status why;
    broad_phase_ = BroadPhase::create(
        algorithm, Options{.dims = dims, .threads = threads, .max_pairs = max_pairs, .exact_pairs = exact_pairs}, &why);
    if (!broad_phase_) {
      check(why, "BroadPhase('" + algorithm + "', dims=" + std::to_string(dims) +
                     ", threads=" + std::to_string(threads) + "): ");
    }
  }

  // Filters: none when neither category nor mask is given, else the
  // default for the part not given. `doubles`: boxes in world coordinates
  // as float64, (n, 2 * dims) (large worlds).
  void add(py::handle ids_obj, py::handle boxes_obj, py::handle category, py::handle mask, bool is_static,
           py::handle contact_distance, bool doubles) {
    const Ids ids = as_ids(ids_obj, "ids");
    const FilterFields fields = as_filter_fields(category, mask, ids.n);
    std::vector<Filter> filters;
    if (fields.given()) filters = fields.filters(std::vector<Filter>(ids.n));
    stage(Operation::kAdd, ids, boxes_obj, filters, is_static ? Motion::kStatic : Motion::kDynamic,
          as_distances(contact_distance, ids.n), doubles);
  }
  void move(py::handle ids_obj, py::handle boxes_obj, py::handle contact_distance, bool doubles) {
    const Ids ids = as_ids(ids_obj, "ids");
    stage(Operation::kMove, ids, boxes_obj, {}, Motion::kDynamic, as_distances(contact_distance, ids.n), doubles);
  }
  void shift_origin(py::handle offset_obj) {
    const py::array_t<double, py::array::c_style | py::array::forcecast> offset =
        py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(offset_obj);
    if (!offset || offset.size() != 3) refuse("offset must hold 3 numbers (x, y, z)");
    const std::array<double, 3> by{offset.data()[0], offset.data()[1], offset.data()[2]};
    Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);  // a change, as staging is
      s = broad_phase_->shift_origin(by);
    }
    check(s);
  }
  py::tuple origin() {
    const std::array<double, 3> o = locked([&] { return broad_phase_->origin(); });
    return py::make_tuple(o[0], o[1], o[2]);
  }
  // A live id's box in world coordinates, float64 (2 * dims,), or None.
  py::object exact_box(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    const std::optional<Box3d> b = locked([&] { return broad_phase_->exact_box(id); });
    if (!b) return py::none();
    const int dims = broad_phase_->options().dims;
    py::array_t<double> out(2 * dims);
    for (int k = 0; k < dims; ++k) out.mutable_data()[k] = b->min[k], out.mutable_data()[dims + k] = b->max[k];
    return out;
  }

  // The contact distance of a live id, or None.
  py::object contact_distance(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    const std::optional<float> d = locked([&] { return broad_phase_->contact_distance(id); });
    if (!d) return py::none();
    return py::float_(*d);
  }

  // The part of a filter not given keeps the object's current one (an id
  // that is not live is refused by the library).
  void set_filter(py::handle ids_obj, py::handle category, py::handle mask) {
    const Ids ids = as_ids(ids_obj, "ids");
    const FilterFields fields = as_filter_fields(category, mask, ids.n);
    Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      std::vector<Filter> current(ids.n);
      if (!fields.category || !fields.mask) {
        for (std::size_t k = 0; k < ids.n; ++k) current[k] = broad_phase_->filter(ids.data[k]).value_or(Filter{});
      }
      s = broad_phase_->set_filter(ids.span(), fields.filters(std::move(current)));
    }
    check(s);
  }

  // (category, mask) of a live id, or None.
  py::object filter(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    const std::optional<Filter> f = locked([&] { return broad_phase_->filter(id); });
    if (!f) return py::none();
    return py::make_tuple(f->category, f->mask);
  }

  // True or False for a live id, None otherwise.
  py::object is_static(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    const std::optional<Motion> m = locked([&] { return broad_phase_->motion(id); });
    if (!m) return py::none();
    return py::bool_(*m == Motion::kStatic);
  }

  // Every live object the ray meets, sorted by entry then id: (ids, t).
  py::tuple ray_cast(py::handle origin, py::handle direction, py::handle max_t, py::handle mask_obj) {
    const Ray3 ray = as_ray(origin, direction, max_t);
    const std::uint32_t mask = as_uint32(mask_obj, "mask");
    std::vector<RayHit> hits;
    Status s;
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mutex_);
      s = broad_phase_->ray_cast(ray, hits, mask);
    }
    check(s);
    return hit_arrays(hits);
  }

  // The first hit, (id, t), or None.
  py::object ray_cast_closest(py::handle origin, py::handle direction, py::handle max_t, py::handle mask_obj) {
    const Ray3 ray = as_ray(origin, direction, max_t);
    const std::uint32_t mask = as_uint32(mask_obj, "mask");
    std::optional<RayHit> hit;
    Status s;
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mutex_);
      s = broad_phase_->ray_cast_closest(ray, hit, mask);
    }
    check(s);
    if (!hit) return py::none();
    return py::make_tuple(hit->id, hit->t);
  }

  // Many rays at once, answered in parallel on the broad phase's threads:
  // (ids, t, offsets), ray i's hits being ids[offsets[i]:offsets[i + 1]]
  // (sorted by entry then id; at most one each for the closest).
  py::tuple ray_cast_many(py::handle origins_obj, py::handle directions_obj, py::handle max_t_obj, py::handle mask_obj,
                          bool closest) {
    const int dims = broad_phase_->options().dims;
    const Vectors origins = as_vectors(origins_obj, dims, "origins");
    const Vectors directions = as_vectors(directions_obj, dims, "directions");
    if (directions.n != origins.n) {
      refuse(std::to_string(origins.n) + " origins but " + std::to_string(directions.n) + " directions");
    }
    // max_t: one number for every ray, or one per ray.
    py::array max_t_array = to_array(max_t_obj, "max_t");
    std::vector<float> max_t(origins.n, 0.0f);
    if (max_t_array.ndim() == 0) {
      std::fill(max_t.begin(), max_t.end(), as_exact_float(max_t_obj, "max_t"));
    } else {
      const Vectors per_ray = as_vectors(max_t_array.reshape({max_t_array.size(), py::ssize_t{1}}), 1, "max_t");
      if (max_t_array.ndim() != 1 || per_ray.n != origins.n) {
        refuse("max_t must be one number or one per ray (" + std::to_string(origins.n) + "), not shape " +
               shape_text(max_t_array));
      }
      for (std::size_t k = 0; k < per_ray.n; ++k) max_t[k] = per_ray.data[k];
    }
    const std::uint32_t mask = as_uint32(mask_obj, "mask");
    std::vector<Ray3> rays(origins.n);
    for (std::size_t k = 0; k < rays.size(); ++k) rays[k] = Ray3{origins.at(k), directions.at(k), max_t[k]};
    std::vector<RayHit> hits;
    std::vector<std::size_t> offsets;
    Status s;
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mutex_);
      s = closest ? broad_phase_->ray_cast_closest_many(rays, hits, offsets, mask)
                  : broad_phase_->ray_cast_many(rays, hits, offsets, mask);
    }
    check(s);
    const py::tuple id_t = hit_arrays(hits);
    return py::make_tuple(id_t[0], id_t[1], offsets_array(offsets));
  }

  void remove(py::handle ids_obj) {
    const Ids ids = as_ids(ids_obj, "ids");
    Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      s = broad_phase_->remove(ids.span());
    }
    check(s);
  }

  py::tuple update() {
    py::gil_scoped_release release;
    std::lock_guard lock(mutex_);
    const FrameDelta& delta = broad_phase_->update();
    py::gil_scoped_acquire acquire;
    check(delta.status);
    return py::make_tuple(copy_pairs(delta.created), copy_pairs(delta.deleted));
  }

  py::array_t<std::uint32_t> pairs() {
    py::gil_scoped_release release;  // the lock is taken without the GIL: its holder may want the GIL
    std::shared_lock lock(mutex_);
    py::gil_scoped_acquire acquire;
    return copy_pairs(broad_phase_->pairs());
  }

  // Region queries: the ids overlapping each box, ascending, as of the
  // last update().
  py::tuple query_many(py::handle boxes_obj, py::handle mask) {
    return query_boxes(as_boxes(boxes_obj, broad_phase_->options().dims, "boxes"), as_uint32(mask, "mask"));
  }

  py::array_t<std::uint32_t> query(py::handle box_obj, py::handle mask) {
    const Boxes box = as_box(box_obj, broad_phase_->options().dims, "box");
    return query_boxes(box, as_uint32(mask, "mask"))[0].cast<py::array_t<std::uint32_t>>();
  }

  py::array_t<std::uint32_t> sorted_pairs() {
    std::vector<Pair> out;
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mutex_);
      broad_phase_->sorted_pairs(out);
    }
    return take_pairs(std::move(out));
  }

  bool contains(py::handle id_obj) {
    const Id id = as_uint32(id_obj, "id");
    return locked([&] { return broad_phase_->contains(id); });
  }
  std::size_t size() {
    return locked([&] { return broad_phase_->size(); });
  }
  std::uint64_t frame() {
    return locked([&] { return broad_phase_->frame(); });
  }
  std::string algorithm() const { return std::string(broad_phase_->algorithm_name()); }
  int dims() const { return broad_phase_->options().dims; }
  unsigned threads() const { return broad_phase_->concurrency(); }
  std::size_t max_pairs() const { return broad_phase_->options().max_pairs; }
  std::size_t memory_bytes() {
    return locked([&] { return broad_phase_->memory_bytes(); });
  }
  std::size_t pair_memory_bytes() {
    return locked([&] { return broad_phase_->pair_memory_bytes(); });
  }
  std::size_t pair_count() {
    return locked([&] { return broad_phase_->pairs().size(); });
  }

  bool validate() {
    return locked([&] { return broad_phase_->validate(); });
  }

  std::string repr() {
    return locked([&] {
      return "<sapling.BroadPhase '" + std::string(broad_phase_->algorithm_name()) +
             "' dims=" + std::to_string(broad_phase_->options().dims) +
             " threads=" + std::to_string(broad_phase_->concurrency()) + ": " + std::to_string(broad_phase_->size()) +
             " objects, " + std::to_string(broad_phase_->pairs().size()) + " pairs, frame " +
             std::to_string(broad_phase_->frame()) + ">";
    });
  }

 private:
  void stage(Operation op, const Ids& ids, py::handle boxes_obj, std::span<const Filter> filters, Motion motion,
             std::span<const float> distances, bool doubles) {
    const int dims = broad_phase_->options().dims;
    const auto staged = [&](auto boxes) {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      return op == Operation::kAdd ? broad_phase_->add(ids.span(), boxes, filters, motion, distances)
                                   : broad_phase_->move(ids.span(), boxes, distances);
    };
    if (!doubles) {
      const Boxes boxes = as_boxes(boxes_obj, dims, "boxes");
      check(dims == 2 ? staged(boxes.box2()) : staged(boxes.box3()));
      return;
    }
    using Doubles = py::array_t<double, py::array::c_style | py::array::forcecast>;
    const Doubles boxes = Doubles::ensure(boxes_obj);
    if (!boxes || boxes.ndim() != 2 || boxes.shape(1) != 2 * dims) {
      refuse(std::string("boxes must be float64 of shape (n, ") + std::to_string(2 * dims) + ") (min then max)");
    }
    const auto n = static_cast<std::size_t>(boxes.shape(0));
    check(dims == 2 ? staged(std::span<const Box2d>(reinterpret_cast<const Box2d*>(boxes.data()), n))
                    : staged(std::span<const Box3d>(reinterpret_cast<const Box3d*>(boxes.data()), n)));
  }

  // Contact distances: None (none given), a number for every id, or one
  // per id; each exactly a float32, as boxes are (the library refuses a
  // negative, NaN or infinite one, naming the id).
  static std::vector<float> as_distances(py::handle values, std::size_t n) {
    const char* what = "contact_distance";
    if (values.is_none()) return {};
    const bool is_array = py::isinstance<py::array>(values);
    const bool scalar = is_array ? py::reinterpret_borrow<py::array>(values).ndim() == 0
                                 : !py::isinstance<py::sequence>(values) || py::isinstance<py::str>(values) ||
                                       py::isinstance<py::bytes>(values);
    if (scalar) return std::vector<float>(n, as_exact_float(is_array ? values.attr("item")() : values, what));
    const py::array a = to_array(values, what);
    if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n) {
      refuse(std::string(what) + " must be a number or hold one value per id (" + std::to_string(n) + "), not shape " +
             shape_text(a));
    }
    std::vector<float> out(n);
    for (std::size_t k = 0; k < n; ++k) out[k] = as_exact_float(a.attr("item")(k), what);
    return out;
  }

  // Region queries: the ids overlapping each box, ascending, as of the
  // last update(): (ids, offsets).
  py::tuple query_boxes(const Boxes& boxes, std::uint32_t mask) {
    const int dims = broad_phase_->options().dims;
    std::vector<Box3> lifted;
    std::span<const Box3> queries = boxes.box3();
    if (dims == 2) {
      lifted.reserve(boxes.n);
      for (const Box2& b : boxes.box2()) lifted.push_back(lift(b));
      queries = lifted;
    }
    std::vector<Id> ids;
    std::vector<std::size_t> offsets;
    Status s;
    {
      py::gil_scoped_release release;
      std::shared_lock lock(mutex_);
      s = broad_phase_->query_many(queries, ids, offsets, mask);
    }
    check(s);
    return py::make_tuple(ids_array(ids), offsets_array(offsets));
  }

  // A ray of the broad phase's dimensions, lifted to 3D; floats as boxes take them.
  Ray3 as_ray(py::handle origin_obj, py::handle direction_obj, py::handle max_t) const {
    const int dims = broad_phase_->options().dims;
    const std::array<float, 3> origin = as_vector(origin_obj, dims, "origin");
    const std::array<float, 3> direction = as_vector(direction_obj, dims, "direction");
    return Ray3{origin, direction, as_exact_float(max_t, "max_t")};
  }

  std::unique_ptr<BroadPhase> broad_phase_;
  std::shared_mutex mutex_;  // shared by reads, whole for writes
};

// add() and move() as Python sees them: float32 boxes, or float64 (the
// *_double forms).
template <bool kDoubles>
void adding(PyBroadPhase& self, py::handle ids, py::handle boxes, py::handle category, py::handle mask, bool is_static,
            py::handle contact_distance) {
  self.add(ids, boxes, category, mask, is_static, contact_distance, kDoubles);
}
// ray_cast_many() and ray_cast_closest_many().
template <bool kClosest>
py::tuple casting_many(PyBroadPhase& self, py::handle origins, py::handle directions, py::handle max_t,
                       py::handle mask) {
  return self.ray_cast_many(origins, directions, max_t, mask, kClosest);
}
template <bool kDoubles>
void moving(PyBroadPhase& self, py::handle ids, py::handle boxes, py::handle contact_distance) {
  self.move(ids, boxes, contact_distance, kDoubles);
}

}  // namespace

void bind_broad_phase(py::module_& m) {
  py::class_<PyBroadPhase>(m, "BroadPhase",
                           "The persistent broad phase: stage add/move/remove batches, then update() each frame.")
      .def(py::init<const std::string&, py::handle, py::handle, py::handle, bool>(), py::arg("algorithm") = "auto",
           py::arg("dims") = 3, py::arg("threads") = 1, py::arg("max_pairs") = 0, py::arg("exact_pairs") = false,
           "A broad phase running `algorithm` (see algorithms()) on boxes of `dims` (2 or 3) dimensions, on "
           "`threads` threads (0 to 256; 0: all hardware threads); max_pairs > 0 refuses a frame holding more pairs.")
      .def("add", adding<false>, py::arg("ids"), py::arg("boxes"), py::arg("category") = py::none(),
           py::arg("mask") = py::none(), py::arg("static") = false, py::arg("contact_distance") = py::none(),
           "Stages objects to appear at the next update(): ids (n,) uint32, boxes (n, 2*dims) float32; "
           "category and mask (an integer for all, or one per id; defaults 1 and 0xffffffff) filter their pairs, "
           "and static objects never pair with each other (docs/trace-format.md, version 2); contact_distance "
           "(a number for all, or one per id, each exactly a float32, finite and >= 0; default 0) pairs boxes "
           "while they are within the two distances of each other (docs/filters-and-queries.md).")
      .def("set_filter", &PyBroadPhase::set_filter, py::arg("ids"), py::arg("category") = py::none(),
           py::arg("mask") = py::none(),
           "Stages new categories and masks for live objects (an integer for all, or one per id); the one not "
           "given (None) keeps each object's current value. Pairs follow at update().")
      .def("filter", &PyBroadPhase::filter, py::arg("id"), "(category, mask) of a live id, or None.")
      .def("is_static", &PyBroadPhase::is_static, py::arg("id"), "Whether a live id is static; None if not live.")
      .def("ray_cast", &PyBroadPhase::ray_cast, py::arg("origin"), py::arg("direction"),
           py::arg("max_t") = std::numeric_limits<float>::infinity(), py::arg("mask") = kAllCategories,
           "Every live object the segment origin + t * direction, t in [0, max_t], meets (closed boxes) and whose "
           "category shares a bit with mask: (ids uint32, t float32), sorted by entry t, then id (ray.hpp). "
           "origin, direction (dims numbers) and max_t are taken as boxes are: values exactly float32, never "
           "rounded.")
      .def("ray_cast_closest", &PyBroadPhase::ray_cast_closest, py::arg("origin"), py::arg("direction"),
           py::arg("max_t") = std::numeric_limits<float>::infinity(), py::arg("mask") = kAllCategories,
           "The first object the ray meets, (id, t), or None.")
      .def("ray_cast_many", casting_many<false>, py::arg("origins"), py::arg("directions"),
           py::arg("max_t") = std::numeric_limits<float>::infinity(), py::arg("mask") = kAllCategories,
           "Many rays at once, in parallel on the broad phase's threads: origins and directions (n, dims), max_t "
           "one number or one per ray. Returns (ids uint32, t float32, offsets uint64), ray i's hits being "
           "ids[offsets[i]:offsets[i + 1]], sorted by entry t, then id.")
      .def("ray_cast_closest_many", casting_many<true>, py::arg("origins"), py::arg("directions"),
           py::arg("max_t") = std::numeric_limits<float>::infinity(), py::arg("mask") = kAllCategories,
           "The first hit of each ray, as ray_cast_many (at most one per ray): (ids, t, offsets).")
      .def("move", moving<false>, py::arg("ids"), py::arg("boxes"), py::arg("contact_distance") = py::none(),
           "Stages new boxes for live objects; contact_distance as add()'s, or None to keep each object's.")
      .def("add_double", adding<true>, py::arg("ids"), py::arg("boxes"), py::arg("category") = py::none(),
           py::arg("mask") = py::none(), py::arg("static") = false, py::arg("contact_distance") = py::none(),
           "add() for large worlds: boxes (n, 2*dims) float64 in world coordinates, kept rounded outward to "
           "float32 relative to origin() (docs/large-worlds.md).")
      .def("move_double", moving<true>, py::arg("ids"), py::arg("boxes"), py::arg("contact_distance") = py::none(),
           "move() for large worlds: boxes float64 in world coordinates.")
      .def("shift_origin", &PyBroadPhase::shift_origin, py::arg("offset"),
           "Moves the origin by offset (3 numbers); every box is re-expressed at the next update().")
      .def("origin", &PyBroadPhase::origin, "The origin boxes given now are relative to, (x, y, z).")
      .def("exact_box", &PyBroadPhase::exact_box, py::arg("id"),
           "A live id's box in world coordinates, float64 (min then max), or None.")
      .def("contact_distance", &PyBroadPhase::contact_distance, py::arg("id"),
           "The contact distance of a live id, or None.")
      .def("remove", &PyBroadPhase::remove, py::arg("ids"), "Stages removals of live objects.")
      .def("update", &PyBroadPhase::update,
           "Applies the staged operations; returns (created, deleted), (k, 2) uint32 arrays of id pairs, a < b, "
           "sorted by (a, b).")
      .def("pairs", &PyBroadPhase::pairs, "Every current pair, (k, 2) uint32, a < b, in a deterministic order.")
      .def("sorted_pairs", &PyBroadPhase::sorted_pairs, "pairs() sorted by (a, b).")
      .def("query", &PyBroadPhase::query, py::arg("box"), py::arg("mask") = kAllCategories,
           "Region query: the ids (uint32, ascending) of the live objects whose boxes overlap box (min then max, "
           "2 * dims numbers; closed intervals) and whose category shares a bit with mask, as of the last "
           "update().")
      .def("query_many", &PyBroadPhase::query_many, py::arg("boxes"), py::arg("mask") = kAllCategories,
           "Region queries at once: (ids, offsets), box i's ids being ids[offsets[i]:offsets[i + 1]].")
      .def("contains", &PyBroadPhase::contains, py::arg("id"), "Whether id is live.")
      .def("__contains__", &PyBroadPhase::contains, py::arg("id"))
      .def("__len__", &PyBroadPhase::size, "Number of live objects.")
      .def("validate", &PyBroadPhase::validate, "Checks every invariant; False on the first violation.")
      .def("__repr__", &PyBroadPhase::repr)
      .def_property_readonly("frame", &PyBroadPhase::frame, "Number of update() calls so far.")
      .def_property_readonly("algorithm", &PyBroadPhase::algorithm)
      .def_property_readonly("dims", &PyBroadPhase::dims)
      .def_property_readonly("threads", &PyBroadPhase::threads, "Threads the algorithm runs on.")
      .def_property_readonly("max_pairs", &PyBroadPhase::max_pairs)
      .def_property_readonly("pair_count", &PyBroadPhase::pair_count, "Number of current pairs.")
      .def_property_readonly("memory_bytes", &PyBroadPhase::memory_bytes,
                             "Bytes held by the broad phase, its algorithm and its pairs.")
      .def_property_readonly("pair_memory_bytes", &PyBroadPhase::pair_memory_bytes);
}

}  // namespace sapling::python
