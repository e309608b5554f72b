// The trace writer: frames in the text format of docs/trace-format.md
// (version 1), in a form the reader gives back bit for bit.
//
// Layout: the header and a `dims` line always (even for 3D, so a reader never
// has to guess), then per frame `frame` and its operations, removes first,
// then moves, then adds. Within one frame an id has one operation at most, so
// the order of the groups changes nothing of the meaning.
//
// Numbers: std::to_chars's shortest form that reads back to the same float,
// which also gives "inf", "-inf" and "-0" (so -0.0 stays -0.0). Each frame is
// built in one buffer and written with one call.
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

}  // namespace

TraceWriter::TraceWriter(std::ostream& out, int dims) : out_(out), dims_(dims == 2 ? 2 : 3) {
  assert(dims == 2 || dims == 3);
  out_ << "sapling-trace 1\ndims " << dims_ << '\n';
}

void TraceWriter::write_frame(const TraceFrame& frame) {
  write_frame(frame.removed, frame.moved, frame.moved_boxes, frame.added, frame.added_boxes);
}

void TraceWriter::write_frame(std::span<const Id> removed, std::span<const Id> moved, std::span<const Box3> moved_boxes,
                              std::span<const Id> added, std::span<const Box3> added_boxes) {
  assert(moved.size() == moved_boxes.size() && added.size() == added_boxes.size());
  line_.clear();
  line_ += "frame\n";
  for (const Id id : removed) {
    append_op(line_, "remove", id);
    line_ += '\n';
  }
  // Bounded by both spans, so a size mismatch cannot read past either.
  const std::size_t moves = moved.size() < moved_boxes.size() ? moved.size() : moved_boxes.size();
  for (std::size_t i = 0; i < moves; ++i) {
    append_op(line_, "move", moved[i]);
    append_box(line_, moved_boxes[i], dims_);
    line_ += '\n';
  }
  const std::size_t adds = added.size() < added_boxes.size() ? added.size() : added_boxes.size();
  for (std::size_t i = 0; i < adds; ++i) {
    append_op(line_, "add", added[i]);
    append_box(line_, added_boxes[i], dims_);
    line_ += '\n';
  }
  out_.write(line_.data(), static_cast<std::streamsize>(line_.size()));
}

void write_trace(std::ostream& out, const Trace& trace) {
  TraceWriter writer(out, trace.dims);
  for (const TraceFrame& frame : trace.frames) writer.write_frame(frame);
}

}  // namespace sapling
