// libFuzzer target for the trace reader of docs/trace-format.md.
//
// Feeds the bytes to read_trace and checks, for every input:
// - no crash, no sanitizer report;
// - an error names a line of the input and a reason;
// - the frames returned (all of them on success, those before the bad line
//   on error) form a valid trace, checked against a plain model: only dead
//   ids added, only live ids moved, removed or given a filter, one operation
//   per id per frame, valid boxes and query boxes, z = [0, 0] in 2D,
//   attribute vectors parallel to the adds or empty, nothing of version 2
//   in a version-1 trace;
// - writing those frames and reading them back gives the same trace, floats
//   bit for bit, filters, motions and queries included, and writing that
//   again gives the same text;
// - the stream overload gives the same result as the string one;
// - an input that looks like one number token is read exactly as strtof
//   reads it (the reader's fast path must never disagree with strtof).
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>

#include "sapling/trace.hpp"

namespace {

using sapling::Box3;
using sapling::Id;
using sapling::Trace;
using sapling::TraceFrame;
using sapling::TraceQuery;
using sapling::TraceReadResult;

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "trace_reader_fuzz: %s\n", what);
  std::abort();
}

void check(bool ok, const char* what) {
  if (!ok) fail(what);
}

bool same_box(const Box3& a, const Box3& b) {
  for (int k = 0; k < 3; ++k) {
    if (std::bit_cast<std::uint32_t>(a.min[k]) != std::bit_cast<std::uint32_t>(b.min[k])) return false;
    if (std::bit_cast<std::uint32_t>(a.max[k]) != std::bit_cast<std::uint32_t>(b.max[k])) return false;
  }
  return true;
}

bool same_boxes(const std::vector<Box3>& a, const std::vector<Box3>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!same_box(a[i], b[i])) return false;
  }
  return true;
}

// Filters and motions of the adds (an empty vector standing for the
// defaults), filter operations, queries with their boxes bit for bit.
bool same_version_2_parts(const TraceFrame& x, const TraceFrame& y) {
  for (std::size_t i = 0; i < x.added.size(); ++i) {
    if (x.added_filter(i) != y.added_filter(i) || x.added_is_static(i) != y.added_is_static(i)) return false;
  }
  if (x.filtered != y.filtered || x.filters != y.filters || x.queries.size() != y.queries.size()) return false;
  for (std::size_t q = 0; q < x.queries.size(); ++q) {
    const TraceQuery& a = x.queries[q];
    const TraceQuery& b = y.queries[q];
    if (a.label != b.label || a.mask != b.mask || !same_box(a.box, b.box)) return false;
  }
  return true;
}

bool same_trace(const Trace& a, const Trace& b) {
  if (a.dims != b.dims || a.version != b.version || a.frames.size() != b.frames.size()) return false;
  for (std::size_t f = 0; f < a.frames.size(); ++f) {
    const TraceFrame& x = a.frames[f];
    const TraceFrame& y = b.frames[f];
    if (x.removed != y.removed || x.moved != y.moved || x.added != y.added) return false;
    if (!same_boxes(x.moved_boxes, y.moved_boxes) || !same_boxes(x.added_boxes, y.added_boxes)) return false;
    if (!same_version_2_parts(x, y)) return false;
  }
  return true;
}

bool valid_box(const Box3& b, int dims) {
  if (!sapling::check_box(b)) return false;
  return dims == 3 || (b.min[2] == 0.0f && b.max[2] == 0.0f);
}

// The frames against a model of the live set (independent of the reader's).
void check_valid(const Trace& t) {
  check(t.dims == 2 || t.dims == 3, "dims not 2 or 3");
  check(t.version == 1 || t.version == 2, "version not 1 or 2");
  std::unordered_map<Id, bool> live;
  for (std::size_t f = 0; f < t.frames.size(); ++f) {
    const TraceFrame& fr = t.frames[f];
    check(fr.moved.size() == fr.moved_boxes.size() && fr.added.size() == fr.added_boxes.size(), "sizes differ");
    check(fr.added_filters.empty() || fr.added_filters.size() == fr.added.size(), "added_filters not parallel");
    check(fr.added_static.empty() || fr.added_static.size() == fr.added.size(), "added_static not parallel");
    check(fr.filtered.size() == fr.filters.size(), "filters not parallel");
    check(t.version == 2 || !fr.uses_version_2(), "version 2 in a version-1 trace");
    for (const TraceQuery& q : fr.queries) check(valid_box(q.box, t.dims), "invalid query box");
    std::unordered_map<Id, bool> touched;
    const auto touch = [&](Id id) { check(touched.emplace(id, true).second, "two operations on one id"); };
    for (const Id id : fr.removed) {
      touch(id);
      check(live[id], "remove of an id that is not live");
      live[id] = false;
    }
    for (std::size_t i = 0; i < fr.moved.size(); ++i) {
      touch(fr.moved[i]);
      check(live[fr.moved[i]], "move of an id that is not live");
      check(valid_box(fr.moved_boxes[i], t.dims), "invalid moved box");
    }
    for (std::size_t i = 0; i < fr.added.size(); ++i) {
      touch(fr.added[i]);
      check(!live[fr.added[i]], "add of a live id");
      live[fr.added[i]] = true;
      check(valid_box(fr.added_boxes[i], t.dims), "invalid added box");
    }
    for (const Id id : fr.filtered) {
      touch(id);
      check(live[id], "filter of an id that is not live");
    }
  }
}

std::string write(const Trace& t) {
  std::ostringstream out;
  sapling::write_trace(out, t);
  return out.str();
}

// A token of the number alphabet read in a box, against strtof itself.
void check_number_token(std::string_view token) {
  if (token.empty() || token.size() > 64) return;
  for (const char c : token) {
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '#') return;
  }
  const std::string copy(token);
  char* end = nullptr;
  const float expected = std::strtof(copy.c_str(), &end);
  const bool full = end == copy.c_str() + copy.size();
  // max.x is +inf: the box is valid for any number but NaN.
  const TraceReadResult r = sapling::read_trace("sapling-trace 1\nframe\nadd 1 " + copy + " 0 0 inf 1 1\n");
  if (!full || std::isnan(expected)) {
    check(r.error.has_value(), "accepted a token strtof does not read in full, or NaN");
    return;
  }
  check(!r.error.has_value(), "refused a token strtof reads in full");
  const float got = r.trace.frames.at(0).added_boxes.at(0).min[0];
  check(std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(expected), "number differs from strtof");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const TraceReadResult r = sapling::read_trace(text);

  if (r.error) {
    std::size_t lines = 1;
    for (const char c : text) lines += c == '\n';
    check(r.error->line >= 1 && r.error->line <= lines, "error line outside the input");
    check(!r.error->reason.empty(), "error without a reason");
  }
  check_valid(r.trace);

  const std::string written = write(r.trace);
  const TraceReadResult back = sapling::read_trace(written);
  check(!back.error.has_value(), "a written trace does not read back");
  check(same_trace(back.trace, r.trace), "round trip changed the trace");
  check(write(back.trace) == written, "writing twice gives different text");

  std::istringstream in{std::string(text)};
  const TraceReadResult s = sapling::read_trace(in);
  check(s.error.has_value() == r.error.has_value(), "stream and string disagree on success");
  if (s.error) check(s.error->line == r.error->line && s.error->reason == r.error->reason, "stream and string errors");
  check(same_trace(s.trace, r.trace), "stream and string traces differ");

  check_number_token(text);
  return 0;
}
