// The Python module `sapling._sapling` (re-exported by python/sapling/__init__.py):
// numpy arrays in, numpy arrays out, over the public C++ API only.
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
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sapling/box_pruning.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "sapling/trace.hpp"
#include "sapling/unisize.hpp"

namespace py = pybind11;

namespace sapling::python {
namespace {

// numpy rows of 4 or 6 floats are read as Box2 or Box3 in place.
static_assert(std::is_standard_layout_v<Box3> && sizeof(Box3) == 6 * sizeof(float));
static_assert(std::is_standard_layout_v<Box2> && sizeof(Box2) == 4 * sizeof(float));
static_assert(sizeof(Pair) == 2 * sizeof(std::uint32_t) && sizeof(IndexPair) == 2 * sizeof(std::uint32_t));

// A refused call: raised in Python as sapling.Error with the Status's message
// and fields.
struct StatusError {
  Status status;
  std::string prefix;  // e.g. "frame 3: " for replay
};

// A value the binding refuses before the library sees it: raised as
// sapling.Error with code 'invalid_argument', operation and id None, and
// index the offending element's position (row of a box), if one is named.
struct ArgumentError {
  std::string message;
  std::optional<std::size_t> index;
};

[[noreturn]] void refuse(std::string message, std::optional<std::size_t> index = std::nullopt) {
  throw ArgumentError{std::move(message), index};
}

py::handle error_type;
py::handle trace_error_type;

void raise_argument_error(const ArgumentError& e) {
  py::object error = py::reinterpret_borrow<py::object>(error_type)(e.message);
  error.attr("code") = "invalid_argument";
  error.attr("operation") = py::none();
  error.attr("id") = py::none();
  error.attr("index") = e.index ? py::object(py::int_(*e.index)) : py::object(py::none());
  PyErr_SetObject(error_type.ptr(), error.ptr());
}

void raise_status(const StatusError& e) {
  const Status& s = e.status;
  py::object error = py::reinterpret_borrow<py::object>(error_type)(e.prefix + s.message());
  error.attr("code") = status_code_name(s.code());
  error.attr("operation") =
      s.operation() == Operation::kNone ? py::object(py::none()) : py::object(py::str(operation_name(s.operation())));
  const bool has_id = s.operation() != Operation::kNone &&
                      (s.code() == StatusCode::kInvalidBox || s.code() == StatusCode::kUnknownId ||
                       s.code() == StatusCode::kDuplicateId || s.code() == StatusCode::kRepeatedId ||
                       s.code() == StatusCode::kUnsupported);
  error.attr("id") = has_id ? py::object(py::int_(s.id())) : py::none();
  const bool has_index = has_id || s.operation() == Operation::kNone;
  error.attr("index") = has_index ? py::object(py::int_(s.index())) : py::none();
  PyErr_SetObject(error_type.ptr(), error.ptr());
}

void check(const Status& s, std::string prefix = {}) {
  if (!s) throw StatusError{s, std::move(prefix)};
}

std::string shape_text(const py::array& a) {
  std::string out = "(";
  for (py::ssize_t k = 0; k < a.ndim(); ++k) {
    if (k > 0) out += ", ";
    out += std::to_string(a.shape(k));
  }
  return out + (a.ndim() == 1 ? ",)" : ")");
}

std::string dtype_text(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

std::string str_of(py::handle obj) { return py::str(obj).cast<std::string>(); }

std::string type_name(py::handle obj) { return Py_TYPE(obj.ptr())->tp_name; }

bool is_bool(py::handle obj) {
  static const py::handle numpy_bool = py::object(py::module_::import("numpy").attr("bool_")).release();
  return PyBool_Check(obj.ptr()) || py::isinstance(obj, numpy_bool);
}

// A real number that is no bool: int, float, a numpy integer or floating scalar.
bool is_real(py::handle obj) {
  static const py::handle real = py::object(py::module_::import("numbers").attr("Real")).release();
  return !is_bool(obj) && py::isinstance(obj, real);
}

// An unsigned integer argument in [min, max] (`range` says which in the
// messages): a Python or numpy integer, or a 0-d integer array. Another real
// number is a value refused (sapling.Error); anything else a TypeError.
std::uint64_t as_unsigned(py::handle obj, const char* what, std::uint64_t min, std::uint64_t max,
                          const std::string& range) {
  py::object value = py::reinterpret_borrow<py::object>(obj);
  if (py::isinstance<py::array>(value) && py::reinterpret_borrow<py::array>(value).ndim() == 0)
    value = value.attr("item")();
  if (!is_bool(value) && !py::isinstance<py::array>(value) && PyIndex_Check(value.ptr())) {
    const auto v = py::reinterpret_steal<py::int_>(PyNumber_Index(value.ptr()));
    if (!v) throw py::error_already_set();
    if (v < py::int_(min) || v > py::int_(max)) refuse(std::string(what) + " must be " + range + ", not " + str_of(v));
    return PyLong_AsUnsignedLongLong(v.ptr());
  }
  if (is_real(value)) refuse(std::string(what) + " must be " + range + ", not " + str_of(value));
  throw py::type_error(std::string(what) + " must be " + range + ", not " + type_name(obj));
}

constexpr const char* kUint32Range = "an integer in [0, 2**32)";

std::uint32_t as_uint32(py::handle obj, const char* what) {
  return static_cast<std::uint32_t>(as_unsigned(obj, what, 0, 0xffffffffu, kUint32Range));
}

unsigned as_threads(py::handle obj) {
  return static_cast<unsigned>(
      as_unsigned(obj, "threads", 0, ThreadPool::kMaxThreads,
                  "an integer in [0, " + std::to_string(ThreadPool::kMaxThreads) + "] (0: all hardware threads)"));
}

int as_dims(py::handle obj) { return static_cast<int>(as_unsigned(obj, "dims", 2, 3, "2 or 3")); }

// A float argument (a ray's max_t) by the boxes' rule: a real number that is
// exactly a float32 (NaN and +-inf included), never rounded.
float as_exact_float(py::handle obj, const char* what) {
  if (!is_real(obj)) throw py::type_error(std::string(what) + " must be a real number, not " + type_name(obj));
  const double d = PyFloat_AsDouble(obj.ptr());  // an int beyond double's range: OverflowError
  if (d == -1.0 && PyErr_Occurred()) PyErr_Clear();
  const auto f = static_cast<float>(d);
  if (d != d || py::float_(f).equal(obj)) return f;
  refuse(std::string(what) + " = " + str_of(obj) +
         " is not exactly a float32; sapling never rounds silently: pass a float32 (numpy.float32(x)), or round "
         "explicitly");
}

py::array to_array(py::handle obj, const char* what) {
  py::array a = py::array::ensure(obj);
  if (!a) {
    PyErr_Clear();
    throw py::type_error(std::string(what) + " must be a numpy array or a sequence numpy can read");
  }
  // Memory not aligned for its type (a view at an odd byte offset) is
  // copied first: the library reads whole floats and ids.
  if (!(a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) a = a.attr("copy")();
  return a;
}

// ---- boxes -----------------------------------------------------------------

// Boxes as float32 rows of 2*dims values, in memory that lives as long as
// `owner`: the caller's array when it could be read in place.
struct Boxes {
  py::object owner;
  const float* data = nullptr;
  std::size_t n = 0;
  int dims = 3;

  std::span<const Box3> box3() const { return {reinterpret_cast<const Box3*>(data), n}; }
  std::span<const Box2> box2() const { return {reinterpret_cast<const Box2*>(data), n}; }
};

// Converts `count` values to float32, refusing the first that is not exactly
// a float32; returns its position, or -1. NaN stays NaN (the box check
// refuses it with its own message).
template <class T>
py::ssize_t convert_exact(const T* in, float* out, std::size_t count) {
  for (std::size_t k = 0; k < count; ++k) {
    const T v = in[k];
    const float f = static_cast<float>(v);
    if constexpr (std::is_floating_point_v<T>) {
      if (v != v) {
        out[k] = f;
        continue;
      }
    }
    if (static_cast<long double>(f) != static_cast<long double>(v)) return static_cast<py::ssize_t>(k);
    out[k] = f;
  }
  return -1;
}

// A value as Python prints it (shortest repr of a float or double).
std::string value_text(long double v) {
  const auto d = static_cast<double>(v);
  if (static_cast<long double>(d) != v) {
    std::ostringstream out;
    out.precision(21);
    out << v;
    return out.str();
  }
  return py::repr(py::float_(d)).cast<std::string>();
}
std::string value_text(std::int64_t v) { return std::to_string(v); }
std::string value_text(std::uint64_t v) { return std::to_string(v); }
std::string value_text(double v) { return py::repr(py::float_(v)).cast<std::string>(); }

template <class T>
py::array_t<float> convert_exact_array(const py::array& a, py::ssize_t width, const char* what) {
  auto src = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!src) throw py::error_already_set();
  const auto count = static_cast<std::size_t>(a.size());
  py::array_t<float> out(static_cast<py::ssize_t>(count));
  const T* in = src.data();
  float* dst = out.mutable_data();
  py::ssize_t bad = -1;
  {
    py::gil_scoped_release release;
    bad = convert_exact(in, dst, count);
  }
  if (bad >= 0) {
    const std::string where =
        width > 0 ? std::to_string(bad / width) + ", " + std::to_string(bad % width) : std::to_string(bad);
    refuse(std::string(what) + "[" + where + "] = " + value_text(in[bad]) + " (" + dtype_text(a) +
               ") is not exactly a float32; sapling never rounds silently: pass float32, or round "
               "explicitly (sapling.round_outward rounds boxes outward, min down and max up)",
           static_cast<std::size_t>(width > 0 ? bad / width : bad));
  }
  return out;
}

// The values of a real array `a` as contiguous float32, each exactly the
// value given: float32 itself (copied only when not C-contiguous), another
// real dtype converted when every value is exactly a float32, refused
// naming the first that is not. `width` > 0 names an element [row, column]
// of rows of `width` values; 0 names it [k].
py::array_t<float> exact_float32(const py::array& a, py::ssize_t width, const char* what) {
  if (py::array_t<float>::check_(a)) {
    auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);  // a itself when contiguous
    if (!f) throw py::error_already_set();
    return f;
  }
  const char kind = a.dtype().kind();
  if (kind == 'f' && a.dtype().itemsize() <= 8) return convert_exact_array<double>(a, width, what);  // exact in double
  if (kind == 'f') return convert_exact_array<long double>(a, width, what);
  if (kind == 'i') return convert_exact_array<std::int64_t>(a, width, what);
  return convert_exact_array<std::uint64_t>(a, width, what);
}

// `dims` = 0: 2 or 3, from the shape. An empty 1-D array is no boxes.
Boxes as_boxes(py::handle obj, int dims, const char* what) {
  py::array a = to_array(obj, what);
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    throw py::type_error(std::string(what) +
                         " must be float32 (or float64 or integer values that are exactly float32), not " +
                         dtype_text(a));
  }
  int d = 0;
  if (a.ndim() == 2 && (a.shape(1) == 4 || a.shape(1) == 6)) d = static_cast<int>(a.shape(1) / 2);
  if (a.ndim() == 3 && a.shape(1) == 2 && (a.shape(2) == 2 || a.shape(2) == 3)) d = static_cast<int>(a.shape(2));
  if (a.ndim() == 1 && a.shape(0) == 0) d = dims != 0 ? dims : 3;  // [] : no boxes
  if (d == 0 || (dims != 0 && d != dims)) {
    const std::string want = dims == 3   ? "(n, 6) (min x, y, z, max x, y, z) or (n, 2, 3)"
                             : dims == 2 ? "(n, 4) (min x, y, max x, y) or (n, 2, 2)"
                                         : "(n, 4) or (n, 6) (min then max), or (n, 2, dims)";
    refuse(std::string(what) + " must have shape " + want + ", not " + shape_text(a));
  }
  Boxes boxes;
  boxes.dims = d;
  boxes.n = static_cast<std::size_t>(a.shape(0));
  py::array_t<float> values = exact_float32(a, 2 * d, what);
  boxes.data = values.data();
  boxes.owner = std::move(values);
  return boxes;
}

// One box of `dims` dimensions (a region query's): 2 * dims numbers, min
// then max, in an array of any shape (read in C order: (2 * dims,),
// (1, 2 * dims), (2, dims)); values as for boxes.
Boxes as_box(py::handle obj, int dims, const char* what) {
  py::array a = to_array(obj, what);
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    throw py::type_error(std::string(what) + " must hold real numbers, not " + dtype_text(a));
  }
  if (a.size() != 2 * dims) {
    refuse(std::string(what) + " must hold " + std::to_string(2 * dims) + " numbers (min then max), not shape " +
           shape_text(a));
  }
  Boxes box;
  box.dims = dims;
  box.n = 1;
  py::array_t<float> values = exact_float32(a, 0, what);
  box.data = values.data();
  box.owner = std::move(values);
  return box;
}

