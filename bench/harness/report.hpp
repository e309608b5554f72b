// Benchmark reports: a plain-text table per scene, a Markdown page and a
// JSON file carrying the machine, the build, the command line and every
// figure; the query scenes' Markdown tables.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

#include "harness/runner.hpp"

namespace sapling::bench {

/// Where and how the figures were measured.
struct RunInfo {
  std::string command;             ///< the command line, words joined by spaces
  std::string date;                ///< UTC, ISO 8601
  std::string cpu;                 ///< model name from /proc/cpuinfo
  unsigned cores = 0;              ///< hardware threads
  std::string memory;              ///< MemTotal from /proc/meminfo
  std::string os;                  ///< uname
  std::string compiler;            ///< of the harness
  std::string build;               ///< build type and SIMD setting
  std::string git;                 ///< git describe of the source tree, or "unknown"
  std::vector<std::string> peers;  ///< peer libraries compiled in
  unsigned threads = 1;            ///< --threads
  double budget_s = 0;             ///< --budget
  bool warm_heap = true;           ///< freed memory kept in the process (not --cold-heap)
};

/// `v` with `digits` digits after the point ("12.35").
std::string fixed(double v, int digits);

/// Fills everything but `command`, `threads` and `budget_s`.
RunInfo collect_run_info();

/// One scene as an aligned text table.
void print_scene(std::ostream& out, const SceneResult& scene);

/// A headline table: per scene, sapling's fastest, the fastest peer and their ratio.
void print_summary(std::ostream& out, const std::vector<SceneResult>& scenes, bool markdown);

/// Per series of scenes (SceneSpec::series) and contender timed on 3 or more
/// of its sizes: the exponent b of time per frame ~ a n^b, by least squares
/// on log(headline ms) against log(n).
void print_scaling(std::ostream& out, const std::vector<SceneResult>& scenes, bool markdown);

/// The whole run as Markdown (command line first) or JSON.
void write_markdown(std::ostream& out, const RunInfo& info, const std::vector<SceneResult>& scenes);
void write_json(std::ostream& out, const RunInfo& info, const std::vector<SceneResult>& scenes);

/// Per-frame figures of the first repetition as CSV, one row per contender and frame:
/// scene,contender,frame,ms,pairs (frame 0 = mass insertion; warm-up frames left out).
void write_frames_csv(std::ostream& out, const std::vector<SceneResult>& scenes);

/// The query scenes as Markdown: a heading (the level's tiles, the frames),
/// the level's static-static overlaps, dense and spread (level_overlaps()),
/// then per scene its build lines and a row per call: median and least ns
/// per query, answers, and whether they were sapling's.
void write_query_tables(std::ostream& out, const std::vector<QuerySceneResult>& scenes, std::size_t dense_overlaps,
                        std::size_t spread_overlaps);

}  // namespace sapling::bench
