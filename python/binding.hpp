// The Python module `sapling._sapling` (re-exported by python/sapling/__init__.py):
// numpy arrays in, numpy arrays out, over the public C++ API only. This
// internal header is what its parts share: the error rule and the argument
// conversions (convert.cpp), and each part's bindings, which module.cpp
// calls: one_shot.cpp (the pruners), broad_phase.cpp (BroadPhase),
// traces.cpp (traces, replay, hashes).
//
// Input rules (README.md, "From Python"):
// - Boxes are (n, 2*dims) arrays, min then max (x, y[, z]), or (n, 2, dims).
//   A native float32 C-contiguous array is read in place, never copied.
//   float32 in another layout or byte order is copied unchanged. float64,
//   float16, long double and integer arrays are converted to float32 only
//   when every value is exactly a float32 (NaN and +-inf included): a value
//   that is not is refused with its position, never rounded. Other dtypes
//   are refused.
// - Ids are a 1-D uint32 array, read in place when native and contiguous;
//   other integer arrays are converted when every value is in [0, 2^32 - 1].
// - Every other float (a ray's origin, direction and max_t, a query box)
//   follows the boxes' rule; every unsigned integer (threads, max_pairs,
//   dims, an id, a category, a mask) is a Python or numpy integer in range.
// - What is refused raises one of two: TypeError when an argument is not a
//   real number where numbers are due (a string, None, a bool, a complex or
//   object dtype), sapling.Error (a ValueError) for everything else: a value
//   out of range or not an integer, a shape, a float that is not exactly a
//   float32 (code 'invalid_argument'), every Status of the library, and a
//   trace the reader refuses (sapling.TraceError, a sapling.Error). A file
//   that cannot be opened raises OSError.
// Every call checks its arguments before anything changes; a refused call
// raises and leaves the broad phase as it was. The work runs with the GIL
// released; a per-object mutex keeps two Python threads from using one
// broad phase (or pruner) at once.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/filter.hpp"
#include "sapling/pair.hpp"
#include "sapling/status.hpp"
#include "sapling/task_system.hpp"
#include "sapling/trace.hpp"

namespace sapling::python {

namespace py = pybind11;

// ---- the error rule (convert.cpp) ------------------------------------------

/// A refused call: raised in Python as sapling.Error with the Status's
/// message and fields.
struct StatusError {
  Status status;
  std::string prefix;  ///< e.g. "frame 3: " for replay
};

/// A value the binding refuses before the library sees it: raised as
/// sapling.Error with code 'invalid_argument', operation and id None, and
/// index the offending element's position (row of a box), if one is named.
struct ArgumentError {
  std::string message;
  std::optional<std::size_t> index;
};

/// Throws an ArgumentError.
[[noreturn]] void refuse(std::string message, std::optional<std::size_t> index = std::nullopt);

/// Throws a StatusError for a refused `s`, its message after `prefix`.
void check(const Status& s, std::string prefix = {});

/// Raises sapling.TraceError, "WHERE:LINE: reason".
[[noreturn]] void raise_trace_error(const std::string& where, const TraceError& error);

/// Raises OSError (FileNotFoundError, PermissionError, ...) for a file that
/// could not be opened, read or written, from errno.
[[noreturn]] void raise_os_error(const std::string& path);

/// Creates sapling.Error and sapling.TraceError in `m` and translates
/// StatusError and ArgumentError into them.
void bind_errors(py::module_& m);
/// For the package's other extension modules (_sapling_mpi): the same rule
/// with _sapling's sapling.Error and sapling.TraceError, translated for the
/// calling module's functions.
void share_errors(const py::module_& sapling_module);

// ---- arguments (convert.cpp) -----------------------------------------------

/// "(3, 4)", "(0,)": a shape for the messages.
std::string shape_text(const py::array& a);
/// "float64": a dtype for the messages.
std::string dtype_text(const py::array& a);
/// A float as Python prints it (its shortest repr).
std::string value_text(double v);

/// An unsigned integer argument in [min, max] (`range` says which in the
/// messages): a Python or numpy integer, or a 0-d integer array. Another
/// real number is a value refused (sapling.Error); anything else a TypeError.
std::uint64_t as_unsigned(py::handle obj, const char* what, std::uint64_t min, std::uint64_t max,
                          const std::string& range);
/// An id, a category or a mask.
std::uint32_t as_uint32(py::handle obj, const char* what);
/// threads: 0 (all hardware threads) to ThreadPool::kMaxThreads.
unsigned as_threads(py::handle obj);
/// dims: 2 or 3.
int as_dims(py::handle obj);
/// A float argument (a ray's max_t) by the boxes' rule: a real number that
/// is exactly a float32 (NaN and +-inf included), never rounded.
float as_exact_float(py::handle obj, const char* what);
/// `obj` as a numpy array (aligned: a misaligned view is copied), or a TypeError.
py::array to_array(py::handle obj, const char* what);

/// Boxes as float32 rows of 2*dims values, in memory that lives as long as
/// `owner`: the caller's array when it could be read in place.
struct Boxes {
  py::object owner;
  const float* data = nullptr;
  std::size_t n = 0;
  int dims = 3;

