// The trace reader: parses and checks a whole version-1 text trace, the format
// of docs/trace-format.md ("Text format, version 1" and its errors).
//
// Choices the contract leaves open, fixed here:
// - A carriage return just before a line feed (or at the very end of the
//   input) is ignored, so CRLF files read like LF files. A carriage return
//   anywhere else is part of a token, and so an error.
// - Numbers are what strtof reads in full, in the "C" locale whatever the
//   program's locale: `+1`, `0x1.8p1`, `infinity`, `nan(x)` are numbers.
//   A value out of float range reads as strtof rounds it: `1e39` is inf,
//   `1e-50` is 0 (both accepted, since strtof reads them in full).
// - Ids are one or more decimal digits (leading zeros allowed) whose value
//   fits in 32 bits; no sign.
// - An input with no header at all (empty, or only blank and comment lines)
//   is rejected at line 1.
// - The header's keyword on a later line is an error of its own ("repeated
//   header"), not an unknown keyword.
//
// Speed: the input is parsed in place from one buffer; ids go through
// std::from_chars, numbers through std::from_chars<float> first (exact, fast,
// locale-free) and through strtof only for the forms from_chars leaves out
// (a leading '+', hex floats, values out of range), so every number is the
// float strtof gives.
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <istream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__GLIBC__)
#include <locale.h>
#endif

#include "sapling/detail/id_index.hpp"
#include "sapling/status.hpp"
#include "sapling/trace.hpp"

namespace sapling {
namespace {

constexpr std::string_view kHeaderKeyword = "sapling-trace";
constexpr std::string_view kHeaderVersion = "1";

// A data line has at most a keyword, an id and six numbers; one more slot
// tells "too many" apart without storing the rest.
constexpr std::size_t kMaxTokens = 9;

// Tokens quoted in messages are cut to this many bytes.
constexpr std::size_t kQuoteLimit = 40;

/// A token as it can be printed: cut short, control and non-ASCII bytes as \xNN.
std::string quote(std::string_view token) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  const std::size_t n = token.size() < kQuoteLimit ? token.size() : kQuoteLimit;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(token[i]);
    if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (n < token.size()) out += "...";
  out += '\'';
  return out;
}

/// strtof in the "C" locale: the decimal point is '.' whatever setlocale says.
float strtof_c(const char* s, char** end) {
#if defined(__GLIBC__)
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", locale_t{});
  if (c_locale != locale_t{}) return strtof_l(s, end, c_locale);
#endif
  return std::strtof(s, end);
}

/// Reads `token` as strtof would, true when strtof reads all of it.
bool parse_number(std::string_view token, float& value, std::string& scratch) {
  const char* first = token.data();
  const char* last = first + token.size();
  // from_chars reads strtof's syntax except a leading '+' and a "0x" prefix,
  // and is correctly rounded like glibc's strtof, so a full read agrees.
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec == std::errc{} && ptr == last) return true;
  // The rare forms: strtof itself, on a NUL-terminated copy. A NUL inside the
  // token stops strtof early, so such a token is not read in full.
  scratch.assign(token);
  char* end = nullptr;
  value = strtof_c(scratch.c_str(), &end);
  return end == scratch.c_str() + scratch.size() && !token.empty();
}

/// A decimal unsigned 32-bit integer: digits only, no sign, no overflow.
bool parse_id(std::string_view token, Id& id) {
  const char* first = token.data();
  const char* last = first + token.size();
  if (first == last || *first < '0' || *first > '9') return false;
  const auto [ptr, ec] = std::from_chars(first, last, id, 10);
  return ec == std::errc{} && ptr == last;
}

const char* const kCoordinateNames3[] = {"min.x", "min.y", "min.z", "max.x", "max.y", "max.z"};
const char* const kCoordinateNames2[] = {"min.x", "min.y", "max.x", "max.y"};

enum class Keyword { kUnknown, kHeader, kDims, kFrame, kAdd, kMove, kRemove };

