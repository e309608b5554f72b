// Scene traces: what a simulation tells its broad phase, frame by frame.
// The text format, its errors and the hashes of `--report hash` are a
// contract: docs/trace-format.md (version 1, and version 2 with filters,
// static objects and region queries).
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
#include "sapling/filter.hpp"
#include "sapling/pair.hpp"
#include "sapling/status.hpp"

namespace sapling {

class BroadPhase;

/// A region query of a version-2 trace (`query Q box [mask M]`), answered
/// on the state after all operations of its frame.
struct TraceQuery {
  std::uint32_t label = 0;              ///< Q, as written; labels need not be unique
  Box3 box{};                           ///< 2D boxes lifted to 3D
  std::uint32_t mask = kAllCategories;  ///< only objects whose category shares a bit with it
};

/// One frame's operations, grouped by kind, and its queries in order. Within
/// a frame an id has at most one operation, so the grouping loses nothing of
/// the meaning. 2D boxes are stored lifted to 3D (z = [0, 0], see lift()).
struct TraceFrame {
  std::vector<Id> removed;
  std::vector<Id> moved;
  std::vector<Box3> moved_boxes;  // parallel to `moved`
  std::vector<Id> added;
  std::vector<Box3> added_boxes;  // parallel to `added`
  /// Parallel to `added`, or empty: then every added object has the default filter.
  std::vector<Filter> added_filters{};
  /// Parallel to `added` (1: static), or empty: then every added object is dynamic.
  std::vector<std::uint8_t> added_static{};
  /// Live ids given a new filter (`filter ID CATEGORY MASK`).
  std::vector<Id> filtered{};
  std::vector<Filter> filters{};  // parallel to `filtered`
  /// The frame's region queries, in the order they appear.
  std::vector<TraceQuery> queries{};

  /// No operation (queries are not operations: they change nothing).
  bool empty() const noexcept { return removed.empty() && moved.empty() && added.empty() && filtered.empty(); }
  /// The filter of added object `i` (the default where `added_filters` is empty).
  Filter added_filter(std::size_t i) const noexcept { return i < added_filters.size() ? added_filters[i] : Filter{}; }
  /// Whether added object `i` is static.
  bool added_is_static(std::size_t i) const noexcept { return i < added_static.size() && added_static[i] != 0; }
  /// Whether the frame needs version 2: a static or filtered add, a filter operation or a query.
  bool uses_version_2() const noexcept;
};

struct Trace {
  int dims = 3;     // 2 or 3
  int version = 1;  // the header's, 1 or 2; the writer writes 2 also when a frame uses_version_2()
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

/// Reads a whole trace, version 1 or 2, and checks it completely: syntax,
/// numbers read in full by strtof, integers, box validity, add of a live id,
/// move, remove or filter of an id that is not live, a second operation on
/// one id in one frame, version-2 keywords in a version-1 trace.
TraceReadResult read_trace(std::istream& in);
TraceReadResult read_trace(std::string_view text);

/// Writes frames in the text format, one frame at a time, so long generated
/// traces need not be held in memory. Floats are written in the shortest form
/// that reads back to the same float (std::to_chars), so a written trace
/// replays bit for bit. `version` is the header's: a frame that
/// uses_version_2() needs a version-2 writer.
class TraceWriter {
 public:
  TraceWriter(std::ostream& out, int dims, int version = 1);
  void write_frame(const TraceFrame& frame);
  /// A frame of adds, moves and removes only, every object with the defaults.
  void write_frame(std::span<const Id> removed, std::span<const Id> moved, std::span<const Box3> moved_boxes,
                   std::span<const Id> added, std::span<const Box3> added_boxes);

 private:
  std::ostream& out_;
  int dims_;
  int version_;
  std::string line_;
};

/// Writes `trace` whole, as version 2 when trace.version is 2 or a frame
/// uses_version_2(), else as version 1; read_trace() gives it back.
void write_trace(std::ostream& out, const Trace& trace);

/// Stages a frame's operations on `broad_phase`, in the order of the
/// contract: removes, moves, adds (static ones, then dynamic ones, each
/// with its filter), filter changes. The first refusal is returned; the
/// caller then calls update() or not. Queries are the caller's, after update().
Status stage_frame(BroadPhase& broad_phase, const TraceFrame& frame);

/// FNV-1a 64-bit hash of a sorted pair list, each pair as `a` then `b`, each
/// a little-endian uint32 (the contract's `--report hash`).
std::uint64_t pair_set_hash(std::span<const Pair> sorted_pairs) noexcept;
/// FNV-1a 64-bit hash of a query's ascending ids, each a little-endian
/// uint32 (the `query Q K H` lines of `--report hash`).
std::uint64_t id_list_hash(std::span<const Id> sorted_ids) noexcept;

}  // namespace sapling
