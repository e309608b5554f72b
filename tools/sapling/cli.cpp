// Shared pieces of the `sapling` command (cli.hpp): help text, option
// parsing, number formatting and the progress line.
#include "cli.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <limits>
#include <thread>

#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "sapling/task_system.hpp"

namespace sapling::cli {

namespace {

constexpr std::string_view kSynopsis = R"(usage:
  sapling algos
  sapling replay TRACE --algo NAME [--report delta|pairs|hash] [--out FILE] [--threads T]
  sapling gen SCENARIO [--n N] [--frames F] [--seed S] [scenario options] --out FILE
  sapling run [--algo NAME] [--scenario S] [--n N] [--frames F] [--seed S] [--threads T] [scenario options]
  sapling bench [--suite NAME | --scene A,B] [--contenders A,B] [--json FILE] [--md FILE] [...]
  sapling help
)";

}  // namespace

std::string_view usage_text() {
  static const std::string text = std::string(kSynopsis) + R"(
commands:
  algos    list the registered algorithms, one per line: NAME  description
  replay   run a trace through an algorithm and write each frame's pairs:
             delta  (default) frame F +C -D, then the created and the deleted pairs
             pairs  frame F K, then every pair
             hash   frame F K H, H the FNV-1a 64-bit hash of the sorted pairs
  gen      write a scenario as a trace: frame 0 (every box added), then F-1 steps
           (F default 10)
  run      the main job: step a scenario in memory through an algorithm, time the
           broad phase frame by frame and print a summary (progress on stderr
           when it is a terminal). Defaults: --scenario tracy --n 100000
           (small: 10) --frames 100 (frame 0 included), --algo auto (which
           chooses by the workload; the summary says what it ran and why).
  bench    the benchmark suites: scenes run by several contenders (sapling's
           algorithms and, when built with SAPLING_BENCH_PEERS, CGAL, Bullet,
           FCL, Box2D) side by side, timed and verified; a table, and JSON
           and Markdown on request. Its options: sapling bench --help.

NAME may carry the algorithm's settings after a colon, e.g. --algo
multi-sap:mode=witness,cell_size=4 (each algorithm's settings:
docs/algorithms/NAME.md); NAME: with nothing after the colon is refused.

TRACE and FILE may be - for standard input and output. An output FILE is
opened before the work, so one that cannot be written stops the command
first; a file is replaced at the first write, and left as it was (or not
made) by a command that fails before writing. Trace format and outputs:
docs/trace-format.md (versions 1 and 2: version 2 adds filters, static
objects and region queries, answered after each frame's lines: query Q K
and K ids, or query Q K H with --report hash).

scenario options (each scenario ignores those it does not use):
  --n N          initial boxes
  --seed S       random seed (default: the scenario's)
  --density PM   volume (area) density, per mille
  --speed PM     speed per frame, per mille of the box size
  --moving M     tracy: initially moving boxes (default n/10)
  --inserts K    tracy: boxes inserted per frame (default n/200)
  --removes K    tracy: boxes removed per frame (default n/200)
  --cycle C      cluster: frames of one converge-and-spread cycle (default 500)

version-2 scenario options (any of these makes gen write a version-2 trace;
each defaults to 0, none):
  --static PM    per mille of the ids static: added with 'static', never moved
  --groups G     filter groups, up to 32: each id in one group g (category bit g);
                 a group g >= 1 does not collide with itself, group 0 with all
  --regroup PM   per mille of the untouched live ids given a new group each
                 step (a 'filter' operation); needs --groups
  --queries Q    region queries per frame around live boxes (with --groups,
                 every second one masked to one group)

exit status (every subcommand):
  0  success: every frame was processed
  1  bad command line (an unknown option or value, a thread count above 256
     or one the system will not start), unknown algorithm or scenario,
     unreadable input, unwritable output
  2  the trace is malformed: TRACE:LINE: reason on stderr, after every frame
     before the bad line has been written in full
  3  the algorithm does not support the trace (restricted by design);
     nothing is written
  4  bench only: a contender's pairs failed verification
)";
  return text;
}

int print_help() {
  std::string text(usage_text());
  text += "\nalgorithms (sapling algos):";
  for (const AlgorithmInfo& info : algorithms()) {
    text += ' ';
    text += info.name;
  }
  text += "\nscenarios (docs/scenarios.md):\n";
  for (const ScenarioInfo& info : scenario_list()) {
    text += "  ";
    text += info.name;
    text.append(info.name.size() < 13 ? 13 - info.name.size() : 1, ' ');
    text += info.description;
    text += '\n';
  }
  Output out("-");
  out.buffer() = std::move(text);
  return out.close() ? kExitOk : fail(kExitUsage, out.error());
}

int usage_error(std::string_view message) {
  std::fprintf(stderr, "sapling: %.*s\n%.*s(sapling help: the options, the outputs and the exit statuses)\n",
               static_cast<int>(message.size()), message.data(), static_cast<int>(kSynopsis.size()), kSynopsis.data());
  return kExitUsage;
}

