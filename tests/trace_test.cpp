// The trace reader, writer and hashes against their contract,
// docs/trace-format.md: the examples of versions 1 and 2, every error with
// its line and reason, the frames kept before an error, numbers exactly as
// strtof reads them, integers decimal and 0x-hexadecimal, a bit-exact
// writer/reader round trip, and the hashes of the examples.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "sapling/broad_phase.hpp"
#include "sapling/trace.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

std::uint32_t bits(float f) { return std::bit_cast<std::uint32_t>(f); }

/// Two boxes with the same bit patterns (so -0 differs from +0, NaN from NaN
/// only by payload).
::testing::AssertionResult same_box(const Box3& a, const Box3& b) {
  for (int k = 0; k < 3; ++k) {
    if (bits(a.min[k]) != bits(b.min[k]) || bits(a.max[k]) != bits(b.max[k])) {
      return ::testing::AssertionFailure() << "axis " << k << ": [" << a.min[k] << ", " << a.max[k] << "] vs ["
                                           << b.min[k] << ", " << b.max[k] << "]";
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult same_boxes(const std::vector<Box3>& a, const std::vector<Box3>& b) {
  if (a.size() != b.size()) return ::testing::AssertionFailure() << a.size() << " boxes vs " << b.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (auto r = same_box(a[i], b[i]); !r) return r << " (box " << i << ")";
  }
  return ::testing::AssertionSuccess();
}

/// Equal version-2 parts of two frames: every added object's filter and
/// motion (an empty attribute vector standing for the defaults), the filter
/// operations, and the queries in order, boxes bit for bit.
::testing::AssertionResult same_version_2_parts(const TraceFrame& x, const TraceFrame& y) {
  for (std::size_t i = 0; i < x.added.size(); ++i) {
    if (x.added_filter(i) != y.added_filter(i)) return ::testing::AssertionFailure() << "filter of add " << i;
    if (x.added_is_static(i) != y.added_is_static(i)) return ::testing::AssertionFailure() << "motion of add " << i;
  }
  if (x.filtered != y.filtered || x.filters != y.filters) return ::testing::AssertionFailure() << "filter operations";
  if (x.queries.size() != y.queries.size()) {
    return ::testing::AssertionFailure() << x.queries.size() << " queries vs " << y.queries.size();
  }
  for (std::size_t q = 0; q < x.queries.size(); ++q) {
    if (x.queries[q].label != y.queries[q].label || x.queries[q].mask != y.queries[q].mask) {
      return ::testing::AssertionFailure() << "query " << q << ": label or mask";
    }
    if (auto r = same_box(x.queries[q].box, y.queries[q].box); !r) return r << " (query " << q << ")";
  }
  return ::testing::AssertionSuccess();
}

/// Equal traces, floats compared bit for bit.
::testing::AssertionResult same_trace(const Trace& a, const Trace& b) {
  if (a.dims != b.dims) return ::testing::AssertionFailure() << "dims " << a.dims << " vs " << b.dims;
  if (a.version != b.version) return ::testing::AssertionFailure() << "version " << a.version << " vs " << b.version;
  if (a.frames.size() != b.frames.size()) {
    return ::testing::AssertionFailure() << a.frames.size() << " frames vs " << b.frames.size();
  }
  for (std::size_t f = 0; f < a.frames.size(); ++f) {
    const TraceFrame& x = a.frames[f];
    const TraceFrame& y = b.frames[f];
    if (x.removed != y.removed) return ::testing::AssertionFailure() << "frame " << f << ": removed differ";
    if (x.moved != y.moved) return ::testing::AssertionFailure() << "frame " << f << ": moved differ";
    if (x.added != y.added) return ::testing::AssertionFailure() << "frame " << f << ": added differ";
    if (auto r = same_boxes(x.moved_boxes, y.moved_boxes); !r) return r << " (frame " << f << ", moved)";
    if (auto r = same_boxes(x.added_boxes, y.added_boxes); !r) return r << " (frame " << f << ", added)";
    if (auto r = same_version_2_parts(x, y); !r) return r << " (frame " << f << ")";
  }
  return ::testing::AssertionSuccess();
}

Box3 box(float x0, float y0, float z0, float x1, float y1, float z1) { return Box3{{x0, y0, z0}, {x1, y1, z1}}; }

std::string write(const Trace& trace) {
  std::ostringstream out;
  write_trace(out, trace);
  return out.str();
}

constexpr const char* kExample =
    "sapling-trace 1          # first non-comment line, exactly\n"
    "dims 3                   # 2 or 3; optional, default 3; before the first frame\n"
    "frame                    # starts frame 0, then 1, 2, ...\n"
    "add 7 0 0 0 1 1 1        # add ID minx miny minz maxx maxy maxz\n"
    "add 9 0.5 0.5 0.5 2 2 2\n"
    "frame\n"
    "move 7 1.5 0 0 2.5 1 1   # new bounds for a live id\n"
    "frame\n"
    "remove 9\n";

Trace example_trace() {
  Trace t;
  t.dims = 3;
  t.frames.resize(3);
  t.frames[0].added = {7, 9};
  t.frames[0].added_boxes = {box(0, 0, 0, 1, 1, 1), box(0.5f, 0.5f, 0.5f, 2, 2, 2)};
  t.frames[1].moved = {7};
  t.frames[1].moved_boxes = {box(1.5f, 0, 0, 2.5f, 1, 1)};
  t.frames[2].removed = {9};
  return t;
}

// ---------------------------------------------------------------------------
// Reading valid traces.

TEST(TraceReader, ContractExample) {
  const TraceReadResult r = read_trace(kExample);
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  EXPECT_TRUE(same_trace(r.trace, example_trace()));
}

TEST(TraceReader, StreamAndStringAgree) {
  std::istringstream in(kExample);
  const TraceReadResult r = read_trace(in);
  ASSERT_FALSE(r.error);
  EXPECT_TRUE(same_trace(r.trace, example_trace()));
}

TEST(TraceReader, LargeStreamInManyBlocks) {
  // More than the reader's block size, so the stream is read in pieces.
  testgen::GenParams p;
  p.n = 2000;
  p.frames = 60;
  const Trace t = testgen::make_trace(testgen::TraceKind::kUniform, p);
  const std::string text = write(t);
  ASSERT_GT(text.size(), std::size_t{3} << 20);
  std::istringstream in(text);
  const TraceReadResult r = read_trace(in);
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  EXPECT_TRUE(same_trace(r.trace, t));
}

TEST(TraceReader, DimsDefaultsToThree) {
  const TraceReadResult r = read_trace("sapling-trace 1\nframe\nadd 1 0 0 0 1 1 1\n");
  ASSERT_FALSE(r.error);
  EXPECT_EQ(r.trace.dims, 3);
  ASSERT_EQ(r.trace.frames.size(), 1u);
}

TEST(TraceReader, HeaderOnlyAndEmptyFrames) {
  TraceReadResult r = read_trace("sapling-trace 1\n");
  ASSERT_FALSE(r.error);
  EXPECT_TRUE(r.trace.frames.empty());
  r = read_trace("sapling-trace 1\nframe\nframe\n\nframe");
  ASSERT_FALSE(r.error);
  ASSERT_EQ(r.trace.frames.size(), 3u);
  for (const TraceFrame& f : r.trace.frames) EXPECT_TRUE(f.empty());
}

TEST(TraceReader, CommentsBlankLinesTabsAndCrlf) {
  const TraceReadResult r = read_trace(
      "# leading comment\n"
      "\n"
      "   \t  \n"
      "  sapling-trace\t1   # header with a comment\n"
      "#\n"
      "dims\t3\n"
      "frame# a comment right after the keyword\n"
      "\tadd  7\t0 0 0   1 1 1#comment glued to the last number\n"
      "add 9 0.5 0.5 0.5 2 2 2\r\n"
      "   \r\n"
      "frame\r\n"
      "  move 7 1.5 0 0 2.5 1 1 \t \n"
      "frame\n"
      "remove 9\r");  // no final newline, a CR at the very end
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  EXPECT_TRUE(same_trace(r.trace, example_trace()));
}

TEST(TraceReader, TwoDimensionalTraceIsLifted) {
  const TraceReadResult r = read_trace(
      "sapling-trace 1\ndims\t2\nframe\nadd 7 0 0 1 1\nadd 9 0.5 0.5 2 2\n\nframe\nmove 7 1.5 0 2.5 1\nframe\nremove "
      "9\n");
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  Trace expected = example_trace();
  expected.dims = 2;
  expected.frames[0].added_boxes = {box(0, 0, 0, 1, 1, 0), box(0.5f, 0.5f, 0, 2, 2, 0)};
  expected.frames[1].moved_boxes = {box(1.5f, 0, 0, 2.5f, 1, 0)};
  EXPECT_TRUE(same_trace(r.trace, expected));
}

TEST(TraceReader, ExtremeIds) {
  const TraceReadResult r =
      read_trace("sapling-trace 1\nframe\nadd 0 0 0 0 1 1 1\nadd 4294967295 0 0 0 1 1 1\nadd 0007 0 0 0 1 1 1\n");
  ASSERT_FALSE(r.error) << r.error->reason;
  ASSERT_EQ(r.trace.frames.size(), 1u);
  EXPECT_EQ(r.trace.frames[0].added, (std::vector<Id>{0u, 4294967295u, 7u}));
}

TEST(TraceReader, SpecialNumbers) {
  const TraceReadResult r = read_trace(
      "sapling-trace 1\nframe\n"
      "add 1 -inf -INF -Infinity inf +inf infinity\n"  // infinite in every direction
      "add 2 -0 -0.0 0 0 +0 -0\n"                      // signed zeros, [+0, -0] is valid
      "add 3 0x1p3 -0X1.8P1 -0x.8p0 0x10 0x1p-149 0xA\n"
      "add 4 1e-50 -1e-50 1e-45 1e39 1.5e+3 2.5E-1\n"  // out of range: what strtof gives
      "add 5 .5 5. 00012 1e0 5 3.4028235e38\n");
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  const std::vector<Box3>& b = r.trace.frames.at(0).added_boxes;
  ASSERT_EQ(b.size(), 5u);
  EXPECT_TRUE(same_box(b[0], box(-kInf, -kInf, -kInf, kInf, kInf, kInf)));
  EXPECT_TRUE(same_box(b[1], box(-0.0f, -0.0f, 0.0f, 0.0f, 0.0f, -0.0f)));
  EXPECT_TRUE(same_box(b[2], box(8, -3, -0.5f, 16, std::numeric_limits<float>::denorm_min(), 10)));
  EXPECT_TRUE(same_box(b[3], box(0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), kInf, 1500, 0.25f)));
  EXPECT_TRUE(same_box(b[4], box(0.5f, 5, 12, 1, 5, std::numeric_limits<float>::max())));
}

// Every token the reader accepts is one strtof reads in full, with strtof's
// value; every other token is refused. Random tokens over the characters of
// numbers, and printed floats in every format.
TEST(TraceReader, NumbersAreWhatStrtofReads) {
  testgen::Rng rng(20240611);
  static constexpr char kAlphabet[] = "0123456789.eE+-xXpPaAbBcCdDfFiInNtTyY()_";
  std::vector<std::string> tokens = {
      "1",    "-2.5e3", "inf",   "-inf",   "nan",    "NAN",     "nan()", "nan(x_1)", "-nan",     "0x1p3",
      "+1",   "+-1",    "-+1",   "--1",    "1e",     "1e+",     "1e-",   ".",        "-",        "+",
      "e5",   "0x",     "0x.",   "0xp1",   "0x1p",   "1,5",     "1x",    "inf1",     "infinit",  "infinityy",
      "nan(", "1..2",   "1e5.5", "0e9999", "1e-999", "-1e9999", "1_0",   "Infinity", "0x1P-126", "1e+38"};
  for (int i = 0; i < 20000; ++i) {
    std::string t;
    const int length = rng.range(1, 10);
    for (int c = 0; c < length; ++c) t += kAlphabet[rng.below(sizeof kAlphabet - 1)];
    tokens.push_back(t);
  }
  for (int i = 0; i < 20000; ++i) {
    const float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng.next()));
    char buf[64];
    static constexpr const char* kFormats[] = {"%a", "%.9g", "%.6e", "%.3f", "%.12g", "%A"};
    std::snprintf(buf, sizeof buf, kFormats[rng.below(6)], static_cast<double>(f));
    tokens.push_back(buf);
  }
  std::size_t accepted = 0;
  for (const std::string& token : tokens) {
    char* end = nullptr;
    const float expected = std::strtof(token.c_str(), &end);
    const bool full = !token.empty() && end == token.c_str() + token.size();
    // max.x is +inf, so the box is valid for every number except NaN.
    const TraceReadResult r = read_trace("sapling-trace 1\nframe\nadd 1 " + token + " 0 0 inf 1 1\n");
    if (!full) {
      ASSERT_TRUE(r.error) << "accepted '" << token << "'";
      EXPECT_NE(r.error->reason.find("bad number"), std::string::npos) << token << ": " << r.error->reason;
    } else if (std::isnan(expected)) {
      ASSERT_TRUE(r.error) << "accepted NaN '" << token << "'";
      EXPECT_EQ(r.error->reason, "add of id 1: invalid box: min.x is NaN") << token;
    } else {
      ASSERT_FALSE(r.error) << "refused '" << token << "': " << r.error->reason;
      EXPECT_EQ(bits(r.trace.frames.at(0).added_boxes.at(0).min[0]), bits(expected)) << token;
      ++accepted;
    }
  }
  EXPECT_GT(accepted, 20000u);
}