  std::span<const Box3> box3() const { return {reinterpret_cast<const Box3*>(data), n}; }
  std::span<const Box2> box2() const { return {reinterpret_cast<const Box2*>(data), n}; }
};

/// Boxes by the input rules; `dims` = 0: 2 or 3, from the shape. An empty
/// 1-D array is no boxes.
Boxes as_boxes(py::handle obj, int dims, const char* what);
/// One box of `dims` dimensions (a region query's): 2 * dims numbers, min
/// then max, in an array of any shape (read in C order).
Boxes as_box(py::handle obj, int dims, const char* what);
/// A vector of `dims` numbers (a ray's origin or direction), lifted to 3D
/// with z = 0; values as for boxes.
std::array<float, 3> as_vector(py::handle obj, int dims, const char* what);

/// n vectors of `dims` numbers (rays' origins or directions), in memory that
/// lives as long as `owner`.
struct Vectors {
  py::object owner;
  const float* data = nullptr;
  std::size_t n = 0;
  int dims = 3;
  /// Vector k lifted to 3D with z = 0.
  std::array<float, 3> at(std::size_t k) const {
    std::array<float, 3> v{0, 0, 0};
    for (int d = 0; d < dims; ++d) v[d] = data[k * static_cast<std::size_t>(dims) + static_cast<std::size_t>(d)];
    return v;
  }
};
/// Shape (n, dims), or an empty 1-D array for none; values as for boxes.
Vectors as_vectors(py::handle obj, int dims, const char* what);

/// uint32 values in memory that lives as long as `owner`.
struct Ids {
  py::object owner;
  const Id* data = nullptr;
  std::size_t n = 0;
  std::span<const Id> span() const { return {data, n}; }
};

/// A 1-D array of uint32 values (`are_ids`: ids; else categories, masks or
/// labels): read in place when uint32, native and contiguous; other integer
/// arrays converted when every value is in range. A float array is a value
/// refused; another dtype (bool, strings) a TypeError. An empty array of any
/// dtype is taken.
Ids as_ids(py::handle obj, const char* what, bool are_ids = true);

// ---- results (convert.cpp) -------------------------------------------------

/// A (k, 2) uint32 array over `pairs`, which it takes: no copy.
template <class P>
py::array_t<std::uint32_t> take_pairs(std::vector<P>&& pairs) {
  auto* owner = new std::vector<P>(std::move(pairs));
  py::capsule free_owner(owner, [](void* p) { delete static_cast<std::vector<P>*>(p); });
  const auto k = static_cast<py::ssize_t>(owner->size());
  return py::array_t<std::uint32_t>({k, py::ssize_t{2}}, {py::ssize_t{8}, py::ssize_t{4}},
                                    reinterpret_cast<const std::uint32_t*>(owner->data()), free_owner);
}

/// A (k, 2) uint32 array holding a copy of `pairs`.
py::array_t<std::uint32_t> copy_pairs(std::span<const Pair> pairs);
/// (n, 2*dims) float32 copy of `boxes` (3D, or 2D dropping z).
py::array_t<float> boxes_array(const std::vector<Box3>& boxes, int dims);
/// (n,) uint32 copy of `ids`.
py::array_t<std::uint32_t> ids_array(const std::vector<Id>& ids);

/// A pool of `threads` as checked by as_threads(); 1: none.
std::unique_ptr<ThreadPool> make_pool(unsigned threads);

/// Whether `values` is one value (a number, a 0-d array, a string) rather
/// than one per element.
bool is_scalar(py::handle values);

/// The categories and masks given to add() or set_filter(): each None (not
/// given), an integer for every id, or one per id.
struct FilterFields {
  std::optional<std::vector<std::uint32_t>> category, mask;

  bool given() const { return category || mask; }
  /// `filters` (one per id) with the parts given replaced.
  std::vector<Filter> filters(std::vector<Filter> filters) const;
};
FilterFields as_filter_fields(py::handle category, py::handle mask, std::size_t n);

// ---- the module's parts, called by module.cpp ------------------------------

/// BoxPruner, UnisizePruner, complete_pairs, bipartite_pairs, unisize_pairs.
void bind_one_shot(py::module_& m);
/// BroadPhase.
void bind_broad_phase(py::module_& m);
/// Trace, read_trace, parse_trace, write_trace, replay, pair_set_hash, id_list_hash.
void bind_traces(py::module_& m);

}  // namespace sapling::python
