// The binding's error rule and argument conversions (binding.hpp, which
// holds the input rules): Python objects and numpy arrays checked and read
// as the library's boxes, ids and numbers, or refused before the library
// sees them (ArgumentError); the library's Status (StatusError), a refused
// trace and a file that cannot be opened raised as sapling.Error,
// sapling.TraceError and OSError; results handed back as numpy arrays.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <sstream>
#include <type_traits>

#include "binding.hpp"

namespace sapling::python {

// numpy rows of 4 or 6 floats are read as Box2 or Box3 in place.
static_assert(std::is_standard_layout_v<Box3> && sizeof(Box3) == 6 * sizeof(float));
static_assert(std::is_standard_layout_v<Box2> && sizeof(Box2) == 4 * sizeof(float));
static_assert(sizeof(Pair) == 2 * sizeof(std::uint32_t) && sizeof(IndexPair) == 2 * sizeof(std::uint32_t));

[[noreturn]] void refuse(std::string message, std::optional<std::size_t> index) {
  throw ArgumentError{std::move(message), index};
}

namespace {

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

}  // namespace

void check(const Status& s, std::string prefix) {
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

namespace {

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

}  // namespace

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

namespace {
constexpr const char* kUint32Range = "an integer in [0, 2**32)";
}  // namespace

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

namespace {

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

}  // namespace

// A value as Python prints it (shortest repr of a float or double); the
// overloads for the dtypes that convert_exact_array() reads.
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

namespace {

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

}  // namespace

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

// Rays' origins or directions: shape (n, dims), or an empty 1-D array for
// no rays; values as for boxes.
Vectors as_vectors(py::handle obj, int dims, const char* what) {
  py::array a = to_array(obj, what);
  const char kind = a.dtype().kind();
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    throw py::type_error(std::string(what) + " must hold real numbers, not " + dtype_text(a));
  }
  const bool none = a.ndim() == 1 && a.shape(0) == 0;
  if (!none && (a.ndim() != 2 || a.shape(1) != dims)) {
    refuse(std::string(what) + " must have shape (n, " + std::to_string(dims) + "), not " + shape_text(a));
  }
  Vectors v;
  v.dims = dims;
  v.n = none ? 0 : static_cast<std::size_t>(a.shape(0));
  py::array_t<float> values = exact_float32(a, dims, what);
  v.data = values.data();
  v.owner = std::move(values);
  return v;
}

// ---- ids -------------------------------------------------------------------

namespace {

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

}  // namespace

// A 1-D array of uint32 values (`are_ids`: ids; else categories, masks or
// labels): read in place when uint32, native and contiguous; other integer
// arrays converted when every value is in range. A float array is a value
// refused; another dtype (bool, strings) a TypeError. An empty array of any
// dtype is taken.
Ids as_ids(py::handle obj, const char* what, bool are_ids) {
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

// ---- errors ----------------------------------------------------------------

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

namespace {
void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const StatusError& e) {
    raise_status(e);
  } catch (const ArgumentError& e) {
    raise_argument_error(e);
  }
}
}  // namespace

void bind_errors(py::module_& m) {
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
  py::register_exception_translator(translate);
}

void share_errors(const py::module_& sapling_module) {
  error_type = py::object(sapling_module.attr("Error")).release();
  trace_error_type = py::object(sapling_module.attr("TraceError")).release();
  py::register_local_exception_translator(translate);
}

bool is_scalar(py::handle values) {
  const bool is_array = py::isinstance<py::array>(values);
  return is_array ? py::reinterpret_borrow<py::array>(values).ndim() == 0
                  : !py::isinstance<py::sequence>(values) || py::isinstance<py::str>(values) ||
                        py::isinstance<py::bytes>(values);
}

std::vector<Filter> FilterFields::filters(std::vector<Filter> filters) const {
  for (std::size_t k = 0; k < filters.size(); ++k) {
    if (category) filters[k].category = (*category)[k];
    if (mask) filters[k].mask = (*mask)[k];
  }
  return filters;
}

FilterFields as_filter_fields(py::handle category, py::handle mask, std::size_t n) {
  const auto field = [&](py::handle values, const char* what) -> std::optional<std::vector<std::uint32_t>> {
    if (values.is_none()) return std::nullopt;
    if (is_scalar(values)) return std::vector<std::uint32_t>(n, as_uint32(values, what));
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

}  // namespace sapling::python