int fail(int status, std::string_view message) {
  std::fprintf(stderr, "sapling: %.*s\n", static_cast<int>(message.size()), message.data());
  return status;
}

std::optional<Args> Args::parse(std::span<char* const> argv, std::span<const std::string_view> flags,
                                std::string& error) {
  Args args;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string_view word = argv[i];
    if (word == "--help" || word == "-h") {
      args.help_ = true;
      continue;
    }
    if (word.size() < 2 || word[0] != '-') {  // a plain word, or "-"
      args.positional_.emplace_back(word);
      continue;
    }
    std::string_view flag = word;
    std::optional<std::string_view> value;
    if (const std::size_t eq = word.find('='); eq != std::string_view::npos) {
      flag = word.substr(0, eq);
      value = word.substr(eq + 1);
    }
    if (std::find(flags.begin(), flags.end(), flag) == flags.end()) {
      error = "unknown option '" + std::string(flag) + "'";
      return std::nullopt;
    }
    if (args.get(flag)) {
      error = "option " + std::string(flag) + " given twice";
      return std::nullopt;
    }
    if (!value) {
      if (i + 1 == argv.size()) {
        error = "option " + std::string(flag) + " needs a value";
        return std::nullopt;
      }
      value = argv[++i];
    }
    args.values_.emplace_back(flag, *value);
  }
  return args;
}

std::optional<std::string_view> Args::get(std::string_view flag) const {
  for (const auto& [name, value] : values_) {
    if (name == flag) return std::string_view(value);
  }
  return std::nullopt;
}

bool parse_uint(std::string_view flag, std::string_view text, std::uint64_t max, std::uint64_t& out,
                std::string& error) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value > max) {
    error = "option " + std::string(flag) + ": '" + std::string(text) + "' is not an integer in [0, " +
            std::to_string(max) + "]";
    return false;
  }
  out = value;
  return true;
}

bool apply_scenario_options(const Args& args, ScenarioParams& params, std::string& error) {
  constexpr std::uint64_t kU32 = std::numeric_limits<std::uint32_t>::max();
  constexpr std::uint64_t kU64 = std::numeric_limits<std::uint64_t>::max();
  constexpr std::uint64_t kMaxQueries = 1000000;
  std::uint64_t v = 0;
  // Options whose 0 would mean "default" in ScenarioParams must be positive.
  auto positive = [&](std::string_view flag, std::uint64_t max, auto&& set) {
    const auto text = args.get(flag);
    if (!text) return true;
    if (!parse_uint(flag, *text, max, v, error)) return false;
    if (v == 0) {
      error = "option " + std::string(flag) + " must be at least 1";
      return false;
    }
    set(v);
    return true;
  };
  auto any = [&](std::string_view flag, std::uint64_t max, auto&& set) {
    const auto text = args.get(flag);
    if (!text) return true;
    if (!parse_uint(flag, *text, max, v, error)) return false;
    set(v);
    return true;
  };
  return positive("--n", kU32, [&](std::uint64_t x) { params.n = x; }) &&
         any("--seed", kU64, [&](std::uint64_t x) { params.seed = x; }) &&
         positive("--density", 1000, [&](std::uint64_t x) { params.density_pm = static_cast<std::uint32_t>(x); }) &&
         any("--speed", kU32, [&](std::uint64_t x) { params.speed_pm = static_cast<std::uint32_t>(x); }) &&
         any("--moving", kU32, [&](std::uint64_t x) { params.moving = x; }) &&
         any("--inserts", kU32, [&](std::uint64_t x) { params.inserts = x; }) &&
         any("--removes", kU32, [&](std::uint64_t x) { params.removes = x; }) &&
         positive("--cycle", kU32, [&](std::uint64_t x) { params.cycle = static_cast<std::uint32_t>(x); }) &&
         any("--static", 1000, [&](std::uint64_t x) { params.static_pm = static_cast<std::uint32_t>(x); }) &&
         any("--groups", 32, [&](std::uint64_t x) { params.groups = static_cast<std::uint32_t>(x); }) &&
         any("--regroup", 1000, [&](std::uint64_t x) { params.regroup_pm = static_cast<std::uint32_t>(x); }) &&
         any("--queries", kMaxQueries, [&](std::uint64_t x) { params.queries = static_cast<std::uint32_t>(x); });
}

bool is_scenario(std::string_view name) {
  for (const ScenarioInfo& info : scenario_list()) {
    if (info.name == name) return true;
  }
  return false;
}

std::string unknown_scenario(std::string_view name) {
  std::string message = "unknown scenario '" + std::string(name) + "'; scenarios:";
  for (const ScenarioInfo& info : scenario_list()) {
    message += ' ';
    message += info.name;
  }
  return message;
}

