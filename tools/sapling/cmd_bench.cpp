// `sapling bench`: the side-by-side benchmark harness (bench/harness) from
// the command line: options, scene and contender selection, the run, the
// reports. Its options and outputs: `sapling bench --help`.

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.hpp"
#include "harness/contender.hpp"
#include "harness/query_bench.hpp"
#include "harness/report.hpp"
#include "harness/runner.hpp"
#include "harness/scenes.hpp"
#include "sapling/task_system.hpp"

namespace sapling::bench {
namespace {

// The contract's exit statuses (docs/trace-format.md, "Command line").
constexpr int kExitOk = 0;
constexpr int kExitUsage = 1;       // bad command line, a contender's error, unwritable output
constexpr int kExitWrongPairs = 4;  // a sapling contender's pairs failed verification

constexpr const char* kUsage = R"(usage: sapling bench [options]

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

By default the run keeps freed memory in the process (glibc: M_MMAP_MAX 0,
M_TRIM_THRESHOLD max), so that what a contender pays in page faults does not
depend on which contender freed memory before it: with glibc's defaults,
large blocks are mapped and unmapped by a threshold that moves with the
blocks freed, and a static scene's rebuild could cost 45 ms after one
contender and 72 ms after another (docs/algorithms/auto.md, "one-shot").
)";

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream s(text);
  std::string item;
  while (std::getline(s, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

bool parse_int(const std::string& text, long min, long& value) {
  char* end = nullptr;
  value = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' && value >= min;
}

void list_everything() {
  std::cout << "suites:";
  for (const std::string& s : suite_names()) std::cout << " " << s;
  std::cout << " all (and queries: region queries and rays, not a scene suite)\n\nscenes:\n";
  for (const SceneSpec& s : all_scenes()) std::printf("  %-28s %s\n", s.name.c_str(), s.description.c_str());
  std::cout << "\ncontenders:\n";
  for (const ContenderInfo& c : contender_catalogue()) {
    std::printf("  %-24s %-8s %s%s\n", c.name.c_str(), c.origin.c_str(),
                c.query == Query::kBipartite ? "(bipartite) " : "", c.description.c_str());
  }
  const std::vector<std::string> peers = peer_libraries();
  std::cout << "\npeers compiled in:";
  for (const std::string& p : peers) std::cout << " [" << p << "]";
  if (peers.empty()) std::cout << " none (configure with -DSAPLING_BENCH_PEERS=ON)";
  std::cout << "\n";
}

// Keeps every freed block in the process for reuse: no block is mapped on
// its own (unmapped when freed), and the heap's top is never given back.
void keep_freed_memory() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

int usage_error(const std::string& message) {
  std::cerr << "sapling bench: " << message << "\n(sapling bench --help for the options)\n";
  return kExitUsage;
}

int run(const std::vector<std::string>& args, const std::string& command) {
  std::string suite = "one-shot", json_path, md_path, csv_path;
  std::vector<std::string> scene_names, contender_names, excluded;
  bool quick = false, warm_heap = true;
  RunOptions options;
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
      std::cout << kUsage;
      return 0;
    } else if (a == "--list") {
      list_everything();
      return 0;
    } else if (a == "--quick") {
      quick = true;
    } else if (a == "--cold-heap") {
      warm_heap = false;
    } else if (a == "--quiet") {
      options.progress = false;
    } else if (a == "--no-verify") {
      options.verify = false;
    } else if (a == "--suite") {
      if (!value(suite)) return usage_error("--suite needs a name");
    } else if (a == "--scene") {
      if (!value(v)) return usage_error("--scene needs names");
      scene_names = split_list(v);
    } else if (a == "--contenders") {
      if (!value(v)) return usage_error("--contenders needs names");
      contender_names = split_list(v);
      options.explicit_contenders = true;
    } else if (a == "--exclude") {
      if (!value(v)) return usage_error("--exclude needs names");
      excluded = split_list(v);
    } else if (a == "--frames") {
      if (!value(v) || !parse_int(v, 0, number)) return usage_error("--frames needs a count >= 0");
      options.frames = static_cast<int>(number);
    } else if (a == "--warmup") {
      if (!value(v) || !parse_int(v, 0, number)) return usage_error("--warmup needs a count >= 0");
      options.warmup = static_cast<int>(number);
    } else if (a == "--reps") {
      if (!value(v) || !parse_int(v, 1, number)) return usage_error("--reps needs a count >= 1");
      options.reps = static_cast<int>(number);
    } else if (a == "--threads") {
      if (!value(v) || !parse_int(v, 0, number) || number > static_cast<long>(ThreadPool::kMaxThreads)) {
        return usage_error("--threads needs a count from 0 to 256");
      }
      options.threads = static_cast<unsigned>(number);
    } else if (a == "--budget") {
      if (!value(v) || !parse_int(v, 1, number)) return usage_error("--budget needs seconds >= 1");
      options.budget_s = static_cast<double>(number);
    } else if (a == "--verify-samples") {
      if (!value(v) || !parse_int(v, 0, number)) return usage_error("--verify-samples needs a count >= 0");
      options.verify_samples = static_cast<int>(number);
    } else if (a == "--json") {
      if (!value(json_path)) return usage_error("--json needs a file");
    } else if (a == "--md") {
      if (!value(md_path)) return usage_error("--md needs a file");
    } else if (a == "--frames-csv") {
      if (!value(csv_path)) return usage_error("--frames-csv needs a file");
    } else {
      return usage_error("unknown option " + a);
    }
  }
  if (warm_heap) keep_freed_memory();

  if (suite == "queries" && scene_names.empty()) {
    QueryBenchOptions query_options;
    query_options.quick = quick;
    query_options.frames = options.frames;
    query_options.progress = options.progress;
    query_options.md_path = md_path;
    query_options.command = command;
    query_options.excluded = excluded;
    try {
      return run_query_bench(query_options);
    } catch (const std::exception& e) {
      std::cerr << "sapling bench --suite queries: " << e.what() << "\n";
      return kExitUsage;
    }
  }
  // Scenes.
  std::vector<SceneSpec> scenes;
  if (!scene_names.empty()) {
    for (const std::string& name : scene_names) {
      std::optional<SceneSpec> s = find_scene(name);
      if (!s) return usage_error("no scene named " + name + " (see --list)");
      scenes.push_back(std::move(*s));
    }
  } else {
    scenes = suite_scenes(suite, quick);
    if (scenes.empty()) return usage_error("no suite named " + suite);
  }
  if (quick && options.frames < 0) options.frames = 5;
  if (quick && options.warmup < 0) options.warmup = 0;

  // Contenders.
  std::vector<const ContenderInfo*> contenders;
  if (contender_names.empty()) {
    for (const ContenderInfo& c : contender_catalogue()) contenders.push_back(&c);
  } else {
    for (const std::string& name : contender_names) {
      const ContenderInfo* c = find_contender(name);
      if (!c) return usage_error("no contender named " + name + " (see --list)");
      contenders.push_back(c);
    }
  }
  for (const std::string& name : excluded) {
    if (!find_contender(name)) return usage_error("no contender named " + name + " (see --list)");
    std::erase_if(contenders, [&](const ContenderInfo* c) { return c->name == name; });
  }

  RunInfo info = collect_run_info();
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
  int status = kExitOk;
  bool wrong_pairs = false;
  for (std::size_t k = 0; k < scenes.size(); ++k) {
    if (options.progress) std::cerr << "[" << k + 1 << "/" << scenes.size() << "] " << scenes[k].name << "\n";
    try {
      results.push_back(run_scene(scenes[k], contenders, options));
    } catch (const std::exception& e) {
      std::cerr << "sapling bench: scene " << scenes[k].name << ": " << e.what() << "\n";
      status = kExitUsage;
      continue;
    }
    print_scene(std::cout, results.back());
    std::cout.flush();
    for (const ContenderResult& c : results.back().contenders) {
      if (c.origin != "sapling") continue;
      if (!c.error.empty()) status = kExitUsage;
      if (c.verification.status == "MISSES" || c.verification.status == "PHANTOM") wrong_pairs = true;
    }
    const SceneResult& r = results.back();
    if (r.expected_pairs && !r.reference.empty() && *r.expected_pairs != r.reference_pairs0) wrong_pairs = true;
  }
  std::cout << "\nSummary (ms per frame, median or * mean, of the fastest verified contender of each kind; ratio = "
               "peer / sapling):\n";
  print_summary(std::cout, results, false);
  std::cout << "\nScaling (exponent of ms/frame against n, least squares on logs):\n";
  print_scaling(std::cout, results, false);

  if (!json_path.empty()) {
    std::ofstream out(json_path);
    write_json(out, info, results);
    if (!out) {
      std::cerr << "sapling bench: cannot write " << json_path << "\n";
      status = kExitUsage;
    }
  }
  if (!md_path.empty()) {
    std::ofstream out(md_path);
    write_markdown(out, info, results);
    if (!out) {
      std::cerr << "sapling bench: cannot write " << md_path << "\n";
      status = kExitUsage;
    }
  }
  if (!csv_path.empty()) {
    std::ofstream out(csv_path);
    write_frames_csv(out, results);
    if (!out) {
      std::cerr << "sapling bench: cannot write " << csv_path << "\n";
      status = kExitUsage;
    }
  }
  if (wrong_pairs) std::cerr << "sapling bench: a sapling contender's pairs failed verification\n";
  if (status != kExitOk) std::cerr << "sapling bench: a sapling contender stopped with an error\n";
  return status != kExitOk ? status : wrong_pairs ? kExitWrongPairs : kExitOk;
}

}  // namespace
}  // namespace sapling::bench

namespace sapling::cli {

int cmd_bench(std::span<char* const> words) {
  std::vector<std::string> args;
  std::string command = "sapling bench";
  for (char* const w : words) {
    args.emplace_back(w);
    command += " " + args.back();
  }
  return bench::run(args, command);
}

}  // namespace sapling::cli
