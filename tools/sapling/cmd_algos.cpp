// `sapling algos`: one line per registered algorithm, `NAME  description`,
// names padded so the descriptions line up.
#include <algorithm>
#include <string>

#include "cli.hpp"
#include "commands.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"

namespace sapling::cli {

int cmd_algos(std::span<char* const> argv) {
  std::string error;
  const auto args = Args::parse(argv, {}, error);
  if (!args) return usage_error("algos: " + error);
  if (args->help()) return print_help();
  if (!args->positional().empty()) return usage_error("algos: unexpected argument '" + args->positional()[0] + "'");
  std::size_t width = 0;
  for (const AlgorithmInfo& info : algorithms()) width = std::max(width, info.name.size());
  Output out("-");
  for (const AlgorithmInfo& info : algorithms()) {
    std::string& line = out.buffer();
    line += info.name;
    line.append(width - info.name.size() + 2, ' ');
    line += info.description;
    line += '\n';
  }
  return out.close() ? kExitOk : fail(kExitUsage, "algos: " + out.error());
}

}  // namespace sapling::cli