// A vector of `dims` numbers (a ray's origin or direction), lifted to 3D
// with z = 0; values as for boxes.
std::array<float, 3> as_vector(py::handle obj, int dims, const char* what) {
  py::array a = to_array(obj, what);
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    throw py::type_error(std::string(what) + " must hold real numbers, not " + dtype_text(a));
  }
  if (a.ndim() != 1 || a.shape(0) != dims) {
    refuse(std::string(what) + " must hold " + std::to_string(dims) + " numbers, not shape " + shape_text(a));
  }
  const py::array_t<float> values = exact_float32(a, 0, what);
  std::array<float, 3> v{0, 0, 0};
  for (int k = 0; k < dims; ++k) v[k] = values.data()[k];
  return v;
}

// ---- ids -------------------------------------------------------------------

struct Ids {
  py::object owner;
  const Id* data = nullptr;
  std::size_t n = 0;
  std::span<const Id> span() const { return {data, n}; }
};

// What an array of uint32 values holds, for the messages: ids, or another
// field (a category, a mask, a label).
const char* range_of(bool are_ids) {
  return are_ids ? " is not an id: ids are uint32 (0 to 4294967295)" : " is not in [0, 2**32)";
}

template <class T>
py::array_t<std::uint32_t> convert_ids(const py::array& a, const char* what, bool are_ids) {
  auto src = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!src) throw py::error_already_set();
  const auto n = static_cast<std::size_t>(a.shape(0));
  py::array_t<std::uint32_t> out(a.shape(0));
  const T* in = src.data();
  std::uint32_t* dst = out.mutable_data();
  for (std::size_t k = 0; k < n; ++k) {
    const T v = in[k];
    if (v < 0 || static_cast<std::uint64_t>(v) > 0xffffffffu) {
      refuse(std::string(what) + "[" + std::to_string(k) + "] = " + std::to_string(v) + range_of(are_ids), k);
    }
    dst[k] = static_cast<std::uint32_t>(v);
  }
  return out;
}