// ---------------------------------------------------------------------------
// Errors.

struct ErrorCase {
  const char* what;
  std::string text;
  std::size_t line;
  std::string reason;  // exact
  std::size_t frames;  // frames read in full before the error
};

// Frames 0 and 1 complete; frame 2 starts at line 9, line 10 is fine, and
// each case's bad line is line 11.
constexpr const char* kBase =
    "sapling-trace 1\n"
    "# two boxes that overlap, then part\n"
    "frame\n"
    "add 1 0 0 0 1 1 1\n"
    "add 2 0.5 0.5 0.5 2 2 2\n"
    "\n"
    "frame\n"
    "move 1 3 3 3 4 4 4\n"
    "frame\n"
    "add 3 0 0 0 1 1 1\n";

std::vector<ErrorCase> error_cases() {
  const std::string base = kBase;
  const auto at11 = [&](const char* what, const std::string& line, const std::string& reason) {
    return ErrorCase{what, base + line + "\nremove 3\n", 11, reason, 2};
  };
  return {
      // The header.
      {"empty input", "", 1, "missing header: expected 'sapling-trace 1' or 'sapling-trace 2'", 0},
      {"only comments and blanks", "# a\n\n  # b\n\t\n", 1,
       "missing header: expected 'sapling-trace 1' or 'sapling-trace 2'", 0},
      {"no header", "# no header\nframe\nadd 1 0 0 0 1 1 1\n", 2,
       "expected header 'sapling-trace 1' or 'sapling-trace 2', got 'frame'", 0},
      {"version 3", "sapling-trace 3\nframe\n", 1,
       "unsupported trace version '3': expected 'sapling-trace 1' or 'sapling-trace 2'", 0},
      {"version 10", "sapling-trace 10\n", 1,
       "unsupported trace version '10': expected 'sapling-trace 1' or 'sapling-trace 2'", 0},
      {"version 0", "sapling-trace 0\n", 1,
       "unsupported trace version '0': expected 'sapling-trace 1' or 'sapling-trace 2'", 0},
      {"version with a leading zero", "sapling-trace 01\n", 1,
       "unsupported trace version '01': expected 'sapling-trace 1' or 'sapling-trace 2'", 0},
      {"header without version", "sapling-trace\n", 1,
       "expected header 'sapling-trace 1' or 'sapling-trace 2', got 'sapling-trace'", 0},
      {"header with an extra token", "sapling-trace 1 x\n", 1,
       "expected header 'sapling-trace 1' or 'sapling-trace 2', got 'sapling-trace 1 x'", 0},
      {"misspelt header", "sapling_trace 1\n", 1,
       "expected header 'sapling-trace 1' or 'sapling-trace 2', got 'sapling_trace 1'", 0},
      at11("a second header", "sapling-trace 1", "repeated header: 'sapling-trace' belongs on the first line only"),
      // dims.
      {"dims 4", "sapling-trace 1\ndims 4\nframe\n", 2, "bad dims '4': expected 2 or 3", 0},
      {"dims 1", "sapling-trace 1\ndims 1\n", 2, "bad dims '1': expected 2 or 3", 0},
      {"dims without a value", "sapling-trace 1\ndims\n", 2, "dims takes one value, 2 or 3", 0},
      {"dims with two values", "sapling-trace 1\ndims 2 3\n", 2, "dims takes one value, 2 or 3", 0},
      {"dims twice", "sapling-trace 1\ndims 3\ndims 3\n", 3, "dims given twice", 0},
      at11("dims after the first frame", "dims 3", "dims after the first frame"),
      {"dims after an empty first frame", "sapling-trace 1\nframe\ndims 2\n", 3, "dims after the first frame", 0},
      // Keywords and operations before any frame.
      at11("unknown keyword", "resize 1 0 0 0 1 1 1", "unknown keyword 'resize'"),
      at11("keyword in capitals", "ADD 4 0 0 0 1 1 1", "unknown keyword 'ADD'"),
      at11("unprintable keyword", "\x01\xff", "unknown keyword '\\x01\\xff'"),
      at11("frame with an argument", "frame 3", "unexpected '3' after 'frame'"),
      {"add before the first frame", "sapling-trace 1\nadd 1 0 0 0 1 1 1\n", 2, "add before the first frame", 0},
      {"remove before the first frame", "sapling-trace 1\ndims 2\nremove 1\n", 3, "remove before the first frame", 0},
      // Counts of numbers.
      at11("too few numbers", "add 4 0 0 0 1 1", "add of id 4: expected 6 numbers (3D box), got 5"),
      at11("too many numbers", "add 4 0 0 0 1 1 1 1", "add of id 4: expected 6 numbers (3D box), got 7"),
      at11("far too many numbers", "move 2 0 0 0 1 1 1 1 1 1 1 1", "move of id 2: expected 6 numbers (3D box), got 11"),
      at11("no numbers", "add 4", "add of id 4: expected 6 numbers (3D box), got 0"),
      at11("remove with numbers", "remove 2 0 0", "remove of id 2: expected only an id, got 2 numbers"),
      {"a 3D box in a 2D trace", "sapling-trace 1\ndims 2\nframe\nadd 1 0 0 0 1 1 1\n", 4,
       "add of id 1: expected 4 numbers (2D box), got 6", 0},
      {"a 2D box in a 3D trace", "sapling-trace 1\nframe\nadd 1 0 0 0 1 1 1\nframe\nframe\nadd 2 0 0 1 1\n", 6,
       "add of id 2: expected 6 numbers (3D box), got 4", 2},
      // Ids.
      at11("no id", "remove", "remove: missing id"),
      at11("id not a number", "remove x", "remove: bad id 'x': expected a decimal integer 0..4294967295"),
      at11("id abc", "add abc 0 0 0 1 1 1", "add: bad id 'abc': expected a decimal integer 0..4294967295"),
      at11("id out of range", "add 4294967296 0 0 0 1 1 1",
           "add: bad id '4294967296': expected a decimal integer 0..4294967295"),
      at11("id far out of range", "add 99999999999999999999999 0 0 0 1 1 1",
           "add: bad id '99999999999999999999999': expected a decimal integer 0..4294967295"),
      at11("negative id", "add -4 0 0 0 1 1 1", "add: bad id '-4': expected a decimal integer 0..4294967295"),
      at11("negative one", "remove -1", "remove: bad id '-1': expected a decimal integer 0..4294967295"),
      at11("id with a plus", "add +4 0 0 0 1 1 1", "add: bad id '+4': expected a decimal integer 0..4294967295"),
      at11("id with a fraction", "add 4.0 0 0 0 1 1 1", "add: bad id '4.0': expected a decimal integer 0..4294967295"),
      at11("hex id", "add 0x4 0 0 0 1 1 1", "add: bad id '0x4': expected a decimal integer 0..4294967295"),
      // Numbers.
      at11("number not read in full", "add 4 0 0 0 1x 1 1", "add of id 4: bad number '1x' for max.x"),
      at11("number with a comma", "add 4 0 0 0 1,5 1 1", "add of id 4: bad number '1,5' for max.x"),
      at11("a lone exponent", "add 4 e5 0 0 1 1 1", "add of id 4: bad number 'e5' for min.x"),
      at11("a dangling exponent", "add 4 0 1e 0 1 1 1", "add of id 4: bad number '1e' for min.y"),
      at11("a lone dot", "add 4 0 0 . 1 1 1", "add of id 4: bad number '.' for min.z"),
      at11("a lone minus", "add 4 0 0 0 1 1 -", "add of id 4: bad number '-' for max.z"),
      at11("two signs", "add 4 +-1 0 0 1 1 1", "add of id 4: bad number '+-1' for min.x"),
      at11("hex prefix only", "add 4 0x 0 0 1 1 1", "add of id 4: bad number '0x' for min.x"),
      at11("an unclosed nan", "add 4 nan( 0 0 1 1 1", "add of id 4: bad number 'nan(' for min.x"),
      at11("a CR inside a line", "add 4 0 0 0 1\r 1 1", "add of id 4: bad number '1\\x0d' for max.x"),
      at11("a long bad number", "add 4 0 0 0 1 1 123456789012345678901234567890123456789012345x",
           "add of id 4: bad number '1234567890123456789012345678901234567890...' for max.z"),
      {"bad number in 2D", "sapling-trace 1\ndims 2\nframe\nadd 1 0 0 1 y\n", 4,
       "add of id 1: bad number 'y' for max.y", 0},
      // Invalid boxes.
      at11("min > max", "add 4 0 0 2 1 1 1", "add of id 4: invalid box: min.z > max.z"),
      at11("min > max on y", "add 7 0 2 0 1 1 1", "add of id 7: invalid box: min.y > max.y"),
      at11("nan min", "add 4 nan 0 0 1 1 1", "add of id 4: invalid box: min.x is NaN"),
      at11("nan max", "move 2 0 0 0 1 nan 1", "move of id 2: invalid box: max.y is NaN"),
      at11("move with min > max", "move 2 0 0 0 1 1 -1", "move of id 2: invalid box: min.z > max.z"),
      at11("inf > -inf", "add 4 inf 0 0 -inf 1 1", "add of id 4: invalid box: min.x > max.x"),
      {"min > max in 2D", "sapling-trace 1\ndims 2\nframe\nadd 1 0 1 1 0\n", 4,
       "add of id 1: invalid box: min.y > max.y", 0},
      // Liveness.
      at11("add of a live id", "add 2 0 0 0 1 1 1", "add of id 2: id is already live"),
      at11("add of an id added in this frame", "add 3 5 5 5 6 6 6",
           "add of id 3: id already has an operation in this frame"),
      at11("move of an id that is not live", "move 9 0 0 0 1 1 1", "move of id 9: id is not live"),
      at11("move of an id added in this frame", "move 3 0 0 0 1 1 1",
           "move of id 3: id already has an operation in this frame"),
      at11("remove of an id that is not live", "remove 9", "remove of id 9: id is not live"),
      at11("remove of an id added in this frame", "remove 3",
           "remove of id 3: id already has an operation in this frame"),
      {"second operation on one id", base + "move 2 0 0 0 1 1 1\nremove 2\n", 12,
       "remove of id 2: id already has an operation in this frame", 2},
      {"move after remove", base + "remove 1\nmove 1 0 0 0 1 1 1\n", 12,
       "move of id 1: id already has an operation in this frame", 2},
      {"re-add after remove in one frame", base + "remove 1\nadd 1 0 0 0 1 1 1\n", 12,
       "add of id 1: id already has an operation in this frame", 2},
      {"remove of a removed id", base + "remove 1\nframe\nremove 1\n", 13, "remove of id 1: id is not live", 3},
      {"unknown keyword at the start of a frame", base + "frame\nbogus\n", 12, "unknown keyword 'bogus'", 3},
  };
}

