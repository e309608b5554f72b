// The trace reader: parses and checks a whole text trace, version 1 or 2, the
// format of docs/trace-format.md ("Text format, version 1", "Version 2" and
// their errors).
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
//   fits in 32 bits; no sign. Categories, masks and query labels are the
//   same, or `0x` and one or more hexadecimal digits (either case).
// - An input with no header at all (empty, or only blank and comment lines)
//   is rejected at line 1.
// - The header's keyword on a later line is an error of its own ("repeated
//   header"), not an unknown keyword.
// - In version 2, the numbers of a box run to the first attribute keyword
//   (`static`, `filter`; `mask` for a query) or the end of the line; a word
//   where an attribute is due that is no number is an unknown attribute.
//   `move` takes no attribute: it keeps the object's filter and motion.
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
constexpr std::string_view kExpectedHeader = "'sapling-trace 1' or 'sapling-trace 2'";

// A data line has at most 12 tokens (`add ID`, six numbers, `static filter
// C M`). Tokens beyond kMaxTokens are counted, not stored: a line that has
// them is refused before any of them would be read (after at most 4
// attribute tokens, an attribute is unknown or repeated).
constexpr std::size_t kMaxTokens = 16;

// The header's tokens quoted in its error message: a data line of version 1
// has at most a keyword, an id and six numbers, and one more tells "too many".
constexpr std::size_t kHeaderQuoteTokens = 9;

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

/// An unsigned 32-bit integer: decimal digits, or with `hex_allowed` also
/// `0x` and hexadecimal digits; no sign, no overflow, nothing after.
bool parse_uint32(std::string_view token, std::uint32_t& value, bool hex_allowed) {
  int base = 10;
  if (hex_allowed && token.size() > 2 && token[0] == '0' && token[1] == 'x') {
    token.remove_prefix(2);
    base = 16;
  }
  const char* first = token.data();
  const char* last = first + token.size();
  // from_chars takes no '+', and no '-' for an unsigned type; checked anyway.
  if (first == last || *first == '-' || *first == '+') return false;
  const auto [ptr, ec] = std::from_chars(first, last, value, base);
  return ec == std::errc{} && ptr == last;
}

const char* const kCoordinateNames3[] = {"min.x", "min.y", "min.z", "max.x", "max.y", "max.z"};
const char* const kCoordinateNames2[] = {"min.x", "min.y", "max.x", "max.y"};

enum class Keyword { kUnknown, kHeader, kDims, kFrame, kAdd, kMove, kRemove, kFilter, kQuery };

Keyword keyword_of(std::string_view token) {
  if (token == "add") return Keyword::kAdd;
  if (token == "move") return Keyword::kMove;
  if (token == "remove") return Keyword::kRemove;
  if (token == "frame") return Keyword::kFrame;
  if (token == "filter") return Keyword::kFilter;
  if (token == "query") return Keyword::kQuery;
  if (token == "dims") return Keyword::kDims;
  if (token == kHeaderKeyword) return Keyword::kHeader;
  return Keyword::kUnknown;
}

// The attributes of version 2: after the numbers of `add`, and of `query`.
constexpr std::string_view kStatic = "static";
constexpr std::string_view kFilter = "filter";
constexpr std::string_view kMask = "mask";
constexpr std::string_view kAddAttributes[] = {kStatic, kFilter};
constexpr std::string_view kQueryAttributes[] = {kMask};

bool is_one_of(std::string_view token, std::span<const std::string_view> words) {
  for (const std::string_view w : words) {
    if (token == w) return true;
  }
  return false;
}

