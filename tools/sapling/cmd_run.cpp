// `sapling run`: the main job. Steps a scenario in memory, feeds each frame to
// a broad phase (stage_frame(): removes, moves, adds, filter changes; update;
// the frame's queries, with the version-2 options), times only the
// broad-phase calls, and prints a summary table on stdout.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "sapling/trace.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::cli {
namespace {

// The default algorithm: the first of these that is registered.
constexpr std::string_view kPreferred[] = {"auto", "sap", "box-pruning", "sort-sweep"};

// What the algorithm says of itself through the debug draw: `auto`, the
// algorithm it runs, why, and how many times it switched; `sap` (alone or
// under `auto`), the frames each of its paths took.
struct AutoState : DebugDraw {
  std::string algorithm, reason, runs, handovers, paths;
  std::uint64_t switches = 0;
  void text(std::string_view name, std::string_view value) override {
    if (name == "algorithm") algorithm = value;
    if (name == "reason") reason = value;
    if (name == "runs") runs = value;
    if (name == "handovers") handovers = value;
    if (name == "paths") paths = value;
  }
  void count(std::string_view name, std::uint64_t value) override {
    if (name == "switches") switches = value;
  }
};

std::string best_algorithm() {
  for (const std::string_view name : kPreferred) {
    if (is_algorithm(name)) return std::string(name);
  }
  return algorithms().empty() ? std::string() : algorithms().back().name;
}

// Nearest-rank percentile (0 < q <= 1) of sorted values.
double percentile(const std::vector<double>& sorted, double q) {
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::max<std::size_t>(rank, 1) - 1];
}

double median(const std::vector<double>& sorted) {
  const std::size_t m = sorted.size();
  return m % 2 == 1 ? sorted[m / 2] : (sorted[m / 2 - 1] + sorted[m / 2]) / 2;
}

std::string memory_text(std::size_t bytes) {
  const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
  return fixed(mib, 1) + " MiB (" + std::to_string(bytes) + " bytes)";
}

void row(std::string& out, std::string_view name, const std::string& value) {
  out += "  ";
  out += name;
  out.append(name.size() < 12 ? 12 - name.size() : 1, ' ');
  out += value;
  out += '\n';
}

}  // namespace