// The error of one case, from the string reader and the stream reader alike.
void expect_error(const ErrorCase& c) {
  SCOPED_TRACE(c.what);
  const TraceReadResult r = read_trace(c.text);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->line, c.line);
  EXPECT_EQ(r.error->reason, c.reason);
  EXPECT_EQ(r.trace.frames.size(), c.frames);
  // The stream reader says the same.
  std::istringstream in(c.text);
  const TraceReadResult s = read_trace(in);
  ASSERT_TRUE(s.error.has_value());
  EXPECT_EQ(s.error->line, c.line);
  EXPECT_EQ(s.error->reason, c.reason);
}

TEST(TraceReader, Errors) {
  for (const ErrorCase& c : error_cases()) expect_error(c);
}

TEST(TraceReader, FramesBeforeTheErrorAreComplete) {
  const TraceReadResult r = read_trace(std::string(kBase) + "move 9 0 0 0 1 1 1\n");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->line, 11u);
  ASSERT_EQ(r.trace.frames.size(), 2u);
  const TraceFrame& f0 = r.trace.frames[0];
  EXPECT_EQ(f0.added, (std::vector<Id>{1, 2}));
  EXPECT_TRUE(same_boxes(f0.added_boxes, {box(0, 0, 0, 1, 1, 1), box(0.5f, 0.5f, 0.5f, 2, 2, 2)}));
  EXPECT_TRUE(f0.moved.empty() && f0.removed.empty());
  const TraceFrame& f1 = r.trace.frames[1];
  EXPECT_EQ(f1.moved, (std::vector<Id>{1}));
  EXPECT_TRUE(same_boxes(f1.moved_boxes, {box(3, 3, 3, 4, 4, 4)}));
  EXPECT_TRUE(f1.added.empty() && f1.removed.empty());
  EXPECT_EQ(r.trace.dims, 3);
}

