// `sapling bench`: the side-by-side benchmark harness (bench/harness), run
// from the command line. Its options and outputs: `sapling bench --help`.
#include "commands.hpp"
#include "harness/bench_command.hpp"

namespace sapling::cli {

int cmd_bench(std::span<char* const> args) { return bench::run_bench_command(args); }

}  // namespace sapling::cli
