// The trace writer: frames in the text format of docs/trace-format.md
// (version 1, or version 2 where a frame uses its filters, static objects
// or queries), in a form the reader gives back bit for bit.
//
// Layout: the header and a `dims` line always (even for 3D, so a reader never
// has to guess), then per frame `frame` and its operations, removes first,
// then moves, then adds (with `static` and `filter CATEGORY MASK` where they
// differ from the defaults), then filter changes, then the queries in their
// order (with `mask M` where it is not every bit). Within one frame an id has
// one operation at most and the queries see the state after all of them, so
// the order of the groups changes nothing of the meaning.
//
// Numbers: std::to_chars's shortest form that reads back to the same float,
// which also gives "inf", "-inf" and "-0" (so -0.0 stays -0.0). Categories
// and masks in 0x-hexadecimal, which shows their bits. Each frame is built in
// one buffer and written with one call.
#include <algorithm>
#include <cassert>
#include <charconv>
#include <ostream>

#include "sapling/trace.hpp"

namespace sapling {
namespace {

void append_id(std::string& out, Id id) {
  char buf[16];
  const auto result = std::to_chars(buf, buf + sizeof buf, id);
  out.append(buf, result.ptr);
}

void append_hex(std::string& out, std::uint32_t value) {
  char buf[16];
  const auto result = std::to_chars(buf, buf + sizeof buf, value, 16);
  out += "0x";
  out.append(buf, result.ptr);
}

void append_float(std::string& out, float value) {
  char buf[48];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, result.ptr);
}

void append_op(std::string& out, const char* keyword, Id id) {
  out += keyword;
  out += ' ';
  append_id(out, id);
}

// A 2D trace stores boxes lifted to 3D; only x and y go to the file.
void append_box(std::string& out, const Box3& box, int dims) {
  for (int k = 0; k < dims; ++k) {
    out += ' ';
    append_float(out, box.min[k]);
  }
  for (int k = 0; k < dims; ++k) {
    out += ' ';
    append_float(out, box.max[k]);
  }
}

// " CATEGORY MASK"
void append_filter(std::string& out, Filter filter) {
  out += ' ';
  append_hex(out, filter.category);
  out += ' ';
  append_hex(out, filter.mask);
}

// "frame", then the removes and the moves (the part of a frame without attributes).
void append_removes_and_moves(std::string& out, std::span<const Id> removed, std::span<const Id> moved,
                              std::span<const Box3> moved_boxes, int dims) {
  assert(moved.size() == moved_boxes.size());
  out += "frame\n";
  for (const Id id : removed) {
    append_op(out, "remove", id);
    out += '\n';
  }
  // Bounded by both spans, so a size mismatch cannot read past either.
  const std::size_t moves = std::min(moved.size(), moved_boxes.size());
  for (std::size_t i = 0; i < moves; ++i) {
    append_op(out, "move", moved[i]);
    append_box(out, moved_boxes[i], dims);
    out += '\n';
  }
}

}  // namespace

bool TraceFrame::uses_version_2() const noexcept {
  const auto is_set = [](std::uint8_t s) { return s != 0; };
  const auto not_default = [](Filter f) { return f != Filter{}; };
  return !filtered.empty() || !queries.empty() || std::any_of(added_static.begin(), added_static.end(), is_set) ||
         std::any_of(added_filters.begin(), added_filters.end(), not_default);
}

TraceWriter::TraceWriter(std::ostream& out, int dims, int version)
    : out_(out), dims_(dims == 2 ? 2 : 3), version_(version == 2 ? 2 : 1) {
  assert(dims == 2 || dims == 3);
  assert(version == 1 || version == 2);
  out_ << "sapling-trace " << version_ << "\ndims " << dims_ << '\n';
}

void TraceWriter::write_frame(const TraceFrame& frame) {
  assert(version_ == 2 || !frame.uses_version_2());
  line_.clear();
  append_removes_and_moves(line_, frame.removed, frame.moved, frame.moved_boxes, dims_);
  const std::size_t adds = std::min(frame.added.size(), frame.added_boxes.size());
  for (std::size_t i = 0; i < adds; ++i) {
    append_op(line_, "add", frame.added[i]);
    append_box(line_, frame.added_boxes[i], dims_);
    if (frame.added_is_static(i)) line_ += " static";
    if (const Filter filter = frame.added_filter(i); filter != Filter{}) {
      line_ += " filter";
      append_filter(line_, filter);
    }
    line_ += '\n';
  }
  const std::size_t filters = std::min(frame.filtered.size(), frame.filters.size());
  for (std::size_t i = 0; i < filters; ++i) {
    append_op(line_, "filter", frame.filtered[i]);
    append_filter(line_, frame.filters[i]);
    line_ += '\n';
  }
  for (const TraceQuery& query : frame.queries) {
    append_op(line_, "query", query.label);
    append_box(line_, query.box, dims_);
    if (query.mask != kAllCategories) {
      line_ += " mask ";
      append_hex(line_, query.mask);
    }
    line_ += '\n';
  }
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

void TraceWriter::write_frame(std::span<const Id> removed, std::span<const Id> moved, std::span<const Box3> moved_boxes,
                              std::span<const Id> added, std::span<const Box3> added_boxes) {
  assert(added.size() == added_boxes.size());
  line_.clear();
  append_removes_and_moves(line_, removed, moved, moved_boxes, dims_);
  const std::size_t adds = std::min(added.size(), added_boxes.size());
  for (std::size_t i = 0; i < adds; ++i) {
    append_op(line_, "add", added[i]);
    append_box(line_, added_boxes[i], dims_);
    line_ += '\n';
  }
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

void write_trace(std::ostream& out, const Trace& trace) {
  const bool needs_2 =
      std::any_of(trace.frames.begin(), trace.frames.end(), [](const TraceFrame& f) { return f.uses_version_2(); });
  TraceWriter writer(out, trace.dims, trace.version == 2 || needs_2 ? 2 : 1);
  for (const TraceFrame& frame : trace.frames) writer.write_frame(frame);
}

}  // namespace sapling