TEST(TraceReader, LineNumbersCountEveryLine) {
  // Comment, blank and CRLF lines all count.
  const TraceReadResult r = read_trace("# c\r\n\r\nsapling-trace 1\r\n\n# c\nframe\r\n\r\n\tbogus\r\n");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->line, 8u);
  EXPECT_EQ(r.error->reason, "unknown keyword 'bogus'");
}

TEST(TraceReader, DoubleSpacesMakeNoEmptyToken) {
  // An empty token cannot occur: runs of blanks are one separator, and a
  // missing number shows as a wrong count.
  const TraceReadResult r = read_trace("sapling-trace 1\nframe\nadd 4 0  0 0 1 1  \n");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->reason, "add of id 4: expected 6 numbers (3D box), got 5");
}

// ---------------------------------------------------------------------------
// Writing.

TEST(TraceWriter, ContractExampleText) {
  EXPECT_EQ(write(example_trace()),
            "sapling-trace 1\ndims 3\n"
            "frame\nadd 7 0 0 0 1 1 1\nadd 9 0.5 0.5 0.5 2 2 2\n"
            "frame\nmove 7 1.5 0 0 2.5 1 1\n"
            "frame\nremove 9\n");
}

TEST(TraceWriter, OrderSpecialValuesAnd2D) {
  Trace t;
  t.dims = 2;
  t.frames.resize(2);
  t.frames[0].added = {5, 4294967295u};
  t.frames[0].added_boxes = {box(-kInf, -0.0f, 0, kInf, 0.0f, 0), box(1e-45f, 0.1f, 0, 3.4028235e38f, 1e10f, 0)};
  t.frames[1].added = {6};
  t.frames[1].added_boxes = {box(0, 0, 0, 1, 1, 0)};
  t.frames[1].moved = {5};
  t.frames[1].moved_boxes = {box(0, 0, 0, 0, 0, 0)};
  t.frames[1].removed = {4294967295u};
  const std::string text = write(t);
  EXPECT_EQ(text,
            "sapling-trace 1\ndims 2\n"
            "frame\nadd 5 -inf -0 inf 0\nadd 4294967295 1e-45 0.1 3.4028235e+38 1e+10\n"
            "frame\nremove 4294967295\nmove 5 0 0 0 0\nadd 6 0 0 1 1\n");
  const TraceReadResult r = read_trace(text);
  ASSERT_FALSE(r.error) << r.error->reason;
  EXPECT_TRUE(same_trace(r.trace, t));
}

TEST(TraceWriter, FrameByFrameFromSpans) {
  std::ostringstream out;
  TraceWriter w(out, 3);
  const std::vector<Id> ids = {3};
  const std::vector<Box3> boxes = {box(0, 0, 0, 1, 1, 1)};
  w.write_frame({}, {}, {}, ids, boxes);
  w.write_frame(TraceFrame{});
  w.write_frame(ids, {}, {}, {}, {});
  EXPECT_EQ(out.str(), "sapling-trace 1\ndims 3\nframe\nadd 3 0 0 0 1 1 1\nframe\nframe\nremove 3\n");
}

/// A valid random trace whose coordinates are random bit patterns (every
/// non-NaN float: denormals, both zeros, infinities, the extremes).
Trace random_bits_trace(std::uint64_t seed, int dims) {
  testgen::Rng rng(seed);
  const auto any_float = [&] {
    for (;;) {
      const float f = std::bit_cast<float>(static_cast<std::uint32_t>(rng.next()));
      if (!std::isnan(f)) return f;
    }
  };
  const auto random_box = [&](testgen::Rng&) {
    Box3 b;
    for (int k = 0; k < 3; ++k) {
      float lo = any_float();
      float hi = rng.chance(0.1) ? lo : any_float();
      if (lo > hi) std::swap(lo, hi);
      b.min[k] = lo;
      b.max[k] = hi;
    }
    return b;
  };
  testgen::TraceBuilder t(dims, seed);
  testgen::steady_frames(
      t, 60, 15, testgen::Rates{0.4, 0.2, 0.5}, random_box, [&](testgen::Rng& r, const Box3&) { return random_box(r); },
      testgen::IdStyle::kRandom32);
  return t.take();
}

TEST(TraceRoundTrip, RandomBitPatterns) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    for (const int dims : {2, 3}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", dims " + std::to_string(dims));
      const Trace t = random_bits_trace(seed, dims);
      const std::string text = write(t);
      const TraceReadResult r = read_trace(text);
      ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
      EXPECT_TRUE(same_trace(r.trace, t));
      EXPECT_EQ(write(r.trace), text);
    }
  }
}