// An object array (numpy's dtype for Python integers beyond 64 bits): each
// element an integer in range, one by one (the error path of big integers).
py::array_t<std::uint32_t> convert_object_ids(const py::array& a, const char* what, bool are_ids) {
  const auto n = static_cast<std::size_t>(a.shape(0));
  py::array_t<std::uint32_t> out(a.shape(0));
  const py::list values = a.attr("tolist")();
  for (std::size_t k = 0; k < n; ++k) {
    const py::handle v = values[k];
    const std::string where = std::string(what) + "[" + std::to_string(k) + "]";
    if (is_bool(v) || !PyIndex_Check(v.ptr())) {
      if (is_real(v)) refuse(where + " = " + str_of(v) + range_of(are_ids), k);
      throw py::type_error(where + " must be an integer, not " + type_name(v));
    }
    const auto i = py::reinterpret_steal<py::int_>(PyNumber_Index(v.ptr()));
    if (!i) throw py::error_already_set();
    if (i < py::int_(0) || i > py::int_(0xffffffffu)) {
      refuse(where + " = " + str_of(i) + range_of(are_ids), k);
    }
    out.mutable_data()[k] = static_cast<std::uint32_t>(PyLong_AsUnsignedLong(i.ptr()));
  }
  return out;
}

// A 1-D array of uint32 values (`are_ids`: ids; else categories, masks or
// labels): read in place when uint32, native and contiguous; other integer
// arrays converted when every value is in range. A float array is a value
// refused; another dtype (bool, strings) a TypeError. An empty array of any
// dtype is taken.
Ids as_ids(py::handle obj, const char* what, bool are_ids = true) {
  py::array a = to_array(obj, what);
  if (a.ndim() != 1) refuse(std::string(what) + " must be 1-D, not of shape " + shape_text(a));
  Ids ids;
  ids.n = static_cast<std::size_t>(a.shape(0));
  const char kind = a.dtype().kind();
  if (py::array_t<std::uint32_t>::check_(a)) {
    auto u = py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!u) throw py::error_already_set();
    ids.data = u.data();
    ids.owner = std::move(u);
    return ids;
  }
  py::array_t<std::uint32_t> converted;
  if (ids.n == 0) {
    converted = py::array_t<std::uint32_t>(0);
  } else if (kind == 'i') {
    converted = convert_ids<std::int64_t>(a, what, are_ids);
  } else if (kind == 'u') {
    converted = convert_ids<std::uint64_t>(a, what, are_ids);
  } else if (kind == 'O') {
    converted = convert_object_ids(a, what, are_ids);
  } else if (kind == 'f') {
    refuse(std::string(what) + " must be uint32 (or integers in its range), not " + dtype_text(a));
  } else {
    throw py::type_error(std::string(what) + " must be uint32 (or integers in its range), not " + dtype_text(a));
  }
  ids.data = converted.data();
  ids.owner = std::move(converted);
  return ids;
}

// ---- results ---------------------------------------------------------------

// A (k, 2) uint32 array over `pairs`, which it takes: no copy.
template <class P>
py::array_t<std::uint32_t> take_pairs(std::vector<P>&& pairs) {
  auto* owner = new std::vector<P>(std::move(pairs));
  py::capsule free_owner(owner, [](void* p) { delete static_cast<std::vector<P>*>(p); });
  const auto k = static_cast<py::ssize_t>(owner->size());
  return py::array_t<std::uint32_t>({k, py::ssize_t{2}}, {py::ssize_t{8}, py::ssize_t{4}},
                                    reinterpret_cast<const std::uint32_t*>(owner->data()), free_owner);
}

// A (k, 2) uint32 array holding a copy of `pairs`.
py::array_t<std::uint32_t> copy_pairs(std::span<const Pair> pairs) {
  py::array_t<std::uint32_t> out({static_cast<py::ssize_t>(pairs.size()), py::ssize_t{2}});
  if (!pairs.empty()) std::memcpy(out.mutable_data(), pairs.data(), pairs.size_bytes());
  return out;
}

