// Scene traces: what a simulation tells its broad phase, frame by frame.
// The text format, its errors and the pair-set hash are a contract:
// docs/trace-format.md (version 1).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sapling/box.hpp"
#include "sapling/pair.hpp"

namespace sapling {

/// One frame's operations, grouped by kind. Within a frame an id has at most
/// one operation, so the grouping loses nothing of the meaning. 2D boxes are
/// stored lifted to 3D (z = [0, 0], see lift()).
struct TraceFrame {
  std::vector<Id> removed;
  std::vector<Id> moved;
  std::vector<Box3> moved_boxes;  // parallel to `moved`
  std::vector<Id> added;
  std::vector<Box3> added_boxes;  // parallel to `added`

  bool empty() const noexcept { return removed.empty() && moved.empty() && added.empty(); }
};

struct Trace {
  int dims = 3;  // 2 or 3
  std::vector<TraceFrame> frames;
};

/// Where and why a trace was rejected: printed as `TRACE:LINE: reason`.
struct TraceError {
  std::size_t line = 0;  // 1-based
  std::string reason;
};

/// The frames read in full, and the first error if there was one. On error,
/// `trace.frames` holds every frame that ended before the bad line and nothing
/// of the frame that contains it.
struct TraceReadResult {
  Trace trace;
  std::optional<TraceError> error;
};

/// Reads a whole version-1 trace and checks it completely: syntax, numbers
/// read in full by strtof, box validity, add of a live id, move or remove of
/// an id that is not live, a second operation on one id in one frame.
TraceReadResult read_trace(std::istream& in);
TraceReadResult read_trace(std::string_view text);

/// Writes frames in the text format, one frame at a time, so long generated
/// traces need not be held in memory. Floats are written in the shortest form
/// that reads back to the same float (std::to_chars), so a written trace
/// replays bit for bit.
class TraceWriter {
 public:
  TraceWriter(std::ostream& out, int dims);
  void write_frame(const TraceFrame& frame);
  void write_frame(std::span<const Id> removed, std::span<const Id> moved, std::span<const Box3> moved_boxes,
                   std::span<const Id> added, std::span<const Box3> added_boxes);

 private:
  std::ostream& out_;
  int dims_;
  std::string line_;
};

void write_trace(std::ostream& out, const Trace& trace);

/// FNV-1a 64-bit hash of a sorted pair list, each pair as `a` then `b`, each
/// a little-endian uint32 (the contract's `--report hash`).
std::uint64_t pair_set_hash(std::span<const Pair> sorted_pairs) noexcept;

}  // namespace sapling