TEST(TraceRoundTrip, EveryGeneratedKind) {
  for (const testgen::TraceKind kind : testgen::kAllTraceKinds) {
    for (const int dims : {2, 3}) {
      for (std::uint64_t seed = 1; seed <= 3; ++seed) {
        SCOPED_TRACE(std::string(testgen::trace_kind_name(kind)) + ", dims " + std::to_string(dims) + ", seed " +
                     std::to_string(seed));
        testgen::GenParams p;
        p.dims = dims;
        p.seed = seed;
        const Trace t = testgen::make_trace(kind, p);
        const std::string text = write(t);
        const TraceReadResult r = read_trace(text);
        ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
        EXPECT_TRUE(same_trace(r.trace, t));
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Version 2: filters, static objects and region queries.

constexpr const char* kExample2 =
    "sapling-trace 2\n"
    "dims 3\n"
    "frame\n"
    "add 1 -inf -inf -1 inf inf 0 static           # a static ground\n"
    "add 2 5 5 -1 6 6 0 static                     # static scenery touching the ground\n"
    "add 7 0 0 0 1 1 1 filter 2 0xfffffffd         # category 2, does not collide with category 2\n"
    "add 8 0.5 0 0 1.5 1 1 filter 2 0xffffffff\n"
    "add 9 0.5 0.5 0.5 2 2 2\n"
    "frame\n"
    "filter 9 4 0x1                                # new category and mask for a live id\n"
    "query 100 -1 -1 -1 0.75 0.75 0.75             # a region query labelled 100\n"
    "query 101 0 0 0 3 3 3 mask 0x4\n";

Trace example2_trace() {
  Trace t;
  t.version = 2;
  t.frames.resize(2);
  TraceFrame& f0 = t.frames[0];
  f0.added = {1, 2, 7, 8, 9};
  f0.added_boxes = {box(-kInf, -kInf, -1, kInf, kInf, 0), box(5, 5, -1, 6, 6, 0), box(0, 0, 0, 1, 1, 1),
                    box(0.5f, 0, 0, 1.5f, 1, 1), box(0.5f, 0.5f, 0.5f, 2, 2, 2)};
  f0.added_static = {1, 1, 0, 0, 0};
  f0.added_filters = {Filter{}, Filter{}, Filter{2, 0xfffffffd}, Filter{2, 0xffffffff}, Filter{}};
  TraceFrame& f1 = t.frames[1];
  f1.filtered = {9};
  f1.filters = {Filter{4, 0x1}};
  f1.queries = {TraceQuery{100, box(-1, -1, -1, 0.75f, 0.75f, 0.75f)}, TraceQuery{101, box(0, 0, 0, 3, 3, 3), 0x4}};
  return t;
}

TEST(TraceReaderVersion2, ContractExample) {
  const TraceReadResult r = read_trace(kExample2);
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  EXPECT_TRUE(same_trace(r.trace, example2_trace()));
  // The attribute vectors are filled from the first add that has one.
  EXPECT_EQ(r.trace.frames[0].added_static, (std::vector<std::uint8_t>{1, 1, 0, 0, 0}));
  EXPECT_EQ(r.trace.frames[0].added_filters.size(), 5u);
  EXPECT_FALSE(r.trace.frames[1].empty());
  EXPECT_TRUE(r.trace.frames[0].uses_version_2() && r.trace.frames[1].uses_version_2());
}

TEST(TraceReaderVersion2, VersionOneReadsAsBefore) {
  const TraceReadResult r = read_trace(kExample);
  ASSERT_FALSE(r.error);
  EXPECT_EQ(r.trace.version, 1);
  for (const TraceFrame& f : r.trace.frames) {
    EXPECT_TRUE(f.added_filters.empty() && f.added_static.empty() && f.filtered.empty() && f.queries.empty());
    EXPECT_FALSE(f.uses_version_2());
  }
}

TEST(TraceReaderVersion2, VersionTwoWithoutItsKeywords) {
  const TraceReadResult r = read_trace("sapling-trace 2\nframe\nadd 1 0 0 0 1 1 1\n");
  ASSERT_FALSE(r.error) << r.error->reason;
  EXPECT_EQ(r.trace.version, 2);
  EXPECT_TRUE(r.trace.frames[0].added_filters.empty() && r.trace.frames[0].added_static.empty());
}

TEST(TraceReaderVersion2, AttributesInAnyOrder) {
  const TraceReadResult r = read_trace(
      "sapling-trace 2\nframe\n"
      "add 1 0 0 0 1 1 1 static filter 3 5\n"
      "add 2 0 0 0 1 1 1 filter 3 5 static\n"
      "add 3 0 0 0 1 1 1 filter 3 5\n"
      "add 4 0 0 0 1 1 1 static\n"
      "add 5 0 0 0 1 1 1\n"
      "add 6 0 0 0 1 1 1\tstatic\t filter\t1   0xffffffff  # the defaults, said\n");
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  const TraceFrame& f = r.trace.frames.at(0);
  const Filter three_five{3, 5};
  for (std::size_t i = 0; i < 6; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(f.added_filter(i), i < 3 ? three_five : Filter{});
    EXPECT_EQ(f.added_is_static(i), i != 2 && i != 4);
  }
}

TEST(TraceReaderVersion2, AttributesFromALaterAdd) {
  // Adds before the first attribute get the defaults.
  const TraceReadResult r =
      read_trace("sapling-trace 2\nframe\nadd 1 0 0 0 1 1 1\nadd 2 0 0 0 1 1 1 filter 2 2\nadd 3 0 0 0 1 1 1 static\n");
  ASSERT_FALSE(r.error) << r.error->reason;
  const TraceFrame& f = r.trace.frames.at(0);
  EXPECT_EQ(f.added_filters, (std::vector<Filter>{Filter{}, Filter{2, 2}, Filter{}}));
  EXPECT_EQ(f.added_static, (std::vector<std::uint8_t>{0, 0, 1}));
}

TEST(TraceReaderVersion2, IntegersDecimalAndHexadecimal) {
  const TraceReadResult r = read_trace(
      "sapling-trace 2\nframe\n"
      "add 1 0 0 0 1 1 1 filter 0 4294967295\n"
      "add 2 0 0 0 1 1 1 filter 0x0 0xFFFFFFFF\n"
      "add 3 0 0 0 1 1 1 filter 00012 0xdeadBEEF\n"
      "add 4 0 0 0 1 1 1 filter 0x00000000000000001 0x80000000\n"
      "query 0 0 0 0 1 1 1\n"
      "query 4294967295 0 0 0 1 1 1 mask 0\n"
      "query 0xffffffff 0 0 0 1 1 1 mask 0x10\n"
      "query 007 0 0 0 1 1 1 mask 16\n");
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  const TraceFrame& f = r.trace.frames.at(0);
  EXPECT_EQ(f.added_filters, (std::vector<Filter>{Filter{0, 0xffffffff}, Filter{0, 0xffffffff}, Filter{12, 0xdeadbeef},
                                                  Filter{1, 0x80000000}}));
  ASSERT_EQ(f.queries.size(), 4u);
  EXPECT_EQ(f.queries[0].label, 0u);
  EXPECT_EQ(f.queries[0].mask, kAllCategories);
  EXPECT_EQ(f.queries[1].label, 4294967295u);
  EXPECT_EQ(f.queries[1].mask, 0u);
  EXPECT_EQ(f.queries[2].label, 4294967295u);
  EXPECT_EQ(f.queries[2].mask, 16u);
  EXPECT_EQ(f.queries[3].label, 7u);
  EXPECT_EQ(f.queries[3].mask, 16u);
}

TEST(TraceReaderVersion2, QueriesIn2DAreLifted) {
  const TraceReadResult r = read_trace(
      "sapling-trace 2\ndims 2\nframe\nadd 1 0 0 1 1 filter 2 2 static\nquery 5 -inf 0.5 inf 0.5 mask 2\n"
      "frame\nquery 5 0 0 0 0\nquery 5 1 1 2 2\n");
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  ASSERT_EQ(r.trace.frames.size(), 2u);
  EXPECT_TRUE(same_box(r.trace.frames[0].added_boxes.at(0), box(0, 0, 0, 1, 1, 0)));
  ASSERT_EQ(r.trace.frames[0].queries.size(), 1u);
  EXPECT_TRUE(same_box(r.trace.frames[0].queries[0].box, box(-kInf, 0.5f, 0, kInf, 0.5f, 0)));
  EXPECT_EQ(r.trace.frames[0].queries[0].mask, 2u);
  // Queries are not operations: a frame of queries only is empty(), and
  // labels repeat freely.
  const TraceFrame& f1 = r.trace.frames[1];
  EXPECT_TRUE(f1.empty());
  ASSERT_EQ(f1.queries.size(), 2u);
  EXPECT_TRUE(same_box(f1.queries[1].box, box(1, 1, 0, 2, 2, 0)));
}

TEST(TraceReaderVersion2, FilterIsAnOperation) {
  const TraceReadResult r = read_trace(
      "sapling-trace 2\nframe\nadd 1 0 0 0 1 1 1 static\nadd 2 0 0 0 1 1 1\n"
      "frame\nfilter 1 2 3\nfilter 2 0x4 0x5\nadd 3 0 0 0 1 1 1\n"
      "frame\nremove 1\nmove 2 1 1 1 2 2 2\nfilter 3 0 0\n");
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  ASSERT_EQ(r.trace.frames.size(), 3u);
  EXPECT_EQ(r.trace.frames[1].filtered, (std::vector<Id>{1, 2}));
  EXPECT_EQ(r.trace.frames[1].filters, (std::vector<Filter>{Filter{2, 3}, Filter{4, 5}}));
  EXPECT_EQ(r.trace.frames[2].filtered, (std::vector<Id>{3}));
  EXPECT_EQ(r.trace.frames[2].filters, (std::vector<Filter>{Filter{0, 0}}));
  TraceFrame only_filter;
  only_filter.filtered = {1};
  only_filter.filters = {Filter{}};
  EXPECT_FALSE(only_filter.empty());
}

// Version 2's frames 0 and 1 complete; frame 2 starts at line 9, line 10 is
// fine, and each case's bad line is line 11.
constexpr const char* kBase2 =
    "sapling-trace 2\n"
    "# two boxes that overlap, then part\n"
    "frame\n"
    "add 1 0 0 0 1 1 1 static\n"
    "add 2 0.5 0.5 0.5 2 2 2 filter 1 0x3\n"
    "\n"
    "frame\n"
    "move 1 3 3 3 4 4 4\n"
    "frame\n"
    "add 3 0 0 0 1 1 1\n";

std::vector<ErrorCase> version_2_error_cases() {
  const std::string base = kBase2;
  const std::string v1 = kBase;
  const auto at11 = [&](const char* what, const std::string& line, const std::string& reason) {
    return ErrorCase{what, base + line + "\nremove 3\n", 11, reason, 2};
  };
  const auto v1_at11 = [&](const char* what, const std::string& line, const std::string& reason) {
    return ErrorCase{what, v1 + line + "\nremove 3\n", 11, reason, 2};
  };
  const std::string integer = ": expected an integer 0..4294967295, decimal or 0x-hexadecimal";
  return {
      // Attributes of add.
      at11("unknown attribute", "add 4 0 0 0 1 1 1 sticky", "add of id 4: unknown attribute 'sticky'"),
      at11("unknown attribute after static", "add 4 0 0 0 1 1 1 static 5", "add of id 4: unknown attribute '5'"),
      at11("attribute in capitals", "add 4 0 0 0 1 1 1 STATIC", "add of id 4: unknown attribute 'STATIC'"),
      at11("repeated static", "add 4 0 0 0 1 1 1 static static", "add of id 4: repeated attribute 'static'"),
      at11("repeated filter", "add 4 0 0 0 1 1 1 filter 1 2 static filter 1 2",
           "add of id 4: repeated attribute 'filter'"),
      at11("filter without values", "add 4 0 0 0 1 1 1 filter", "add of id 4: missing category"),
      at11("filter without a mask", "add 4 0 0 0 1 1 1 filter 1", "add of id 4: missing mask"),
      at11("filter with a word for its mask", "add 4 0 0 0 1 1 1 filter 1 static",
           "add of id 4: bad mask 'static'" + integer),
      at11("too few numbers before an attribute", "add 4 0 0 0 1 1 static",
           "add of id 4: expected 6 numbers (3D box), got 5"),
      at11("too many numbers before an attribute", "add 4 0 0 0 1 1 1 1 static",
           "add of id 4: expected 6 numbers (3D box), got 7"),
      at11("an attribute first", "add 4 static 0 0 0 1 1 1", "add of id 4: expected 6 numbers (3D box), got 0"),
      at11("attribute of a move", "move 2 0 0 0 1 1 1 static",
           "move of id 2: unexpected 'static': move keeps the object's filter and motion"),
      at11("filter attribute of a move", "move 2 0 0 0 1 1 1 filter 1 1",
           "move of id 2: unexpected 'filter': move keeps the object's filter and motion"),
      at11("attribute of a remove", "remove 2 static", "remove of id 2: expected only an id, got 1 numbers"),
      at11("invalid box with attributes", "add 4 0 0 2 1 1 1 static", "add of id 4: invalid box: min.z > max.z"),
      // Bad integers.
      at11("category out of range", "add 4 0 0 0 1 1 1 filter 4294967296 1",
           "add of id 4: bad category '4294967296'" + integer),
      at11("mask out of range in hex", "add 4 0 0 0 1 1 1 filter 1 0x100000000",
           "add of id 4: bad mask '0x100000000'" + integer),
      at11("negative category", "add 4 0 0 0 1 1 1 filter -1 1", "add of id 4: bad category '-1'" + integer),
      at11("category with a plus", "add 4 0 0 0 1 1 1 filter +1 1", "add of id 4: bad category '+1'" + integer),
      at11("hex prefix only", "add 4 0 0 0 1 1 1 filter 0x 1", "add of id 4: bad category '0x'" + integer),
      at11("capital hex prefix", "add 4 0 0 0 1 1 1 filter 0X1 1", "add of id 4: bad category '0X1'" + integer),
      at11("hex with a sign", "add 4 0 0 0 1 1 1 filter 0x-1 1", "add of id 4: bad category '0x-1'" + integer),
      at11("hex digits without a prefix", "add 4 0 0 0 1 1 1 filter ff 1", "add of id 4: bad category 'ff'" + integer),
      at11("a fraction", "add 4 0 0 0 1 1 1 filter 1.0 1", "add of id 4: bad category '1.0'" + integer),
      at11("junk after digits", "filter 2 1 7z", "filter of id 2: bad mask '7z'" + integer),
      at11("junk after hex digits", "filter 2 0x1g 1", "filter of id 2: bad category '0x1g'" + integer),
      // The filter operation.
      at11("filter of an id that is not live", "filter 9 1 1", "filter of id 9: id is not live"),
      at11("filter of an id added in this frame", "filter 3 1 1",
           "filter of id 3: id already has an operation in this frame"),
      at11("filter with one value", "filter 2 1", "filter of id 2: expected CATEGORY MASK, got 1 value"),
      at11("filter without values", "filter 2", "filter of id 2: expected CATEGORY MASK, got 0 values"),
      at11("filter with three values", "filter 2 1 2 3", "filter of id 2: expected CATEGORY MASK, got 3 values"),
      at11("filter without an id", "filter", "filter: missing id"),
      at11("filter of a bad id", "filter x 1 1", "filter: bad id 'x': expected a decimal integer 0..4294967295"),
      at11("filter of a hex id", "filter 0x2 1 1", "filter: bad id '0x2': expected a decimal integer 0..4294967295"),
      {"filter after remove", base + "remove 2\nfilter 2 1 1\n", 12,
       "filter of id 2: id already has an operation in this frame", 2},
      {"move after filter", base + "filter 2 1 1\nmove 2 0 0 0 1 1 1\n", 12,
       "move of id 2: id already has an operation in this frame", 2},
      {"two filters of one id", base + "filter 2 1 1\nfilter 2 1 1\n", 12,
       "filter of id 2: id already has an operation in this frame", 2},
      {"filter of a removed id", base + "remove 2\nframe\nfilter 2 1 1\n", 13, "filter of id 2: id is not live", 3},
      {"filter before the first frame", "sapling-trace 2\nfilter 1 1 1\n", 2, "filter before the first frame", 0},
      // Queries.
      at11("query with too few numbers", "query 5 0 0 0 1 1", "query 5: expected 6 numbers (3D box), got 5"),
      at11("query with too many numbers", "query 5 0 0 0 1 1 1 1", "query 5: expected 6 numbers (3D box), got 7"),
      at11("query with too few numbers and a mask", "query 5 0 0 0 1 1 mask 1",
           "query 5: expected 6 numbers (3D box), got 5"),
      at11("query with no box", "query 5", "query 5: expected 6 numbers (3D box), got 0"),
      at11("query with min > max", "query 5 0 0 2 1 1 1", "query 5: invalid box: min.z > max.z"),
      at11("query with a NaN", "query 5 nan 0 0 1 1 1", "query 5: invalid box: min.x is NaN"),
      at11("query with a NaN max", "query 5 0 0 0 1 nan 1 mask 1", "query 5: invalid box: max.y is NaN"),
      at11("query with a bad number", "query 5 0 0 0 1 1 q", "query 5: bad number 'q' for max.z"),
      at11("query with a mask and no value", "query 5 0 0 0 1 1 1 mask", "query 5: missing mask"),
      at11("query with a bad mask", "query 5 0 0 0 1 1 1 mask -4", "query 5: bad mask '-4'" + integer),
      at11("query with two masks", "query 5 0 0 0 1 1 1 mask 1 mask 2", "query 5: repeated attribute 'mask'"),
      at11("query with a filter", "query 5 0 0 0 1 1 1 filter 1 2", "query 5: unknown attribute 'filter'"),
      at11("query with a word after the mask", "query 5 0 0 0 1 1 1 mask 1 static",
           "query 5: unknown attribute 'static'"),
      at11("query with static", "query 5 0 0 0 1 1 1 static", "query 5: unknown attribute 'static'"),
      at11("query without a label", "query", "query: missing label"),
      at11("query with a bad label", "query x 0 0 0 1 1 1", "query: bad label 'x'" + integer),
      at11("query with a label out of range", "query 0x1ffffffff 0 0 0 1 1 1",
           "query: bad label '0x1ffffffff'" + integer),
      {"query before the first frame", "sapling-trace 2\nquery 1 0 0 0 1 1 1\n", 2, "query before the first frame", 0},
      {"a 3D query in a 2D trace", "sapling-trace 2\ndims 2\nframe\nquery 1 0 0 0 1 1 1\n", 4,
       "query 1: expected 4 numbers (2D box), got 6", 0},
      {"an invalid 2D query", "sapling-trace 2\ndims 2\nframe\nframe\nquery 1 0 1 1 0\n", 5,
       "query 1: invalid box: min.y > max.y", 1},
      // Version-2 words in a version-1 trace.
      v1_at11("static in version 1", "add 4 0 0 0 1 1 1 static",
              "add of id 4: attribute 'static' needs version 2, and the header says 'sapling-trace 1'"),
      v1_at11("a filter attribute in version 1", "add 4 0 0 0 1 1 1 filter 2 2",
              "add of id 4: attribute 'filter' needs version 2, and the header says 'sapling-trace 1'"),
      v1_at11("the filter operation in version 1", "filter 2 1 1",
              "keyword 'filter' needs version 2, and the header says 'sapling-trace 1'"),
      v1_at11("a query in version 1", "query 1 0 0 0 1 1 1",
              "keyword 'query' needs version 2, and the header says 'sapling-trace 1'"),
      {"a query before the first frame in version 1", "sapling-trace 1\nquery 1 0 0 0 1 1 1\n", 2,
       "keyword 'query' needs version 2, and the header says 'sapling-trace 1'", 0},
      // An error in version 2's own version-1 part.
      at11("add of a live id", "add 2 0 0 0 1 1 1 static", "add of id 2: id is already live"),
      at11("unknown keyword", "resize 1 0 0 0 1 1 1", "unknown keyword 'resize'"),
      at11("a second header", "sapling-trace 2", "repeated header: 'sapling-trace' belongs on the first line only"),
  };
}

TEST(TraceReaderVersion2, Errors) {
  for (const ErrorCase& c : version_2_error_cases()) expect_error(c);
}

TEST(TraceReaderVersion2, FramesBeforeTheErrorAreComplete) {
  const TraceReadResult r = read_trace(std::string(kBase2) + "filter 9 1 1\n");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->line, 11u);
  ASSERT_EQ(r.trace.frames.size(), 2u);
  EXPECT_EQ(r.trace.version, 2);
  const TraceFrame& f0 = r.trace.frames[0];
  EXPECT_EQ(f0.added, (std::vector<Id>{1, 2}));
  EXPECT_EQ(f0.added_static, (std::vector<std::uint8_t>{1, 0}));
  EXPECT_EQ(f0.added_filters, (std::vector<Filter>{Filter{}, Filter{1, 3}}));
  EXPECT_EQ(r.trace.frames[1].moved, (std::vector<Id>{1}));
}

TEST(TraceWriterVersion2, ContractExampleText) {
  const std::string text = write(example2_trace());
  EXPECT_EQ(text,
            "sapling-trace 2\ndims 3\n"
            "frame\n"
            "add 1 -inf -inf -1 inf inf 0 static\n"
            "add 2 5 5 -1 6 6 0 static\n"
            "add 7 0 0 0 1 1 1 filter 0x2 0xfffffffd\n"
            "add 8 0.5 0 0 1.5 1 1 filter 0x2 0xffffffff\n"
            "add 9 0.5 0.5 0.5 2 2 2\n"
            "frame\n"
            "filter 9 0x4 0x1\n"
            "query 100 -1 -1 -1 0.75 0.75 0.75\n"
            "query 101 0 0 0 3 3 3 mask 0x4\n");
  const TraceReadResult r = read_trace(text);
  ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
  EXPECT_TRUE(same_trace(r.trace, example2_trace()));
}

TEST(TraceWriterVersion2, VersionFollowsTheContent) {
  // Version 1 with nothing of version 2: written as before.
  EXPECT_EQ(write(example_trace()).substr(0, 16), "sapling-trace 1\n");
  // Asked for version 2: written as version 2 even without its keywords.
  Trace asked = example_trace();
  asked.version = 2;
  EXPECT_EQ(write(asked).substr(0, 16), "sapling-trace 2\n");
  // A query, a filter operation, a static or filtered add: version 2 whatever
  // trace.version says; a filter attribute equal to the defaults is not
  // written.
  for (int k = 0; k < 5; ++k) {
    SCOPED_TRACE(k);
    Trace t = example_trace();
    TraceFrame& f = t.frames[k == 3 ? 1 : 0];
    if (k == 0) f.queries.push_back(TraceQuery{1, box(0, 0, 0, 1, 1, 1)});
    if (k == 1) f.added_static = {0, 1};
    if (k == 2) f.added_filters = {Filter{}, Filter{1, 2}};
    if (k == 3) {
      f.filtered = {9};
      f.filters = {Filter{}};
    }
    if (k == 4) f.added_filters = {Filter{}, Filter{}};
    const std::string text = write(t);
    EXPECT_EQ(text.substr(0, 16), k == 4 ? "sapling-trace 1\n" : "sapling-trace 2\n");
    const TraceReadResult r = read_trace(text);
    ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
    t.version = k == 4 ? 1 : 2;
    EXPECT_TRUE(same_trace(r.trace, t));
  }
}

TEST(TraceWriterVersion2, TwoDimensions) {
  Trace t;
  t.dims = 2;
  t.version = 2;
  t.frames.resize(1);
  t.frames[0].added = {1};
  t.frames[0].added_boxes = {box(0, 0, 0, 1, 1, 0)};
  t.frames[0].added_static = {1};
  t.frames[0].queries = {TraceQuery{3, box(-kInf, 0, 0, 0.5f, 1, 0), 0}};
  const std::string text = write(t);
  EXPECT_EQ(text, "sapling-trace 2\ndims 2\nframe\nadd 1 0 0 1 1 static\nquery 3 -inf 0 0.5 1 mask 0x0\n");
  const TraceReadResult r = read_trace(text);
  ASSERT_FALSE(r.error) << r.error->reason;
  EXPECT_TRUE(same_trace(r.trace, t));
}

/// Version 2 on a valid trace: random filters and motions on its adds,
/// filter operations on ids live before the frame and untouched in it, and
/// random queries (some with masks), all with random bit patterns.
void add_version_2(Trace& t, std::uint64_t seed) {
  testgen::Rng rng(seed);
  t.version = 2;
  const auto random_filter = [&] {
    return Filter{static_cast<std::uint32_t>(rng.next()), rng.chance(0.3) ? kAllCategories : std::uint32_t(rng.next())};
  };
  std::vector<Id> live;
  for (TraceFrame& f : t.frames) {
    std::vector<Id> touched(f.removed);
    touched.insert(touched.end(), f.moved.begin(), f.moved.end());
    for (const Id id : live) {
      if (std::find(touched.begin(), touched.end(), id) == touched.end() && rng.chance(0.2)) {
        f.filtered.push_back(id);
        f.filters.push_back(random_filter());
      }
    }
    if (rng.chance(0.7)) {
      for (std::size_t i = 0; i < f.added.size(); ++i) {
        f.added_static.push_back(rng.chance(0.3) ? 1 : 0);
        f.added_filters.push_back(rng.chance(0.5) ? Filter{} : random_filter());
      }
    }
    const int queries = rng.range(0, 3);
    for (int q = 0; q < queries; ++q) {
      const Box3 b = f.added_boxes.empty() ? box(0, 0, 0, 0, 0, 0) : f.added_boxes[rng.below(f.added_boxes.size())];
      f.queries.push_back(TraceQuery{static_cast<std::uint32_t>(rng.next()), b,
                                     rng.chance(0.5) ? kAllCategories : static_cast<std::uint32_t>(rng.next())});
    }
    for (const Id id : f.removed) live.erase(std::find(live.begin(), live.end(), id));
    live.insert(live.end(), f.added.begin(), f.added.end());
  }
}

TEST(TraceRoundTripVersion2, RandomFiltersMotionsAndQueries) {
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    for (const int dims : {2, 3}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", dims " + std::to_string(dims));
      Trace t = random_bits_trace(seed, dims);
      add_version_2(t, seed);
      const std::string text = write(t);
      const TraceReadResult r = read_trace(text);
      ASSERT_FALSE(r.error) << r.error->line << ": " << r.error->reason;
      EXPECT_TRUE(same_trace(r.trace, t));
      EXPECT_EQ(write(r.trace), text);
    }
  }
}

// stage_frame: a frame mixing static and dynamic adds goes in as two
// batches, every object with its filter and motion, then the filter changes.
TEST(StageFrame, ContractExampleVersion2) {
  const Trace t = example2_trace();
  const auto broad_phase = BroadPhase::create("brute");
  ASSERT_TRUE(broad_phase);
  ASSERT_TRUE(stage_frame(*broad_phase, t.frames[0]));
  (void)broad_phase->update();
  for (std::size_t i = 0; i < t.frames[0].added.size(); ++i) {
    const Id id = t.frames[0].added[i];
    SCOPED_TRACE(id);
    EXPECT_EQ(broad_phase->filter(id), t.frames[0].added_filter(i));
    EXPECT_EQ(broad_phase->motion(id), t.frames[0].added_is_static(i) ? Motion::kStatic : Motion::kDynamic);
  }
  std::vector<Pair> pairs;
  broad_phase->sorted_pairs(pairs);
  EXPECT_EQ(pairs, (std::vector<Pair>{{1, 7}, {1, 8}, {7, 9}, {8, 9}}));
  ASSERT_TRUE(stage_frame(*broad_phase, t.frames[1]));
  (void)broad_phase->update();
  EXPECT_EQ(broad_phase->filter(9), (Filter{4, 0x1}));
  broad_phase->sorted_pairs(pairs);
  EXPECT_EQ(pairs, (std::vector<Pair>{{1, 7}, {1, 8}}));
  // A refused operation is returned: a filter of an id that is not live.
  TraceFrame bad;
  bad.filtered = {42};
  bad.filters = {Filter{}};
  EXPECT_EQ(stage_frame(*broad_phase, bad).code(), StatusCode::kUnknownId);
}

// ---------------------------------------------------------------------------
// The pair-set hash.

std::uint64_t reference_fnv(const std::vector<Pair>& pairs) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const Pair& p : pairs) {
    for (const std::uint32_t v : {p.a, p.b}) {
      unsigned char bytes[4];
      for (int i = 0; i < 4; ++i) bytes[i] = static_cast<unsigned char>(v >> (8 * i));  // little-endian
      for (const unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ull;
      }
    }
  }
  return h;
}