// (n, 2*dims) float32 copy of `boxes` (3D, or 2D dropping z).
py::array_t<float> boxes_array(const std::vector<Box3>& boxes, int dims) {
  const auto n = static_cast<py::ssize_t>(boxes.size());
  py::array_t<float> out({n, py::ssize_t{2 * dims}});
  float* dst = out.mutable_data();
  for (const Box3& b : boxes) {
    for (int k = 0; k < dims; ++k) *dst++ = b.min[k];
    for (int k = 0; k < dims; ++k) *dst++ = b.max[k];
  }
  return out;
}

py::array_t<std::uint32_t> ids_array(const std::vector<Id>& ids) {
  py::array_t<std::uint32_t> out(static_cast<py::ssize_t>(ids.size()));
  if (!ids.empty()) std::memcpy(out.mutable_data(), ids.data(), ids.size() * sizeof(Id));
  return out;
}

// ---- threads ---------------------------------------------------------------

// `threads` as checked by as_threads(); 1: none.
std::unique_ptr<ThreadPool> make_pool(unsigned threads) {
  if (threads == 1) return nullptr;
  return std::make_unique<ThreadPool>(threads);
}

// ---- one-shot queries ------------------------------------------------------

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

// ---- the broad phase -------------------------------------------------------

class PyBroadPhase {
  // Runs `f` holding the lock, without the GIL (so a holder that wants the
  // GIL back never waits on us).
  template <class F>
  auto locked(F f) {
    py::gil_scoped_release release;
    std::lock_guard lock(mutex_);
    return f();
  }

 public:
  PyBroadPhase(const std::string& algorithm, py::handle dims_obj, py::handle threads_obj, py::handle max_pairs_obj) {
    const int dims = as_dims(dims_obj);
    const unsigned threads = as_threads(threads_obj);
    const std::size_t max_pairs = as_unsigned(max_pairs_obj, "max_pairs", 0, std::numeric_limits<std::size_t>::max(),
                                              "an integer in [0, 2**64) (0: no budget)");
    Status why;
    broad_phase_ =
        BroadPhase::create(algorithm, Options{.dims = dims, .threads = threads, .max_pairs = max_pairs}, &why);
    if (!broad_phase_) {
      check(why, "BroadPhase('" + algorithm + "', dims=" + std::to_string(dims) +
                     ", threads=" + std::to_string(threads) + "): ");
    }
  }

  // Filters: none when neither category nor mask is given, else the
  // default for the part not given.
  void add(py::handle ids_obj, py::handle boxes_obj, py::handle category, py::handle mask, bool is_static) {
    const Ids ids = as_ids(ids_obj, "ids");
    const FilterFields fields = as_filter_fields(category, mask, ids.n);
    std::vector<Filter> filters;
    if (fields.given()) filters = fields.filters(std::vector<Filter>(ids.n));
    stage(Operation::kAdd, ids, boxes_obj, filters, is_static ? Motion::kStatic : Motion::kDynamic);
  }
  void move(py::handle ids_obj, py::handle boxes_obj) {
    stage(Operation::kMove, as_ids(ids_obj, "ids"), boxes_obj, {}, Motion::kDynamic);
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
      std::lock_guard lock(mutex_);
      s = broad_phase_->ray_cast(ray, hits, mask);
    }
    check(s);
    py::array_t<std::uint32_t> ids(static_cast<py::ssize_t>(hits.size()));
    py::array_t<float> t(static_cast<py::ssize_t>(hits.size()));
    for (std::size_t k = 0; k < hits.size(); ++k) {
      ids.mutable_data()[k] = hits[k].id;
      t.mutable_data()[k] = hits[k].t;
    }
    return py::make_tuple(ids, t);
  }

  // The first hit, (id, t), or None.
  py::object ray_cast_closest(py::handle origin, py::handle direction, py::handle max_t, py::handle mask_obj) {
    const Ray3 ray = as_ray(origin, direction, max_t);
    const std::uint32_t mask = as_uint32(mask_obj, "mask");
    std::optional<RayHit> hit;
    Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      s = broad_phase_->ray_cast_closest(ray, hit, mask);
    }
    check(s);
    if (!hit) return py::none();
    return py::make_tuple(hit->id, hit->t);
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
    std::lock_guard lock(mutex_);
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
      std::lock_guard lock(mutex_);
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
  void stage(Operation op, const Ids& ids, py::handle boxes_obj, std::span<const Filter> filters, Motion motion) {
    const int dims = broad_phase_->options().dims;
    const Boxes boxes = as_boxes(boxes_obj, dims, "boxes");
    Status s;
    {
      py::gil_scoped_release release;
      std::lock_guard lock(mutex_);
      if (dims == 2) {
        s = op == Operation::kAdd ? broad_phase_->add(ids.span(), boxes.box2(), filters, motion)
                                  : broad_phase_->move(ids.span(), boxes.box2());
      } else {
        s = op == Operation::kAdd ? broad_phase_->add(ids.span(), boxes.box3(), filters, motion)
                                  : broad_phase_->move(ids.span(), boxes.box3());
      }
    }
    check(s);
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
      std::lock_guard lock(mutex_);
      s = broad_phase_->query(queries, ids, offsets, mask);
    }
    check(s);
    py::array_t<std::uint64_t> offsets_array(static_cast<py::ssize_t>(offsets.size()));
    std::copy(offsets.begin(), offsets.end(), offsets_array.mutable_data());
    return py::make_tuple(ids_array(ids), offsets_array);
  }

  // The categories and masks given to add() or set_filter(): each None (not
  // given), an integer for every id, or one per id.
  struct FilterFields {
    std::optional<std::vector<std::uint32_t>> category, mask;

    bool given() const { return category || mask; }
    // `filters` (one per id) with the parts given replaced.
    std::vector<Filter> filters(std::vector<Filter> filters) const {
      for (std::size_t k = 0; k < filters.size(); ++k) {
        if (category) filters[k].category = (*category)[k];
        if (mask) filters[k].mask = (*mask)[k];
      }
      return filters;
    }
  };

  static FilterFields as_filter_fields(py::handle category, py::handle mask, std::size_t n) {
    const auto field = [&](py::handle values, const char* what) -> std::optional<std::vector<std::uint32_t>> {
      if (values.is_none()) return std::nullopt;
      const bool is_array = py::isinstance<py::array>(values);
      const bool scalar = is_array ? py::reinterpret_borrow<py::array>(values).ndim() == 0
                                   : !py::isinstance<py::sequence>(values) || py::isinstance<py::str>(values) ||
                                         py::isinstance<py::bytes>(values);
      if (scalar) {
        return std::vector<std::uint32_t>(n, as_uint32(values, what));
      }
      const Ids per_id = as_ids(values, what, false);
      if (per_id.n != n) {
        refuse(std::string(what) + " must be an integer or hold one value per id (" + std::to_string(n) + "), not " +
               std::to_string(per_id.n));
      }
      return std::vector<std::uint32_t>(per_id.data, per_id.data + n);
    };
    FilterFields fields;
    fields.category = field(category, "category");
    fields.mask = field(mask, "mask");
    return fields;
  }

  // A ray of the broad phase's dimensions, lifted to 3D; floats as boxes take them.
  Ray3 as_ray(py::handle origin_obj, py::handle direction_obj, py::handle max_t) const {
    const int dims = broad_phase_->options().dims;
    const std::array<float, 3> origin = as_vector(origin_obj, dims, "origin");
    const std::array<float, 3> direction = as_vector(direction_obj, dims, "direction");
    return Ray3{origin, direction, as_exact_float(max_t, "max_t")};
  }

  std::unique_ptr<BroadPhase> broad_phase_;
  std::mutex mutex_;
};

