// `sapling bench`: runs benchmark suites or scenes side by side and prints a
// table, optionally writing Markdown and JSON (tools/sapling/cmd_bench.cpp
// calls it).
//
//   sapling bench --suite one-shot --quick
//   sapling bench --scene allmoving3d-100k --contenders box-pruning-oneshot,cgal --frames 20
//   sapling bench --suite one-shot --json out.json --md out.md
//   sapling bench --list
#pragma once

#include <span>

namespace sapling::bench {

/// Runs the command with the words after `bench` (as tools/sapling's
/// commands take them). Returns the exit status: 0 success, 1 when a
/// sapling contender failed verification or stopped with an error, 2 for a
/// usage error.
int run_bench_command(std::span<char* const> args);

}  // namespace sapling::bench