/// A refusal's reason without its subject: "id is not live" of
/// "set_filter of id 9: id is not live". The reader names the line's
/// subject itself, in the trace's words.
std::string reason_of(const Status& status) {
  const std::string message = status.message();
  const std::size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
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
      return fail("missing header: expected " + std::string(kExpectedHeader));
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

  /// Tokens stored in tokens_.
  std::size_t stored() const noexcept { return count_ < kMaxTokens ? count_ : kMaxTokens; }

  /// The tokens of the line joined by single spaces (for the header message).
  std::string joined_tokens() const {
    std::string s;
    const std::size_t n = count_ < kHeaderQuoteTokens ? count_ : kHeaderQuoteTokens;
    for (std::size_t i = 0; i < n; ++i) {
      if (i) s += ' ';
      s += tokens_[i];
    }
    if (count_ > kHeaderQuoteTokens) s += " ...";
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
      case Keyword::kFilter:
        return parse_filter();
      case Keyword::kQuery:
        return parse_query();
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
    if (tokens_[0] == kHeaderKeyword && count_ == 2) {
      if (tokens_[1] == "1" || tokens_[1] == "2") {
        trace_.version = tokens_[1] == "1" ? 1 : 2;
        header_seen_ = true;
        return true;
      }
      return error("unsupported trace version " + quote(tokens_[1]) + ": expected " + std::string(kExpectedHeader));
    }
    return error("expected header " + std::string(kExpectedHeader) + ", got " + quote(joined_tokens()));
  }

  /// False, with the reason, for a version-2 word (`what`) in a version-1 trace.
  bool require_version_2(const std::string& what) {
    if (trace_.version >= 2) return true;
    return error(what + " needs version 2, and the header says 'sapling-trace 1'");
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

  // The subject of the line's messages: "add of id 7: ", "query 100: ".
  // Built only on the error path: allocating per line would dominate the
  // reading time.
  std::string subject() const {
    return std::string(tokens_[0]) + (subject_is_label_ ? " " : " of id ") + std::to_string(subject_) + ": ";
  }

  /// Reads tokens_[1] as the line's id (decimal) or, for a query, its label.
  bool parse_subject(bool is_label) {
    subject_is_label_ = is_label;
    if (in_frame_ && count_ >= 2 && parse_uint32(tokens_[1], subject_, is_label)) return true;
    const std::string name(tokens_[0]);
    if (!in_frame_) return error(name + " before the first frame");
    if (count_ < 2) return error(name + (is_label ? ": missing label" : ": missing id"));
    return error(name + (is_label ? ": bad label " + quote(tokens_[1]) +
                                        ": expected an integer 0..4294967295, decimal or 0x-hexadecimal"
                                  : ": bad id " + quote(tokens_[1]) + ": expected a decimal integer 0..4294967295"));
  }

  /// tokens_[index] as a category, mask or label (`what`).
  bool parse_integer(std::size_t index, const char* what, std::uint32_t& value) {
    if (index >= count_) return error(subject() + "missing " + what);
    if (parse_uint32(tokens_[index], value, true)) return true;
    return error(subject() + "bad " + what + " " + quote(tokens_[index]) +
                 ": expected an integer 0..4294967295, decimal or 0x-hexadecimal");
  }

  /// The box of tokens_[2..] (2 * dims numbers) and where the attributes
  /// after it begin (count_ if none). `attributes` are the words that end
  /// the numbers; none in version 1, where every token after the id is a
  /// number.
  bool parse_box_operand(Operation op, std::span<const std::string_view> attributes, Box3& box,
                         std::size_t& attributes_begin) {
    const auto expected = static_cast<std::size_t>(2 * trace_.dims);
    // An attribute among the tokens not stored would follow too many numbers anyway.
    std::size_t end = count_;
    if (!attributes.empty()) {
      end = 2;
      while (end < stored() && !is_one_of(tokens_[end], attributes)) ++end;
      if (end == stored()) end = count_;
    }
    // A word that is no number where an attribute is due: an unknown attribute.
    float unused = 0;
    if (!attributes.empty() && end > 2 + expected && !parse_number(tokens_[2 + expected], unused, scratch_)) {
      return error(subject() + "unknown attribute " + quote(tokens_[2 + expected]));
    }
    const std::size_t numbers = end - 2;
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
    if (!check) return error(subject() + reason_of(Status::invalid_box(op, subject_, 0, check)));
    attributes_begin = end;
    return true;
  }

  bool parse_operation(Operation op) {
    if (!parse_subject(false)) return false;
    const Id id = subject_;
    Box3 box{};
    Filter filter{};
    bool is_static = false;
    bool has_filter = false;
    if (op == Operation::kRemove) {
      const std::size_t numbers = count_ - 2;
      if (numbers != 0) return error(subject() + "expected only an id, got " + std::to_string(numbers) + " numbers");
    } else if (trace_.version == 1) {
      std::size_t end = 0;
      if (!parse_box_operand(op, {}, box, end)) {
        // A version-2 attribute on the line breaks its count or a number;
        // it is the better reason. Looked for only on this error path.
        for (std::size_t i = 2; op == Operation::kAdd && i < stored(); ++i) {
          if (is_one_of(tokens_[i], kAddAttributes)) {
            return require_version_2(subject() + "attribute " + quote(tokens_[i]));
          }
        }
        return false;
      }
    } else {
      std::size_t i = 0;
      if (!parse_box_operand(op, kAddAttributes, box, i)) return false;
      while (i < count_) {
        const std::string_view word = tokens_[i];
        if (op != Operation::kAdd) {
          return error(subject() + "unexpected " + quote(word) + ": move keeps the object's filter and motion");
        }
        const bool repeated = word == kStatic ? is_static : word == kFilter ? has_filter : false;
        if (repeated) return error(subject() + "repeated attribute " + quote(word));
        if (word == kStatic) {
          is_static = true;
          ++i;
        } else if (word == kFilter) {
          if (!parse_integer(i + 1, "category", filter.category) || !parse_integer(i + 2, "mask", filter.mask)) {
            return false;
          }
          has_filter = true;
          i += 3;
        } else {
          return error(subject() + "unknown attribute " + quote(word));
        }
      }
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
        // The attribute vectors stay empty until an add has the attribute.
        if (has_filter || !frame_.added_filters.empty()) {
          frame_.added_filters.resize(frame_.added.size() - 1);
          frame_.added_filters.push_back(filter);
        }
        if (is_static || !frame_.added_static.empty()) {
          frame_.added_static.resize(frame_.added.size() - 1);
          frame_.added_static.push_back(is_static ? 1 : 0);
        }
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

  // `filter ID CATEGORY MASK`: an operation on a live id.
  bool parse_filter() {
    if (!require_version_2("keyword 'filter'") || !parse_subject(false)) return false;
    const Id id = subject_;
    if (count_ != 4) {
      return error(subject() + "expected CATEGORY MASK, got " + std::to_string(count_ - 2) +
                   (count_ == 3 ? " value" : " values"));
    }
    Filter filter{};
    if (!parse_integer(2, "category", filter.category) || !parse_integer(3, "mask", filter.mask)) return false;
    IdState& slot = state_of(id);
    const StatusCode code = slot.stamp == stamp_ ? StatusCode::kRepeatedId
                            : !slot.live         ? StatusCode::kUnknownId
                                                 : StatusCode::kOk;
    if (code != StatusCode::kOk)
      return error(subject() + reason_of(Status::id_error(code, Operation::kSetFilter, id, 0)));
    slot.stamp = stamp_;
    frame_.filtered.push_back(id);
    frame_.filters.push_back(filter);
    return true;
  }

  // `query Q box [mask M]`: not an operation, so any number per frame.
  bool parse_query() {
    if (!require_version_2("keyword 'query'") || !parse_subject(true)) return false;
    TraceQuery query;
    query.label = subject_;
    std::size_t i = 0;
    if (!parse_box_operand(Operation::kQuery, kQueryAttributes, query.box, i)) return false;
    bool has_mask = false;
    while (i < count_) {
      const std::string_view word = tokens_[i];
      if (word != kMask) return error(subject() + "unknown attribute " + quote(word));
      if (has_mask) return error(subject() + "repeated attribute " + quote(word));
      if (!parse_integer(i + 1, "mask", query.mask)) return false;
      has_mask = true;
      i += 2;
    }
    frame_.queries.push_back(query);
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
  std::size_t count_ = 0;          // tokens on the line, including any beyond kMaxTokens
  std::uint32_t subject_ = 0;      // the line's id, or a query's label
  bool subject_is_label_ = false;  // subject_ is a query's label

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
