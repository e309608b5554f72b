// `sapling replay TRACE --algo NAME [--report delta|pairs|hash] [--out FILE]`:
// runs a trace through one algorithm and writes every frame's delta, pairs or
// pair-set hash, then the answers to the frame's region queries (version 2),
// byte for byte as docs/trace-format.md says.
#include <cstdio>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/trace.hpp"

namespace sapling::cli {
namespace {

enum class Report { kDelta, kPairs, kHash };

// Output is held back until it reaches this size. An algorithm that refuses
// the trace must do so before anything is written, so a replay whose output
// outgrows this first proves, by a dry run, that the whole trace is accepted.
constexpr std::size_t kHoldBytes = std::size_t{4} << 20;

struct Refusal {
  Status status;
  std::size_t frame = 0;
};

// Replays every frame without output on a fresh broad phase: the first
// refused operation, if any.
std::optional<Refusal> check_supported(const Trace& trace, std::string_view algo) {
  const auto broad_phase = BroadPhase::create(algo, Options{trace.dims});
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    if (Status s = stage_frame(*broad_phase, trace.frames[f]); !s) return Refusal{s, f};
    (void)broad_phase->update();
  }
  return std::nullopt;
}

int unsupported(const std::string& trace_name, std::string_view algo, const Refusal& refusal) {
  std::fprintf(stderr, "%s: unsupported by %.*s: %s (frame %zu)\n", trace_name.c_str(), static_cast<int>(algo.size()),
               algo.data(), refusal.status.message().c_str(), refusal.frame);
  return kExitUnsupported;
}

void append_pair(std::string& out, Pair p) {
  append_uint(out, p.a);
  out += ' ';
  append_uint(out, p.b);
  out += '\n';
}

void append_frame_head(std::string& out, std::size_t frame) {
  out += "frame ";
  append_uint(out, frame);
}

// One block per query: `query Q K` and K ids (delta, pairs), or `query Q K H`.
void append_query(std::string& out, Report report, const TraceQuery& query, std::span<const Id> ids) {
  out += "query ";
  append_uint(out, query.label);
  out += ' ';
  append_uint(out, ids.size());
  if (report == Report::kHash) {
    out += ' ';
    append_hex64(out, id_list_hash(ids));
    out += '\n';
    return;
  }
  out += '\n';
  for (const Id id : ids) {
    append_uint(out, id);
    out += '\n';
  }
}

}  // namespace

int cmd_replay(std::span<char* const> argv) {
  static constexpr std::string_view kFlags[] = {"--algo", "--report", "--out", "--threads"};
  std::string error;
  const auto args = Args::parse(argv, kFlags, error);
  if (!args) return usage_error("replay: " + error);
  if (args->help()) return print_help();
  if (args->positional().size() != 1) {
    return usage_error(args->positional().empty() ? "replay: no TRACE given" : "replay: more than one TRACE given");
  }
  const std::string& trace_name = args->positional()[0];
  const auto algo = args->get("--algo");
  if (!algo) return usage_error("replay: --algo NAME is required");
  if (const std::string why = algorithm_error(*algo); !why.empty()) return fail(kExitUsage, "replay: " + why);
  Report report = Report::kDelta;
  if (const auto text = args->get("--report")) {
    if (*text == "pairs") {
      report = Report::kPairs;
    } else if (*text == "hash") {
      report = Report::kHash;
    } else if (*text != "delta") {
      return usage_error("replay: --report must be delta, pairs or hash, not '" + std::string(*text) + "'");
    }
  }

  std::uint64_t threads = 1;
  if (!parse_threads(*args, threads, error)) return usage_error("replay: " + error);
  Output out(std::string(args->get("--out").value_or("-")));
  if (!out.open()) return fail(kExitUsage, "replay: " + out.error());

  TraceReadResult read;
  {
    std::string text;
    if (!read_file(trace_name, text, error)) return fail(kExitUsage, error);
    read = read_trace(text);
  }
  const Trace& trace = read.trace;

  const auto broad_phase = start_broad_phase(std::string(*algo), trace.dims, threads, error);
  if (broad_phase == nullptr) return fail(kExitUsage, "replay: " + error);
  std::string& buffer = out.buffer();
  std::vector<Pair> sorted;
  std::vector<Id> hits;
  std::uint64_t hash = 0;
  bool sorted_current = false;  // `sorted` and `hash` hold the current pairs
  bool proven = false;          // the dry run found every frame accepted
  for (std::size_t f = 0; f < trace.frames.size(); ++f) {
    const TraceFrame& frame = trace.frames[f];
    if (Status s = stage_frame(*broad_phase, frame); !s) {
      if (s.code() == StatusCode::kUnsupported && !proven) return unsupported(trace_name, *algo, Refusal{s, f});
      // read_trace checked every operation, so this is not expected.
      if (!out.close()) return fail(kExitUsage, "replay: " + out.error());
      std::fprintf(stderr, "%s:?: frame %zu: %s\n", trace_name.c_str(), f, s.message().c_str());
      return kExitTraceError;
    }
    const FrameDelta& delta = broad_phase->update();
    if (!frame.empty()) sorted_current = false;  // a frame without operations changes no pair
    if (report != Report::kDelta && !sorted_current) {
      broad_phase->sorted_pairs(sorted);
      if (report == Report::kHash) hash = pair_set_hash(sorted);
      sorted_current = true;
    }
    const std::size_t frame_start = buffer.size();
    append_frame_head(buffer, f);
    switch (report) {
      case Report::kDelta:
        buffer += " +";
        append_uint(buffer, delta.created.size());
        buffer += " -";
        append_uint(buffer, delta.deleted.size());
        buffer += '\n';
        for (const Pair p : delta.created) {
          buffer += "+ ";
          append_pair(buffer, p);
        }
        for (const Pair p : delta.deleted) {
          buffer += "- ";
          append_pair(buffer, p);
        }
        break;
      case Report::kPairs:
        buffer += ' ';
        append_uint(buffer, sorted.size());
        buffer += '\n';
        for (const Pair p : sorted) append_pair(buffer, p);
        break;
      case Report::kHash:
        buffer += ' ';
        append_uint(buffer, sorted.size());
        buffer += ' ';
        append_hex64(buffer, hash);
        buffer += '\n';
        break;
    }
    for (const TraceQuery& query : frame.queries) {
      if (Status s = broad_phase->query(query.box, hits, query.mask); !s) {
        // read_trace checked every query box, so this is not expected.
        buffer.resize(frame_start);
        if (!out.close()) return fail(kExitUsage, "replay: " + out.error());
        std::fprintf(stderr, "%s:?: frame %zu: %s\n", trace_name.c_str(), f, s.message().c_str());
        return kExitTraceError;
      }
      append_query(buffer, report, query, hits);
    }
    if (buffer.size() >= kHoldBytes) {
      if (!proven) {
        if (const auto refusal = check_supported(trace, *algo)) return unsupported(trace_name, *algo, *refusal);
        proven = true;
      }
      if (!out.flush()) return fail(kExitUsage, "replay: " + out.error());
    }
  }
  if (!out.close()) return fail(kExitUsage, "replay: " + out.error());
  if (read.error) {
    std::fprintf(stderr, "%s:%zu: %s\n", trace_name.c_str(), read.error->line, read.error->reason.c_str());
    return kExitTraceError;
  }
  return kExitOk;
}

}  // namespace sapling::cli
