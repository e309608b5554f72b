// `sapling bench`: the side-by-side benchmark harness (bench/harness) from
// the command line: options, scene and contender selection, the run, the
// reports. Its options and outputs: `sapling bench --help`. Every output
// (stdout, --json, --md, --frames-csv) is an Output (output.hpp): the files
// are opened before the run, every write is checked, and a failure is exit
// status 1.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli.hpp"
#include "commands.hpp"
#include "harness/contender.hpp"
#include "harness/report.hpp"
#include "harness/runner.hpp"
#include "harness/scenes.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/task_system.hpp"

namespace sapling::cli {
namespace {

using bench::ContenderInfo;
using bench::RunOptions;
using bench::SceneResult;
using bench::SceneSpec;

constexpr std::string_view kUsage = R"(usage: sapling bench [options]

Runs scenes with several contenders side by side (interleaved, frame by frame)
and prints per contender: ms per frame (median, mean, p95, p99 and max over
the frames after frame 0 and any warm-up; the mean is the headline when frame
times come in bursts), frame 0 apart, pairs, bytes per object and per pair,
ratio to the fastest, and verification of the pair sets against a reference.

  --suite NAME          one-shot (default), persistent, persistent-large, unisize,
                        cluster, tracy, static, changing, or all; or queries: region queries
                        and rays per query on a million boxes, sapling against
                        Bullet's dbvt and Box2D's tree (takes --quick, --frames,
                        --md, --quiet)
  --scene A,B,...       these scenes instead of a suite (see --list)
  --contenders A,B,...  these contenders only (default: all that apply); a sapling
                        algorithm may carry settings, NAME:SETTINGS (e.g. multi-sap:regrid=off)
  --exclude A,B,...     leave these contenders out
                        (each list: no empty entry, no entry twice)
  --frames F            measured frames per scene (default: the scene's)
  --warmup W            frames run after frame 0 but not measured (default: the scene's)
  --reps R              repetitions (default: the scene's; static scenes rebuild R times)
  --threads T           threads for sapling's contenders (default 1; 0 = all)
  --budget S            seconds of timed work after frame 0 per contender per scene
                        before it is stopped (default 60; it always gets frame 1)
  --verify-samples K    frames checked besides frame 0 (default 3; the last included)
  --no-verify           no pair-set comparison
  --quick               small scenes of the same kinds (smoke test)
  --json FILE           write every figure as JSON
  --md FILE             write the tables as Markdown, command line first
  --frames-csv FILE     write each frame's time and pair count (first repetition) as CSV:
                        scene,contender,frame,ms,pairs (for bench/plot_frames.py)
  --cold-heap           leave glibc's allocator at its defaults; by default memory
                        freed by one contender is kept for the next (see below)
  --quiet               no progress on stderr
  --list                list the scenes and contenders, then exit

Output files are opened before the run, so one that cannot be written stops
the command before any work. Exit status: 0 success; 1 a bad command line,
an output that cannot be written, or a sapling contender stopped with an
error; 4 a sapling contender's pairs failed verification.

By default the run keeps freed memory in the process (glibc: M_MMAP_MAX 0,
M_TRIM_THRESHOLD max), so that what a contender pays in page faults does not
depend on which contender freed memory before it: with glibc's defaults,
large blocks are mapped and unmapped by a threshold that moves with the
blocks freed, and a static scene's rebuild could cost 45 ms after one
contender and 72 ms after another (docs/algorithms/auto.md, "one-shot").
)";

// Reads `text`, a comma-separated list given to `option`, into `names`:
// refused (false, `error` set) if it is empty, has an empty entry (`a,,b`, a
// trailing comma) or names an entry twice.
bool parse_list(std::string_view option, std::string_view text, std::vector<std::string>& names, std::string& error) {
  names.clear();
  if (text.empty()) {
    error = std::string(option) + ": an empty list";
    return false;
  }
  for (std::size_t at = 0;;) {
    const std::size_t comma = text.find(',', at);
    const std::string_view name =
        text.substr(at, comma == std::string_view::npos ? std::string_view::npos : comma - at);
    if (name.empty()) {
      error = std::string(option) + ": an empty entry in '" + std::string(text) + "'";
      return false;
    }
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      error = std::string(option) + ": " + std::string(name) + " is given twice";
      return false;
    }
    names.emplace_back(name);
    if (comma == std::string_view::npos) return true;
    at = comma + 1;
  }
}

bool parse_int(const std::string& text, long min, long& value) {
  char* end = nullptr;
  value = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && value >= min;
}

std::string list_everything() {
  std::ostringstream out;
  out << "suites:";
  for (const std::string& s : bench::suite_names()) out << " " << s;
  out << " all (and queries: region queries and rays, not a scene suite)\n\nscenes:\n";
  char line[512];
  for (const SceneSpec& s : bench::all_scenes()) {
    std::snprintf(line, sizeof line, "  %-28s ", s.name.c_str());
    out << line << s.description << "\n";
  }
  out << "\ncontenders:\n";
  for (const ContenderInfo& c : bench::contender_catalogue()) {
    std::snprintf(line, sizeof line, "  %-24s %-8s ", c.name.c_str(), c.origin.c_str());
    out << line << (c.query == bench::Query::kBipartite ? "(bipartite) " : "") << c.description << "\n";
  }
  const std::vector<std::string> peers = bench::peer_libraries();
  out << "\npeers compiled in:";
  for (const std::string& p : peers) out << " [" << p << "]";
  if (peers.empty()) out << " none (configure with -DSAPLING_BENCH_PEERS=ON)";
  out << "\n";
  return std::move(out).str();
}

// Keeps every freed block in the process for reuse: no block is mapped on
// its own (unmapped when freed), and the heap's top is never given back.
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

int bench_usage_error(const std::string& message) {
  std::cerr << "sapling bench: " << message << "\n(sapling bench --help for the options)\n";
  return kExitUsage;
}

int bench_fail(const std::string& message) {
  std::cerr << "sapling bench: " << message << "\n";
  return kExitUsage;
}

// Writes `text` to standard output at once; kExitOk, or kExitUsage with the reason.
int print(std::string text) {
  Output out("-");
  out.buffer() = std::move(text);
  return out.close() ? kExitOk : bench_fail(out.error());
}

// A contender named with settings, NAME:SETTINGS, is created once here so
// that settings the algorithm refuses stop the command before the run.
std::string contender_settings_error(const std::string& name) {
  if (name.find(':') == std::string::npos) return {};
  if (std::string why = algorithm_error(name); !why.empty()) return why;
  Status why;
  if (BroadPhase::create(name, Options{}, &why) == nullptr) return "'" + name + "': " + why.message();
  return {};
}

int run(const std::vector<std::string>& args, const std::string& command) {
  std::string suite = "one-shot", json_path, md_path, csv_path;
  std::vector<std::string> scene_names, contender_names, excluded;
  bool quick = false, warm_heap = true, help = false, list = false;
  RunOptions options;
  std::string error;
  for (std::size_t k = 0; k < args.size(); ++k) {
    const std::string& a = args[k];
    auto value = [&](std::string& out) {
      if (k + 1 >= args.size()) return false;
      out = args[++k];
      return true;
    };
    std::string v;
    long number = 0;
    if (a == "-h" || a == "--help") {
      help = true;
    } else if (a == "--list") {
      list = true;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--cold-heap") {
      warm_heap = false;
    } else if (a == "--quiet") {
      options.progress = false;
    } else if (a == "--no-verify") {
      options.verify = false;
    } else if (a == "--suite") {
      if (!value(suite)) return bench_usage_error("--suite needs a name");
    } else if (a == "--scene") {
      if (!value(v)) return bench_usage_error("--scene needs names");
      if (!parse_list(a, v, scene_names, error)) return bench_usage_error(error);
    } else if (a == "--contenders") {
      if (!value(v)) return bench_usage_error("--contenders needs names");
      if (!parse_list(a, v, contender_names, error)) return bench_usage_error(error);
      options.explicit_contenders = true;
    } else if (a == "--exclude") {
      if (!value(v)) return bench_usage_error("--exclude needs names");
      if (!parse_list(a, v, excluded, error)) return bench_usage_error(error);
    } else if (a == "--frames") {
      if (!value(v) || !parse_int(v, 0, number)) return bench_usage_error("--frames needs a count >= 0");
      options.frames = static_cast<int>(number);
    } else if (a == "--warmup") {
      if (!value(v) || !parse_int(v, 0, number)) return bench_usage_error("--warmup needs a count >= 0");
      options.warmup = static_cast<int>(number);
    } else if (a == "--reps") {
      if (!value(v) || !parse_int(v, 1, number)) return bench_usage_error("--reps needs a count >= 1");
      options.reps = static_cast<int>(number);
    } else if (a == "--threads") {
      if (!value(v) || !parse_int(v, 0, number) || number > static_cast<long>(ThreadPool::kMaxThreads)) {
        return bench_usage_error("--threads needs a count from 0 to 256");
      }
      options.threads = static_cast<unsigned>(number);
    } else if (a == "--budget") {
      if (!value(v) || !parse_int(v, 1, number)) return bench_usage_error("--budget needs seconds >= 1");
      options.budget_s = static_cast<double>(number);
    } else if (a == "--verify-samples") {
      if (!value(v) || !parse_int(v, 0, number)) return bench_usage_error("--verify-samples needs a count >= 0");
      options.verify_samples = static_cast<int>(number);
    } else if (a == "--json") {
      if (!value(json_path)) return bench_usage_error("--json needs a file");
    } else if (a == "--md") {
      if (!value(md_path)) return bench_usage_error("--md needs a file");
    } else if (a == "--frames-csv") {
      if (!value(csv_path)) return bench_usage_error("--frames-csv needs a file");
    } else if (a.size() < 2 || a[0] != '-') {
      return bench_usage_error("unexpected argument '" + a + "'");
    } else {
      return bench_usage_error("unknown option " + a);
    }
  }
  if (help) return print(std::string(kUsage));
  if (list) return print(list_everything());
  if (warm_heap) keep_freed_memory();

  // Every output is opened before the work; stdout is checked as well.
  Output out("-");
  if (!out.open()) return bench_fail(out.error());
  std::optional<Output> json, md, csv;
  const auto open_file = [](std::optional<Output>& file, const std::string& path, const char* option) {
    if (path.empty()) return true;
    file.emplace(path, option);
    if (file->open()) return true;
    bench_fail(file->error());
    return false;
  };
  // Writes a report made by `write` (into a stream) to `file`, if requested.
  const auto write_report = [](std::optional<Output>& file, auto&& write) {
    if (!file) return true;
    std::ostringstream text;
    write(text);
    file->buffer() = std::move(text).str();
    if (file->close()) return true;
    bench_fail(file->error());
    return false;
  };

  if (suite == "queries" && scene_names.empty()) {
    if (!open_file(md, md_path, "--md")) return kExitUsage;
    const std::vector<bench::QuerySceneSpec> worlds = bench::query_scenes(quick);
    std::vector<bench::QuerySceneResult> results;
    std::ostringstream tables;
    try {
      for (const bench::QuerySceneSpec& world : worlds) {
        if (options.progress) std::cerr << "sapling bench --suite queries: " << world.name << "\n";
        results.push_back(bench::run_query_scene(world, options, excluded));
      }
      const std::size_t side = worlds.front().side;
      bench::write_query_tables(tables, results, bench::level_overlaps(side, true), bench::level_overlaps(side, false));
    } catch (const std::exception& e) {
      return bench_fail(std::string("--suite queries: ") + e.what());
    }
    const std::string text_tables = std::move(tables).str();
    out.buffer() = text_tables;
    if (!out.close()) return bench_fail(out.error());
    if (!write_report(md, [&](std::ostream& text) { text << "`" << command << "`\n\n" << text_tables; })) {
      return kExitUsage;
    }
    const bool wrong = std::any_of(results.begin(), results.end(), [](const auto& r) { return r.sapling_wrong; });
    return wrong ? kExitWrongPairs : kExitOk;
  }
  // Scenes.
  std::vector<SceneSpec> scenes;
  if (!scene_names.empty()) {
    for (const std::string& name : scene_names) {
      std::optional<SceneSpec> s = bench::find_scene(name);
      if (!s) return bench_usage_error("no scene named " + name + " (see --list)");
      scenes.push_back(std::move(*s));
    }
  } else {
    scenes = bench::suite_scenes(suite, quick);
    if (scenes.empty()) return bench_usage_error("no suite named " + suite);
  }
  if (quick && options.frames < 0) options.frames = 5;
  if (quick && options.warmup < 0) options.warmup = 0;

  // Contenders.
  std::vector<const ContenderInfo*> contenders;
  if (contender_names.empty()) {
    for (const ContenderInfo& c : bench::contender_catalogue()) contenders.push_back(&c);
  } else {
    for (const std::string& name : contender_names) {
      if (std::string why = contender_settings_error(name); !why.empty()) {
        return bench_usage_error("--contenders: " + why);
      }
      const ContenderInfo* c = bench::find_contender(name);
      if (!c) return bench_usage_error("no contender named " + name + " (see --list)");
      contenders.push_back(c);
    }
  }
  for (const std::string& name : excluded) {
    if (std::string why = contender_settings_error(name); !why.empty()) return bench_usage_error("--exclude: " + why);
    if (!bench::find_contender(name)) return bench_usage_error("no contender named " + name + " (see --list)");
    std::erase_if(contenders, [&](const ContenderInfo* c) { return c->name == name; });
  }
  if (!open_file(json, json_path, "--json") || !open_file(md, md_path, "--md") ||
      !open_file(csv, csv_path, "--frames-csv")) {
    return kExitUsage;
  }

  bench::RunInfo info = bench::collect_run_info();
  info.command = command;
  info.threads = options.threads;
  info.budget_s = options.budget_s;
  info.warm_heap = warm_heap;
  if (options.progress) {
    std::cerr << "sapling bench: " << scenes.size() << " scene(s) on " << info.cpu << " (" << info.cores
              << " threads), peers:";
    for (const std::string& p : info.peers) std::cerr << " [" << p << "]";
    if (info.peers.empty()) std::cerr << " none";
    std::cerr << "\n";
  }

  std::vector<SceneResult> results;
  bool run_error = false, wrong_pairs = false;
  for (std::size_t k = 0; k < scenes.size(); ++k) {
    if (options.progress) std::cerr << "[" << k + 1 << "/" << scenes.size() << "] " << scenes[k].name << "\n";
    try {
      results.push_back(bench::run_scene(scenes[k], contenders, options));
    } catch (const std::exception& e) {
      std::cerr << "sapling bench: scene " << scenes[k].name << ": " << e.what() << "\n";
      run_error = true;
      continue;
    }
    std::ostringstream table;
    bench::print_scene(table, results.back());
    out.buffer() += std::move(table).str();
    // A standard output that cannot be written stops the run here.
    if (!out.flush()) return bench_fail(out.error());
    for (const bench::ContenderResult& c : results.back().contenders) {
      if (c.origin != "sapling") continue;
      if (!c.error.empty()) run_error = true;
      if (c.verification.status == "MISSES" || c.verification.status == "PHANTOM") wrong_pairs = true;
    }
    const SceneResult& r = results.back();
    if (r.expected_pairs && !r.reference.empty() && *r.expected_pairs != r.reference_pairs0) wrong_pairs = true;
  }
  std::ostringstream summary;
  summary << "\nSummary (ms per frame, median or * mean, of the fastest verified contender of each kind; ratio = "
             "peer / sapling):\n";
  bench::print_summary(summary, results, false);
  summary << "\nScaling (exponent of ms/frame against n, least squares on logs):\n";
  bench::print_scaling(summary, results, false);
  out.buffer() += std::move(summary).str();
  if (!out.close()) return bench_fail(out.error());

  bool written = write_report(json, [&](std::ostream& text) { bench::write_json(text, info, results); });
  written = write_report(md, [&](std::ostream& text) { bench::write_markdown(text, info, results); }) && written;
  written = write_report(csv, [&](std::ostream& text) { bench::write_frames_csv(text, results); }) && written;
  if (wrong_pairs) std::cerr << "sapling bench: a sapling contender's pairs failed verification\n";
  if (run_error) std::cerr << "sapling bench: a sapling contender stopped with an error\n";
  return run_error || !written ? kExitUsage : wrong_pairs ? kExitWrongPairs : kExitOk;
}

}  // namespace

int cmd_bench(std::span<char* const> words) {
  std::vector<std::string> args;
  std::string command = "sapling bench";
  for (char* const w : words) {
    args.emplace_back(w);
    command += " " + args.back();
  }
  return run(args, command);
}

}  // namespace sapling::cli