TEST(PairSetHash, ContractValues) {
  EXPECT_EQ(pair_set_hash({}), 0xcbf29ce484222325ull);
  const std::vector<Pair> example = {{7, 9}};
  EXPECT_EQ(pair_set_hash(example), 0xeba7af620f2ffc7bull);
}

TEST(PairSetHash, VersionTwoExample) {
  const std::vector<Pair> frame0 = {{1, 7}, {1, 8}, {7, 9}, {8, 9}};
  const std::vector<Pair> frame1 = {{1, 7}, {1, 8}};
  EXPECT_EQ(pair_set_hash(frame0), 0x80bcb38805b607f5ull);
  EXPECT_EQ(pair_set_hash(frame1), 0x24b91f8a99daadda);
}

TEST(IdListHash, ContractValues) {
  EXPECT_EQ(id_list_hash({}), 0xcbf29ce484222325ull);
  const std::vector<Id> query100 = {1, 7, 8, 9};
  const std::vector<Id> query101 = {9};
  EXPECT_EQ(id_list_hash(query100), 0x9be4b24e42b2c362ull);
  EXPECT_EQ(id_list_hash(query101), 0xad002ab9f9463becull);
}

TEST(IdListHash, IsThePairHashOfTheSameWords) {
  // Both hash 32-bit words in order: ids a, b hash as the pair (a, b).
  testgen::Rng rng(11);
  for (int i = 0; i < 100; ++i) {
    const Id a = static_cast<Id>(rng.next()), b = static_cast<Id>(rng.next());
    const std::vector<Id> ids = {a, b};
    const std::vector<Pair> pair = {{a, b}};
    EXPECT_EQ(id_list_hash(ids), pair_set_hash(pair));
  }
}

TEST(PairSetHash, MatchesBytewiseFnv) {
  testgen::Rng rng(7);
  for (int n : {1, 2, 3, 10, 1000}) {
    std::vector<Pair> pairs;
    for (int i = 0; i < n; ++i) {
      pairs.push_back(make_pair(static_cast<Id>(rng.next()), static_cast<Id>(rng.next()) | 1u));
    }
    pairs.push_back({0, 4294967295u});
    EXPECT_EQ(pair_set_hash(pairs), reference_fnv(pairs));
  }
}

}  // namespace
}  // namespace sapling