std::string describe_params(const ScenarioParams& p) {
  std::string s = "n=" + std::to_string(p.n);
  if (p.seed) s += " seed=" + std::to_string(*p.seed);
  const bool small = p.name == "small";
  const bool cluster = p.name == "cluster";
  if (!small) s += " density=" + std::to_string(p.density_pm) + "pm";
  if (!small && !cluster && p.speed_pm) s += " speed=" + std::to_string(*p.speed_pm) + "pm";
  if (p.name == "tracy") {
    if (p.moving) s += " moving=" + std::to_string(*p.moving);
    if (p.inserts) s += " inserts=" + std::to_string(*p.inserts);
    if (p.removes) s += " removes=" + std::to_string(*p.removes);
  }
  if (cluster) s += " cycle=" + std::to_string(p.cycle);
  if (p.static_pm) s += " static=" + std::to_string(p.static_pm) + "pm";
  if (p.groups) s += " groups=" + std::to_string(p.groups);
  if (p.regroup_pm) s += " regroup=" + std::to_string(p.regroup_pm) + "pm";
  if (p.queries) s += " queries=" + std::to_string(p.queries);
  return s;
}

bool is_algorithm(std::string_view name) {
  name = name.substr(0, name.find(':'));  // NAME:SETTINGS (BroadPhase::create)
  for (const AlgorithmInfo& info : algorithms()) {
    if (info.name == name) return true;
  }
  return false;
}

bool parse_threads(const Args& args, std::uint64_t& threads, std::string& error) {
  threads = 1;
  const auto text = args.get("--threads");
  return !text || parse_uint("--threads", *text, ThreadPool::kMaxThreads, threads, error);
}

std::unique_ptr<BroadPhase> start_broad_phase(const std::string& algo, int dims, std::uint64_t threads,
                                              std::string& error) {
  Status why;
  auto broad_phase = BroadPhase::create(algo, Options{.dims = dims, .threads = static_cast<unsigned>(threads)}, &why);
  if (broad_phase == nullptr) {
    error = why.message();
    return nullptr;
  }
  const unsigned wanted = threads == 0 ? std::max(1u, std::thread::hardware_concurrency()) : unsigned(threads);
  if (broad_phase->concurrency() < std::min(wanted, ThreadPool::kMaxThreads)) {
    error = "cannot start " + std::to_string(wanted) + " threads (the system started " +
            std::to_string(broad_phase->concurrency()) + ")";
    return nullptr;
  }
  return broad_phase;
}

std::string algorithm_error(std::string_view name) {
  if (!is_algorithm(name)) return unknown_algorithm(name);
  if (name.back() == ':') {
    return "algorithm '" + std::string(name) +
           "': no settings after the colon (NAME:SETTINGS, e.g. multi-sap:mode=witness, or NAME alone for the "
           "defaults)";
  }
  return {};
}

std::string unknown_algorithm(std::string_view name) {
  std::string message = "unknown algorithm '" + std::string(name) + "'; algorithms:";
  for (const AlgorithmInfo& info : algorithms()) {
    message += ' ';
    message += info.name;
  }
  return message;
}

bool read_file(const std::string& path, std::string& text, std::string& error) {
  const bool is_stdin = path == "-";
  std::FILE* file = is_stdin ? stdin : std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  text.clear();
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::size_t size = 0;
  for (;;) {
    text.resize(size + kChunk);
    const std::size_t got = std::fread(text.data() + size, 1, kChunk, file);
    size += got;
    if (got < kChunk) break;
  }
  text.resize(size);
  const bool bad = std::ferror(file) != 0;
  const int err = errno;
  if (!is_stdin) std::fclose(file);
  if (bad) {
    error = "cannot read " + (is_stdin ? std::string("standard input") : path) + ": " + std::strerror(err);
    return false;
  }
  return true;
}

void append_uint(std::string& out, std::uint64_t value) {
  char digits[20];
  const auto result = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, result.ptr);
}

void append_hex64(std::string& out, std::uint64_t value) {
  static constexpr char kHex[] = "0123456789abcdef";
  char digits[16];
  for (int i = 15; i >= 0; --i, value >>= 4) digits[i] = kHex[value & 15];
  out.append(digits, sizeof digits);
}

std::string fixed(double value, int decimals) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof text, value, std::chars_format::fixed, decimals);
  return std::string(text, result.ptr);
}

Progress::Progress(std::uint64_t total) : total_(total), enabled_(isatty(fileno(stderr)) != 0) {}

void Progress::update(std::uint64_t done, std::string_view note) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && done < total_ && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  drawn_ = true;
  constexpr std::uint64_t kWidth = 30;
  const std::uint64_t filled = total_ == 0 ? kWidth : done * kWidth / total_;
  std::string line = "\r[";
  line.append(filled, '#');
  line.append(kWidth - filled, ' ');
  line += "] ";
  append_uint(line, done);
  line += '/';
  append_uint(line, total_);
  line += "  ";
  line += note;
  line += "\033[K";  // clear what a longer earlier line left
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
}

void Progress::finish() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace sapling::cli