// ---- traces ----------------------------------------------------------------

[[noreturn]] void raise_trace_error(const std::string& where, const TraceError& error) {
  py::object e = py::reinterpret_borrow<py::object>(trace_error_type)(where + ":" + std::to_string(error.line) + ": " +
                                                                      error.reason);
  e.attr("line") = error.line;
  e.attr("reason") = error.reason;
  e.attr("code") = "invalid_trace";
  e.attr("operation") = py::none();
  e.attr("id") = py::none();
  e.attr("index") = py::none();
  PyErr_SetObject(trace_error_type.ptr(), e.ptr());
  throw py::error_already_set();
}

// A trace, and the ids live after its last frame once append() needs them
// (to refuse what read_trace() would); found from the frames on the first
// append, kept up to date after.
struct PyTrace {
  std::shared_ptr<Trace> trace = std::make_shared<Trace>();
  std::optional<std::unordered_set<Id>> live;
};

// `live` after `frame`: its removed ids out, its added ids in.
void apply_frame(std::unordered_set<Id>& live, const TraceFrame& frame) {
  for (const Id id : frame.removed) live.erase(id);
  live.insert(frame.added.begin(), frame.added.end());
}

std::unordered_set<Id>& live_ids(PyTrace& t) {
  if (!t.live) {
    t.live.emplace();
    for (const TraceFrame& frame : t.trace->frames) apply_frame(*t.live, frame);
  }
  return *t.live;
}

PyTrace make_trace(py::handle dims) {
  PyTrace t;
  t.trace->dims = as_dims(dims);
  return t;
}

// [[noreturn]] for the id errors of a frame below.
[[noreturn]] void refuse_frame(std::size_t frame, StatusCode code, Operation op, Id id, std::size_t index) {
  throw StatusError{Status::id_error(code, op, id, index), "frame " + std::to_string(frame) + ": "};
}

// Checks the ids of frame `index` as read_trace() checks the lines that
// write_trace() writes for it (removes, moves, adds, filters, in that
// order) against the ids `live` before it: a second operation on an id in
// the frame, an add of a live id, a remove, move or filter of an id that is
// not live. Throws the first refusal, "frame 3: move of id 9: id is not live".
void check_frame_ids(const std::unordered_set<Id>& live, const TraceFrame& frame, std::size_t index) {
  std::unordered_set<Id> touched;  // ids with an operation in this frame
  const auto check_ids = [&](std::span<const Id> ids, Operation op) {
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const Id id = ids[i];
      if (!touched.insert(id).second) refuse_frame(index, StatusCode::kRepeatedId, op, id, i);
      // An id touched earlier in the frame was refused above, so `live` is
      // still the state before the frame for every id that gets here.
      if (op == Operation::kAdd && live.contains(id)) refuse_frame(index, StatusCode::kDuplicateId, op, id, i);
      if (op != Operation::kAdd && !live.contains(id)) refuse_frame(index, StatusCode::kUnknownId, op, id, i);
    }
  };
  check_ids(frame.removed, Operation::kRemove);
  check_ids(frame.moved, Operation::kMove);
  check_ids(frame.added, Operation::kAdd);
  check_ids(frame.filtered, Operation::kSetFilter);
}

// Boxes of a trace frame, checked like a broad phase checks them, lifted to 3D.
std::vector<Box3> trace_boxes(py::handle obj, int dims, Operation op, const Ids& ids) {
  std::vector<Box3> out;
  if (obj.is_none()) {
    if (ids.n != 0) check(Status::size_mismatch(op, ids.n, 0));
    return out;
  }
  const char* what = op == Operation::kAdd ? "added_boxes" : op == Operation::kMove ? "moved_boxes" : "query_boxes";
  const Boxes boxes = as_boxes(obj, dims, what);
  if (boxes.n != ids.n) check(Status::size_mismatch(op, ids.n, boxes.n));
  out.resize(boxes.n);
  for (std::size_t i = 0; i < boxes.n; ++i) {
    const Box3 b = dims == 2 ? lift(boxes.box2()[i]) : boxes.box3()[i];
    if (const BoxCheck c = check_box(b); !c) check(Status::invalid_box(op, ids.data[i], i, c));
    out[i] = b;
  }
  return out;
}

std::vector<Id> trace_ids(py::handle obj, const char* what, Ids& ids, bool are_ids = true) {
  if (obj.is_none()) return {};
  ids = as_ids(obj, what, are_ids);
  return {ids.data, ids.data + ids.n};
}