int cmd_run(std::span<char* const> argv) {
  std::vector<std::string_view> flags(std::begin(kScenarioFlags), std::end(kScenarioFlags));
  flags.insert(flags.end(), {"--algo", "--scenario", "--frames", "--threads"});
  std::string error;
  const auto args = Args::parse(argv, flags, error);
  if (!args) return usage_error("run: " + error);
  if (args->help()) return print_help();
  if (!args->positional().empty()) return usage_error("run: unexpected argument '" + args->positional()[0] + "'");

  const std::string algo(args->get("--algo").value_or(best_algorithm()));
  if (const std::string why = algorithm_error(algo); !why.empty()) return fail(kExitUsage, "run: " + why);
  ScenarioParams params;
  params.name = args->get("--scenario").value_or("tracy");
  if (!is_scenario(params.name)) return fail(kExitUsage, unknown_scenario(params.name));
  if (params.name != "small") params.n = 100000;  // "small" keeps its own default
  if (!apply_scenario_options(*args, params, error)) return usage_error("run: " + error);
  std::uint64_t frames = 100;
  if (const auto text = args->get("--frames")) {
    if (!parse_uint("--frames", *text, std::numeric_limits<std::uint32_t>::max(), frames, error)) {
      return usage_error("run: " + error);
    }
    if (frames == 0) return usage_error("run: option --frames must be at least 1");
  }

  std::uint64_t threads = 1;
  if (!parse_threads(*args, threads, error)) return usage_error("run: " + error);

  Output out("-");
  if (!out.open()) return fail(kExitUsage, "run: " + out.error());
  const auto scenario = make_scenario(params, &error);
  if (!scenario) return fail(kExitUsage, "run: " + error);
  const auto broad_phase = start_broad_phase(algo, scenario->dims(), threads, error);
  if (broad_phase == nullptr) return fail(kExitUsage, "run: " + error);

  using Clock = std::chrono::steady_clock;
  Progress progress(frames);
  TraceFrame frame;      // this frame's operations, gathered outside the timed part
  std::vector<Id> hits;  // a query's answer
  std::vector<double> step_ms;
  step_ms.reserve(frames);
  double first_ms = 0;
  std::size_t first_pairs = 0, first_boxes = 0;
  std::uint64_t pair_sum = 0, created_sum = 0, deleted_sum = 0;
  for (std::uint64_t f = 0; f < frames; ++f) {
    if (f > 0) scenario->step();
    fill_frame(*scenario, frame);
    const Clock::time_point start = Clock::now();
    Status s = stage_frame(*broad_phase, frame);
    if (!s) {
      progress.finish();
      const int status = s.code() == StatusCode::kUnsupported ? kExitUnsupported : kExitTraceError;
      return fail(status, "run: " + algo + " refused frame " + std::to_string(f) + ": " + s.message());
    }
    const FrameDelta& delta = broad_phase->update();
    for (const TraceQuery& query : frame.queries) (void)broad_phase->query(query.box, hits, query.mask);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (f == 0) {
      first_ms = ms;
      first_pairs = broad_phase->pairs().size();
      first_boxes = frame.added.size();
    } else {
      step_ms.push_back(ms);
      pair_sum += broad_phase->pairs().size();
      created_sum += delta.created.size();
      deleted_sum += delta.deleted.size();
    }
    progress.update(f + 1, fixed(ms, 2) + " ms/frame");
  }
  progress.finish();

  std::vector<Pair> sorted;
  broad_phase->sorted_pairs(sorted);
  const std::size_t steps = step_ms.size();
  const auto per_step = [&](std::uint64_t sum) { return fixed(static_cast<double>(sum) / double(steps), 1); };

  std::string& text = out.buffer();
  text += "sapling run\n";
  row(text, "algorithm", algo + (threads == 1 ? "" : "  (threads " + std::to_string(threads) + ")"));
  AutoState state;
  broad_phase->debug_draw(state);
  if (algo == "auto") {
    row(text, "auto runs",
        state.algorithm + " (" + state.reason + "), after " + std::to_string(state.switches) + " switch" +
            (state.switches == 1 ? "" : "es"));
    row(text, "auto ran", state.runs);
    if (state.switches > 0) row(text, "switches", state.handovers);
  }
  if (!state.paths.empty()) row(text, "sap paths", state.paths);
  row(text, "scenario", params.name + "  " + describe_params(scenario->params()));
  row(text, "frames", std::to_string(frames) + " (frame 0 + " + std::to_string(steps) + " steps)");
  row(text, "boxes", std::to_string(broad_phase->size()) + " live at the end");
  std::string pairs_line = std::to_string(sorted.size()) + " at the end";
  if (steps > 0) pairs_line += ", " + per_step(pair_sum) + " mean per step";
  pairs_line += ", hash ";
  append_hex64(pairs_line, pair_set_hash(sorted));
  row(text, "pairs", pairs_line);
  if (steps > 0) {
    std::string delta_line = "+";
    delta_line += per_step(created_sum) + " -" + per_step(deleted_sum) + " mean per step";
    row(text, "delta", delta_line);
  }
  row(text, "frame 0",
      fixed(first_ms, 3) + " ms (" + std::to_string(first_boxes) + " boxes added, " + std::to_string(first_pairs) +
          " pairs)");
  if (steps > 0) {
    std::vector<double> sorted_ms = step_ms;
    std::sort(sorted_ms.begin(), sorted_ms.end());
    double total = 0;
    for (const double ms : step_ms) total += ms;
    row(text, "step time",
        "median " + fixed(median(sorted_ms), 3) + " ms, p95 " + fixed(percentile(sorted_ms, 0.95), 3) + " ms, max " +
            fixed(sorted_ms.back(), 3) + " ms, mean " + fixed(total / double(steps), 3) + " ms");
  }
  row(text, "memory", memory_text(broad_phase->memory_bytes()) + " held by the broad phase at the end");
  return out.close() ? kExitOk : fail(kExitUsage, "run: " + out.error());
}

}  // namespace sapling::cli
