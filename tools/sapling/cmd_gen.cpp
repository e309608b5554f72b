// `sapling gen SCENARIO [--n N] [--frames F] [--seed S] [options] --out FILE`:
// writes a scenario of docs/scenarios.md as a trace, frame 0 (every
// box added) then F-1 steps, one frame at a time; with the version-2 options
// (--static, --groups, --regroup, --queries) a version-2 trace.
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli.hpp"
#include "commands.hpp"
#include "sapling/trace.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::cli {

int cmd_gen(std::span<char* const> argv) {
  std::vector<std::string_view> flags(std::begin(kScenarioFlags), std::end(kScenarioFlags));
  flags.insert(flags.end(), {"--frames", "--out"});
  std::string error;
  const auto args = Args::parse(argv, flags, error);
  if (!args) return usage_error("gen: " + error);
  if (args->help()) return print_help();
  if (args->positional().size() != 1) {
    return usage_error(args->positional().empty() ? "gen: no SCENARIO given" : "gen: more than one SCENARIO given");
  }
  ScenarioParams params;
  params.name = args->positional()[0];
  if (!is_scenario(params.name)) return fail(kExitUsage, unknown_scenario(params.name));
  if (!apply_scenario_options(*args, params, error)) return usage_error("gen: " + error);
  std::uint64_t frames = 10;
  if (const auto text = args->get("--frames")) {
    if (!parse_uint("--frames", *text, std::numeric_limits<std::uint32_t>::max(), frames, error)) {
      return usage_error("gen: " + error);
    }
  }
  const auto out_path = args->get("--out");
  if (!out_path) return usage_error("gen: --out FILE is required (- for standard output)");
  Output out{std::string(*out_path)};
  if (!out.open()) return fail(kExitUsage, "gen: " + out.error());

  const auto scenario = make_scenario(params, &error);
  if (!scenario) return fail(kExitUsage, "gen: " + error);

  // TraceWriter writes a frame into `text`; it moves to `out`, written a
  // megabyte at a time.
  constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  std::ostringstream text;
  text << "# sapling gen " << params.name << ' ' << describe_params(scenario->params()) << " frames=" << frames << '\n';
  TraceWriter writer(text, scenario->dims(), params.uses_version_2() ? 2 : 1);
  TraceFrame frame;
  for (std::uint64_t f = 0; f < frames; ++f) {
    if (f > 0) scenario->step();
    fill_frame(*scenario, frame);
    writer.write_frame(frame);
    out.buffer() += std::move(text).str();
    text.str({});
    if (out.buffer().size() >= kFlushBytes && !out.flush()) return fail(kExitUsage, "gen: " + out.error());
  }
  out.buffer() += std::move(text).str();
  return out.close() ? kExitOk : fail(kExitUsage, "gen: " + out.error());
}

}  // namespace sapling::cli
