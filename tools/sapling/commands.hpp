// The commands of `sapling`, one per file (cmd_*.cpp); each takes the words
// after its name and returns the exit status (cli.hpp).
#pragma once

#include <span>

namespace sapling::cli {

int cmd_algos(std::span<char* const> args);
int cmd_replay(std::span<char* const> args);
int cmd_gen(std::span<char* const> args);
int cmd_run(std::span<char* const> args);
int cmd_bench(std::span<char* const> args);

}  // namespace sapling::cli