// Filters from a (k, 2) array of (category, mask) rows, k == `n`; None: none.
std::vector<Filter> trace_filters(py::handle obj, const char* what, std::size_t n) {
  if (obj.is_none()) return {};
  py::array a = to_array(obj, what);
  if (!(a.ndim() == 2 && a.shape(1) == 2) && !(a.ndim() == 1 && a.shape(0) == 0)) {
    refuse(std::string(what) + " must have shape (k, 2) (category, mask), not " + shape_text(a));
  }
  const Ids words = as_ids(py::array::ensure(a.attr("reshape")(-1)), what, false);
  if (words.n != 2 * n) {
    refuse(std::string(what) + ": " + std::to_string(words.n / 2) + " rows for " + std::to_string(n) + " ids");
  }
  std::vector<Filter> out(n);
  for (std::size_t k = 0; k < n; ++k) out[k] = Filter{words.data[2 * k], words.data[2 * k + 1]};
  return out;
}

// One flag per added id (`n`): bools, or numbers that are each 0 or 1.
std::vector<std::uint8_t> trace_flags(py::handle obj, const char* what, std::size_t n) {
  py::array a = to_array(obj, what);
  const char kind = a.dtype().kind();
  if (kind != 'b' && kind != 'i' && kind != 'u' && kind != 'f') {
    throw py::type_error(std::string(what) + " must hold bools, not " + dtype_text(a));
  }
  if (a.ndim() != 1 || static_cast<std::size_t>(a.shape(0)) != n) {
    refuse(std::string(what) + " must be 1-D, one flag per added id (" + std::to_string(n) + "), not of shape " +
           shape_text(a));
  }
  const auto values = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!values) throw py::error_already_set();
  std::vector<std::uint8_t> flags(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double v = values.data()[k];
    if (v != 0 && v != 1)
      refuse(
          std::string(what) + "[" + std::to_string(k) + "] = " + value_text(v) + " is not a flag (True, False, 1 or 0)",
          k);
    flags[k] = v != 0 ? 1 : 0;
  }
  return flags;
}

// (k, 2) uint32 copy of `filters`: (category, mask) rows.
py::array_t<std::uint32_t> filters_array(std::span<const Filter> filters) {
  py::array_t<std::uint32_t> out({static_cast<py::ssize_t>(filters.size()), py::ssize_t{2}});
  std::uint32_t* dst = out.mutable_data();
  for (const Filter f : filters) {
    *dst++ = f.category;
    *dst++ = f.mask;
  }
  return out;
}

void trace_append(PyTrace& t, py::handle removed, py::handle moved, py::handle moved_boxes, py::handle added,
                  py::handle added_boxes, py::handle added_static, py::handle added_filters, py::handle filtered,
                  py::handle filters, py::handle query_labels, py::handle query_boxes, py::handle query_masks) {
  TraceFrame frame;
  const int dims = t.trace->dims;
  Ids removed_ids, moved_ids, added_ids, filtered_ids, label_ids;
  frame.removed = trace_ids(removed, "removed", removed_ids);
  frame.moved = trace_ids(moved, "moved", moved_ids);
  frame.moved_boxes = trace_boxes(moved_boxes, dims, Operation::kMove, moved_ids);
  frame.added = trace_ids(added, "added", added_ids);
  frame.added_boxes = trace_boxes(added_boxes, dims, Operation::kAdd, added_ids);
  if (!added_static.is_none()) frame.added_static = trace_flags(added_static, "added_static", frame.added.size());
  frame.added_filters = trace_filters(added_filters, "added_filters", frame.added.size());
  frame.filtered = trace_ids(filtered, "filtered", filtered_ids);
  frame.filters = trace_filters(filters, "filters", frame.filtered.size());
  if (frame.filters.size() != frame.filtered.size()) refuse("filters: one row per filtered id");
  // Query boxes are checked as BroadPhase.query() checks them.
  const std::vector<Id> labels = trace_ids(query_labels, "query_labels", label_ids, false);
  const std::vector<Box3> boxes = trace_boxes(query_boxes, dims, Operation::kQuery, label_ids);
  Ids mask_ids;
  const std::vector<Id> masks = trace_ids(query_masks, "query_masks", mask_ids, false);
  if (!query_masks.is_none() && masks.size() != labels.size()) refuse("query_masks: one mask per query label");
  for (std::size_t q = 0; q < labels.size(); ++q) {
    frame.queries.push_back(TraceQuery{labels[q], boxes[q], masks.empty() ? kAllCategories : masks[q]});
  }
  std::unordered_set<Id>& live = live_ids(t);
  check_frame_ids(live, frame, t.trace->frames.size());
  t.trace->frames.push_back(std::move(frame));
  apply_frame(live, t.trace->frames.back());
}

py::dict trace_frame(const PyTrace& t, py::ssize_t index) {
  const auto count = static_cast<py::ssize_t>(t.trace->frames.size());
  if (index < 0) index += count;
  if (index < 0 || index >= count) throw py::index_error("trace frame index out of range");
  const TraceFrame& f = t.trace->frames[static_cast<std::size_t>(index)];
  py::dict d;
  d["removed"] = ids_array(f.removed);
  d["moved"] = ids_array(f.moved);
  d["moved_boxes"] = boxes_array(f.moved_boxes, t.trace->dims);
  d["added"] = ids_array(f.added);
  d["added_boxes"] = boxes_array(f.added_boxes, t.trace->dims);
  // Version 2, with the defaults spelt out where the frame has none.
  py::array_t<bool> is_static(static_cast<py::ssize_t>(f.added.size()));
  std::vector<Filter> added_filters(f.added.size());
  for (std::size_t i = 0; i < f.added.size(); ++i) {
    is_static.mutable_data()[i] = f.added_is_static(i);
    added_filters[i] = f.added_filter(i);
  }
  d["added_static"] = is_static;
  d["added_filters"] = filters_array(added_filters);
  d["filtered"] = ids_array(f.filtered);
  d["filters"] = filters_array(f.filters);
  std::vector<Id> labels, masks;
  std::vector<Box3> boxes;
  for (const TraceQuery& q : f.queries) {
    labels.push_back(q.label);
    boxes.push_back(q.box);
    masks.push_back(q.mask);
  }
  d["query_labels"] = ids_array(labels);
  d["query_boxes"] = boxes_array(boxes, t.trace->dims);
  d["query_masks"] = ids_array(masks);
  return d;
}

PyTrace parse_trace(const std::string& text, const std::string& where) {
  TraceReadResult read;
  {
    py::gil_scoped_release release;
    read = read_trace(std::string_view(text));
  }
  if (read.error) raise_trace_error(where, *read.error);
  PyTrace t;
  *t.trace = std::move(read.trace);
  return t;
}

