// Traces (docs/trace-format.md) and their replay: sapling.Trace built frame
// by frame with append() (checked as read_trace() checks a file, so that
// what write_trace() writes reads back) or read, parsed and written through
// the library's reader and writer; replay() runs one through a fresh broad
// phase and reports per frame the delta, the pairs, their hash, the time or
// the region queries' answers; pair_set_hash and id_list_hash are the
// format's hashes.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "binding.hpp"
#include "sapling/broad_phase.hpp"

namespace sapling::python {
namespace {

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

// ---- replay ----------------------------------------------------------------

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

void bind_traces(py::module_& m) {
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
}

}  // namespace sapling::python
