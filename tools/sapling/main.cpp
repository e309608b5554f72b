// The `sapling` command: dispatches to algos, replay, gen and run
// (docs/trace-format.md is the contract for their output), and bench when
// built with the harness (SAPLING_BENCH_COMMAND).
#include <span>
#include <string>
#include <string_view>

#include "cli.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  using namespace sapling::cli;
  if (argc < 2) return usage_error("no command given");
  const std::string_view command = argv[1];
  const std::span<char* const> rest(argv + 2, static_cast<std::size_t>(argc - 2));
  if (command == "help" || command == "--help" || command == "-h") {
    if (!rest.empty()) return usage_error(std::string(command) + ": unexpected argument '" + rest[0] + "'");
    return print_help();
  }
  if (command == "algos") return cmd_algos(rest);
  if (command == "replay") return cmd_replay(rest);
  if (command == "gen") return cmd_gen(rest);
  if (command == "run") return cmd_run(rest);
#if defined(SAPLING_HAVE_BENCH_COMMAND)
  if (command == "bench") return cmd_bench(rest);
#else
  if (command == "bench")
    return fail(kExitUsage, "bench: this sapling was built without it (SAPLING_BENCH_COMMAND=OFF)");
#endif
  return usage_error("unknown command '" + std::string(command) + "'");
}