// OSError (FileNotFoundError, PermissionError, ...) for a file that could not
// be opened, read or written, from errno.
[[noreturn]] void raise_os_error(const std::string& path) {
  if (errno != 0) {
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
  } else {
    PyErr_SetString(PyExc_OSError, ("cannot read or write '" + path + "'").c_str());
  }
  throw py::error_already_set();
}

PyTrace read_trace_file(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) raise_os_error(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse_trace(buffer.str(), path);
}

std::string format_trace(const PyTrace& t) {
  std::ostringstream out;
  py::gil_scoped_release release;
  write_trace(out, *t.trace);
  return std::move(out).str();
}

void write_trace_file(const std::string& path, const PyTrace& t) {
  errno = 0;
  std::ofstream out(path, std::ios::binary);
  if (!out) raise_os_error(path);
  {
    py::gil_scoped_release release;
    write_trace(out, *t.trace);
    out.flush();
  }
  if (!out) raise_os_error(path);
}

// Runs `trace` through a fresh broad phase, collecting per frame what
// `report` asks: "delta" -> [(created, deleted)], "pairs" -> [sorted pairs],
// "hash" -> uint64 array of pair-set hashes, "time" -> float64 array of each
// frame's seconds (staging and update(), timed in C++), "none" -> None.
py::object replay(const PyTrace& t, const std::string& algorithm, py::handle threads_obj, const std::string& report) {
  if (report != "delta" && report != "pairs" && report != "hash" && report != "time" && report != "queries" &&
      report != "none") {
    refuse("report must be 'delta', 'pairs', 'hash', 'time', 'queries' or 'none', not '" + report + "'");
  }
  const unsigned threads = as_threads(threads_obj);
  Status why;
  auto broad_phase = BroadPhase::create(algorithm, Options{.dims = t.trace->dims, .threads = threads}, &why);
  if (!broad_phase) check(why);
  std::vector<std::pair<std::vector<Pair>, std::vector<Pair>>> deltas;
  std::vector<std::vector<Pair>> pair_sets;
  std::vector<std::uint64_t> hashes;
  std::vector<double> seconds;
  std::vector<std::vector<std::pair<std::uint32_t, std::vector<Id>>>> answers;  // per frame: (label, ids)
  std::optional<StatusError> refused;
  {
    py::gil_scoped_release release;
    std::vector<Pair> sorted;
    const Trace& trace = *t.trace;
    for (std::size_t f = 0; f < trace.frames.size() && !refused; ++f) {
      const TraceFrame& frame = trace.frames[f];
      const auto start = std::chrono::steady_clock::now();
      if (Status s = stage_frame(*broad_phase, frame); !s) {
        refused = StatusError{s, "frame " + std::to_string(f) + ": "};
        break;
      }
      const FrameDelta& delta = broad_phase->update();
      if (!delta.status) {
        refused = StatusError{delta.status, "frame " + std::to_string(f) + ": "};
        break;
      }
      if (report == "time") {
        seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      } else if (report == "delta") {
        deltas.emplace_back(std::vector<Pair>(delta.created.begin(), delta.created.end()),
                            std::vector<Pair>(delta.deleted.begin(), delta.deleted.end()));
      } else if (report == "pairs") {
        broad_phase->sorted_pairs(sorted);
        pair_sets.push_back(sorted);
      } else if (report == "hash") {
        broad_phase->sorted_pairs(sorted);
        hashes.push_back(pair_set_hash(sorted));
      } else if (report == "queries") {  // the trace checked every query box: none is refused
        auto& frame_answers = answers.emplace_back();
        for (const TraceQuery& q : frame.queries) {
          std::vector<Id> ids;
          (void)broad_phase->query(q.box, ids, q.mask);
          frame_answers.emplace_back(q.label, std::move(ids));
        }
      }
    }
  }
  if (refused) throw *refused;
  if (report == "delta") {
    py::list out;
    for (auto& [created, deleted] : deltas)
      out.append(py::make_tuple(take_pairs(std::move(created)), take_pairs(std::move(deleted))));
    return out;
  }
  if (report == "pairs") {
    py::list out;
    for (auto& pairs : pair_sets) out.append(take_pairs(std::move(pairs)));
    return out;
  }
  if (report == "queries") {
    py::list out;
    for (auto& frame_answers : answers) {
      py::list frame;
      for (auto& [label, ids] : frame_answers) frame.append(py::make_tuple(label, ids_array(ids)));
      out.append(frame);
    }
    return out;
  }
  if (report == "time") {
    py::array_t<double> out(static_cast<py::ssize_t>(seconds.size()));
    if (!seconds.empty()) std::memcpy(out.mutable_data(), seconds.data(), seconds.size() * sizeof(double));
    return out;
  }
  if (report == "hash") {
    py::array_t<std::uint64_t> out(static_cast<py::ssize_t>(hashes.size()));
    if (!hashes.empty()) std::memcpy(out.mutable_data(), hashes.data(), hashes.size() * sizeof(std::uint64_t));
    return out;
  }
  return py::none();
}

std::uint64_t hash_pairs(py::handle pairs_obj) {
  py::array a = to_array(pairs_obj, "pairs");
  if (!(a.ndim() == 2 && a.shape(1) == 2) && !(a.ndim() == 1 && a.shape(0) == 0)) {
    refuse("pairs must have shape (k, 2), not " + shape_text(a));
  }
  if (a.ndim() == 1) return pair_set_hash({});
  auto flat = py::array::ensure(a.attr("reshape")(-1));
  const Ids ids = as_ids(flat, "pairs");
  std::vector<Pair> pairs(ids.n / 2);
  for (std::size_t k = 0; k < pairs.size(); ++k) pairs[k] = Pair{ids.data[2 * k], ids.data[2 * k + 1]};
  return pair_set_hash(pairs);
}

}  // namespace
}  // namespace sapling::python