Keyword keyword_of(std::string_view token) {
  if (token == "add") return Keyword::kAdd;
  if (token == "move") return Keyword::kMove;
  if (token == "remove") return Keyword::kRemove;
  if (token == "frame") return Keyword::kFrame;
  if (token == "dims") return Keyword::kDims;
  if (token == kHeaderKeyword) return Keyword::kHeader;
  return Keyword::kUnknown;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  TraceReadResult run() {
    std::size_t pos = 0;
    while (pos < text_.size()) {
      ++line_;
      const char* start = text_.data() + pos;
      const std::size_t rest = text_.size() - pos;
      const void* newline = std::memchr(start, '\n', rest);
      const std::size_t length = newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - start) : rest;
      pos += length + 1;
      std::string_view line(start, length);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (const void* hash = std::memchr(line.data(), '#', line.size())) {
        line = line.substr(0, static_cast<std::size_t>(static_cast<const char*>(hash) - line.data()));
      }
      tokenize(line);
      if (count_ == 0) continue;
      if (!parse_line()) return finish_with_error();
    }
    if (!header_seen_) {
      line_ = 1;
      return fail("missing header: expected 'sapling-trace 1'");
    }
    if (in_frame_) trace_.frames.push_back(std::move(frame_));
    return TraceReadResult{std::move(trace_), std::nullopt};
  }

 private:
  void tokenize(std::string_view line) {
    count_ = 0;
    const char* p = line.data();
    const char* end = p + line.size();
    for (;;) {
      while (p != end && (*p == ' ' || *p == '\t')) ++p;
      if (p == end) return;
      const char* start = p;
      while (p != end && *p != ' ' && *p != '\t') ++p;
      if (count_ < kMaxTokens) tokens_[count_] = std::string_view(start, static_cast<std::size_t>(p - start));
      ++count_;
    }
  }

  /// The tokens of the line joined by single spaces (for the header message).
  std::string joined_tokens() const {
    std::string s;
    const std::size_t n = count_ < kMaxTokens ? count_ : kMaxTokens;
    for (std::size_t i = 0; i < n; ++i) {
      if (i) s += ' ';
      s += tokens_[i];
    }
    if (count_ > kMaxTokens) s += " ...";
    return s;
  }

  bool error(std::string reason) {
    error_ = std::move(reason);
    return false;
  }

  TraceReadResult fail(std::string reason) {
    error_ = std::move(reason);
    return finish_with_error();
  }

  // Frames that ended before the bad line are kept; the open frame is not.
  TraceReadResult finish_with_error() {
    return TraceReadResult{std::move(trace_), TraceError{line_, std::move(error_)}};
  }

  bool parse_line() {
    if (!header_seen_) return parse_header();
    switch (keyword_of(tokens_[0])) {
      case Keyword::kAdd:
        return parse_operation(Operation::kAdd);
      case Keyword::kMove:
        return parse_operation(Operation::kMove);
      case Keyword::kRemove:
        return parse_operation(Operation::kRemove);
      case Keyword::kFrame:
        if (count_ != 1) return error("unexpected " + quote(tokens_[1]) + " after 'frame'");
        if (in_frame_) {
          trace_.frames.push_back(std::move(frame_));
          frame_ = TraceFrame{};
        }
        in_frame_ = true;
        ++stamp_;
        return true;
      case Keyword::kDims:
        return parse_dims();
      case Keyword::kHeader:
        return error("repeated header: 'sapling-trace' belongs on the first line only");
      case Keyword::kUnknown:
        break;
    }
    return error("unknown keyword " + quote(tokens_[0]));
  }

  bool parse_header() {
    if (tokens_[0] == kHeaderKeyword && count_ == 2 && tokens_[1] != kHeaderVersion) {
      return error("unsupported trace version " + quote(tokens_[1]) + ": expected 'sapling-trace 1'");
    }
    if (tokens_[0] != kHeaderKeyword || count_ != 2) {
      return error("expected header 'sapling-trace 1', got " + quote(joined_tokens()));
    }
    header_seen_ = true;
    return true;
  }

  bool parse_dims() {
    if (in_frame_) return error("dims after the first frame");
    if (dims_seen_) return error("dims given twice");
    if (count_ != 2) return error("dims takes one value, 2 or 3");
    if (tokens_[1] == "2") {
      trace_.dims = 2;
    } else if (tokens_[1] == "3") {
      trace_.dims = 3;
    } else {
      return error("bad dims " + quote(tokens_[1]) + ": expected 2 or 3");
    }
    dims_seen_ = true;
    return true;
  }

  bool parse_operation(Operation op) {
    const std::string_view name = tokens_[0];
    if (!in_frame_) return error(std::string(name) + " before the first frame");
    if (count_ < 2) return error(std::string(name) + ": missing id");
    Id id = 0;
    if (!parse_id(tokens_[1], id)) {
      return error(std::string(name) + ": bad id " + quote(tokens_[1]) + ": expected a decimal integer 0..4294967295");
    }
    // The message prefix is built only on the error path: allocating per line
    // would dominate the reading time.
    const auto subject = [&] { return std::string(name) + " of id " + std::to_string(id) + ": "; };
    const std::size_t numbers = count_ - 2;
    Box3 box{};
    if (op == Operation::kRemove) {
      if (numbers != 0) return error(subject() + "expected only an id, got " + std::to_string(numbers) + " numbers");
    } else {
      const auto expected = static_cast<std::size_t>(2 * trace_.dims);
      if (numbers != expected) {
        return error(subject() + "expected " + std::to_string(expected) + " numbers (" +
                     (trace_.dims == 2 ? "2D" : "3D") + " box), got " + std::to_string(numbers));
      }
      int bad = -1;
      const BoxCheck check = parse_box(box, bad);
      if (bad >= 0) {
        const std::string_view token = tokens_[2 + static_cast<std::size_t>(bad)];
        return error(subject() + "bad number " + quote(token) + " for " +
                     (trace_.dims == 2 ? kCoordinateNames2[bad] : kCoordinateNames3[bad]));
      }
      if (!check) return error(Status::invalid_box(op, id, 0, check).message());
    }

    IdState& slot = state_of(id);
    if (slot.stamp == stamp_) {
      return error(Status::id_error(StatusCode::kRepeatedId, op, id, 0).message());
    }
    const bool want_live = op != Operation::kAdd;
    if (slot.live != want_live) {
      const StatusCode code = want_live ? StatusCode::kUnknownId : StatusCode::kDuplicateId;
      return error(Status::id_error(code, op, id, 0).message());
    }
    slot.stamp = stamp_;
    switch (op) {
      case Operation::kAdd:
        slot.live = true;
        frame_.added.push_back(id);
        frame_.added_boxes.push_back(box);
        break;
      case Operation::kMove:
        frame_.moved.push_back(id);
        frame_.moved_boxes.push_back(box);
        break;
      default:
        slot.live = false;
        frame_.removed.push_back(id);
        break;
    }
    return true;
  }

  // The numbers of tokens_[2..] as a box (2D boxes lifted to 3D) and its
  // check against the semantics; `bad` is the index of a token that is not a
  // number, if any.
  BoxCheck parse_box(Box3& box, int& bad) {
    const int d = trace_.dims;
    float v[6] = {};
    for (int k = 0; k < 2 * d; ++k) {
      if (!parse_number(tokens_[2 + static_cast<std::size_t>(k)], v[k], scratch_)) {
        bad = k;
        return {};
      }
    }
    if (d == 2) {
      const Box2 b{{v[0], v[1]}, {v[2], v[3]}};
      box = lift(b);
      return check_box(b);
    }
    box = Box3{{v[0], v[1], v[2]}, {v[3], v[4], v[5]}};
    return check_box(box);
  }

  std::string_view text_;
  std::size_t line_ = 0;
  std::string_view tokens_[kMaxTokens];
  std::size_t count_ = 0;  // tokens on the line, including any beyond kMaxTokens

  Trace trace_;
  TraceFrame frame_;  // the open frame, if in_frame_
  bool header_seen_ = false;
  bool dims_seen_ = false;
  bool in_frame_ = false;
  std::uint64_t stamp_ = 0;  // 1 + the index of the open frame
  // What the reader knows of each id it has seen (ids stay once seen).
  struct IdState {
    std::uint64_t stamp = 0;  // 1 + the last frame with an operation on the id; 0: none
    bool live = false;
  };
  detail::IdIndex ids_;  // id -> its index in states_
  std::vector<IdState> states_;
  IdState& state_of(Id id) {
    std::uint32_t k = ids_.find(id);
    if (k == detail::IdIndex::kNotFound) {
      k = static_cast<std::uint32_t>(states_.size());
      states_.emplace_back();
      ids_.insert(id, k);
    }
    return states_[k];
  }
  std::string scratch_;
  std::string error_;
};

}  // namespace

TraceReadResult read_trace(std::string_view text) { return Parser(text).run(); }

TraceReadResult read_trace(std::istream& in) {
  // The whole stream in one buffer, read in large blocks: per-token stream
  // extraction is an order of magnitude slower.
  std::string text;
  constexpr std::size_t kBlock = std::size_t{1} << 20;
  for (;;) {
    const std::size_t old = text.size();
    text.resize(old + kBlock);
    in.read(text.data() + old, static_cast<std::streamsize>(kBlock));
    text.resize(old + static_cast<std::size_t>(in.gcount()));
    if (!in) break;
  }
  if (in.bad()) return TraceReadResult{Trace{}, TraceError{1, "cannot read the trace"}};
  return read_trace(std::string_view(text));
}

}  // namespace sapling