PYBIND11_MODULE(_sapling, m) {
  using namespace sapling;
  using namespace sapling::python;
  m.doc() =
      "sapling: exact broad-phase collision detection (numpy in, numpy out). What is refused raises "
      "sapling.Error (a ValueError): a Status of the library, a value out of range or not an integer, a shape, a "
      "float that is not exactly a float32; TypeError only for an argument that is not a real number where numbers "
      "are due (a string, None, a bool, a complex or object dtype); OSError for a file.";

  error_type = PyErr_NewExceptionWithDoc(
      "sapling.Error",
      "A call refused by sapling (a ValueError): the message names the argument, or is the library's Status "
      "message, with the fields code (the Status's, e.g. 'invalid_box'; 'invalid_argument' for an argument the "
      "binding refuses before the library sees it; 'invalid_trace' for a TraceError), operation ('add', 'move', "
      "'remove', ..., or None for a one-shot query and the binding's refusals), id and index (or None).",
      PyExc_ValueError, nullptr);
  m.attr("Error") = error_type;
  trace_error_type = PyErr_NewExceptionWithDoc(
      "sapling.TraceError",
      "A trace rejected by the reader (a sapling.Error, code 'invalid_trace'): 'WHERE:LINE: reason', with fields "
      "line and reason.",
      error_type.ptr(), nullptr);
  m.attr("TraceError") = trace_error_type;
  m.attr("ALL_CATEGORIES") = kAllCategories;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      raise_status(e);
    } catch (const ArgumentError& e) {
      raise_argument_error(e);
    }
  });

  m.def(
      "_algorithms",
      [] {
        py::list out;
        for (const AlgorithmInfo& info : algorithms()) {
          out.append(py::make_tuple(info.name, info.description, info.accepts_any_box));
        }
        return out;
      },
      "Every registered algorithm as (name, description, accepts_any_box).");

  py::class_<PyBroadPhase>(m, "BroadPhase",
                           "The persistent broad phase: stage add/move/remove batches, then update() each frame.")
      .def(py::init<const std::string&, py::handle, py::handle, py::handle>(), py::arg("algorithm") = "auto",
           py::arg("dims") = 3, py::arg("threads") = 1, py::arg("max_pairs") = 0,
           "A broad phase running `algorithm` (see algorithms()) on boxes of `dims` (2 or 3) dimensions, on "
           "`threads` threads (0 to 256; 0: all hardware threads); max_pairs > 0 refuses a frame holding more pairs.")
      .def("add", &PyBroadPhase::add, py::arg("ids"), py::arg("boxes"), py::arg("category") = py::none(),
           py::arg("mask") = py::none(), py::arg("static") = false,
           "Stages objects to appear at the next update(): ids (n,) uint32, boxes (n, 2*dims) float32; "
           "category and mask (an integer for all, or one per id; defaults 1 and 0xffffffff) filter their pairs, "
           "and static objects never pair with each other (docs/trace-format.md, version 2).")
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
      .def("move", &PyBroadPhase::move, py::arg("ids"), py::arg("boxes"), "Stages new boxes for live objects.")
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

  py::class_<PyTrace>(m, "Trace", "A scene trace (docs/trace-format.md): frames of remove, move and add.")
      .def(py::init(&make_trace), py::arg("dims") = 3)
      .def_property_readonly("dims", [](const PyTrace& t) { return t.trace->dims; })
      .def_property_readonly(
          "version", [](const PyTrace& t) { return t.trace->version; },
          "The header's version, 1 or 2 (to_text() writes 2 when a frame uses filters, static objects or queries).")
      .def("__len__", [](const PyTrace& t) { return t.trace->frames.size(); })
      .def("__getitem__", &trace_frame, py::arg("index"),
           "Frame `index` as a dict of removed, moved, moved_boxes, added, added_boxes, and version 2's "
           "added_static (bool), added_filters ((n, 2) category, mask), filtered, filters, query_labels, "
           "query_boxes, query_masks (copies).")
      .def("append", &trace_append, py::arg("removed") = py::none(), py::arg("moved") = py::none(),
           py::arg("moved_boxes") = py::none(), py::arg("added") = py::none(), py::arg("added_boxes") = py::none(),
           py::arg("added_static") = py::none(), py::arg("added_filters") = py::none(),
           py::arg("filtered") = py::none(), py::arg("filters") = py::none(), py::arg("query_labels") = py::none(),
           py::arg("query_boxes") = py::none(), py::arg("query_masks") = py::none(),
           "Appends a frame; boxes are checked as add(), move() and query() check them, ids as read_trace() "
           "checks them (an add of a live id, a remove, move or filter of one that is not, two operations on one "
           "id), so that what write_trace() writes reads back; a refused frame raises sapling.Error "
           "('frame 3: move of id 9: id is not live') and leaves the trace as it was. Version 2: "
           "added_static and added_filters ((n, 2) category, mask) per added id, filtered ids with their filters, "
           "queries as labels, boxes and masks (default every category).")
      .def("to_text", &format_trace, "The trace in the text format.")
      .def("__repr__", [](const PyTrace& t) {
        return "<sapling.Trace dims=" + std::to_string(t.trace->dims) + ": " + std::to_string(t.trace->frames.size()) +
               " frames>";
      });

  m.def("read_trace", &read_trace_file, py::arg("path"), "Reads and checks a trace file; raises sapling.TraceError.");
  m.def(
      "parse_trace", [](const std::string& text) { return parse_trace(text, "<text>"); }, py::arg("text"),
      "Reads and checks a trace from a string.");
  m.def("write_trace", &write_trace_file, py::arg("path"), py::arg("trace"),
        "Writes a trace file; floats in the shortest form that reads back exactly.");
  m.def("replay", &replay, py::arg("trace"), py::arg("algorithm") = "auto", py::arg("threads") = 1,
        py::arg("report") = "delta",
        "Runs a trace through a fresh broad phase: report='delta' -> [(created, deleted)] per frame, 'pairs' -> "
        "[sorted pairs], 'hash' -> uint64 array of pair-set hashes, 'time' -> float64 array of each frame's "
        "seconds (staging and update(), timed in C++), 'queries' -> per frame the list of its region queries' "
        "(label, ids) in trace order (ids ascending, as `sapling replay` reports them), 'none' -> None. "
        "Version-2 frames are staged with their filters and static objects.");
  m.def("pair_set_hash", &hash_pairs, py::arg("pairs"),
        "FNV-1a 64-bit hash of a sorted (k, 2) pair list (the trace format's --report hash).");
  m.def(
      "id_list_hash", [](py::handle ids) { return id_list_hash(as_ids(ids, "ids").span()); }, py::arg("ids"),
      "FNV-1a 64-bit hash of a query's ascending ids (the trace format's query Q K H).");

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
