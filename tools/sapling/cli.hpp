// Shared pieces of the `sapling` command: exit statuses, the option parser,
// checked output (output.hpp), number formatting, the progress line, and the
// lookups of algorithms and scenarios every command needs.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "output.hpp"
#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::cli {

/// Exit statuses, as `sapling help` documents them.
enum Exit : int {
  kExitOk = 0,
  kExitUsage = 1,        // bad command line, unreadable input, unwritable output
  kExitTraceError = 2,   // the trace breaks the format (TRACE:LINE: reason)
  kExitUnsupported = 3,  // the algorithm refuses the trace by design
  kExitWrongPairs = 4,   // bench only: a contender's pairs failed verification
};

/// The full help text (`sapling help`).
std::string_view usage_text();

/// Prints the help text on stdout; returns kExitOk (kExitUsage, with a
/// message, if it cannot).
int print_help();
/// Prints `sapling: MESSAGE` and the usage on stderr; returns kExitUsage.
int usage_error(std::string_view message);
/// Prints `sapling: MESSAGE` on stderr; returns `status`.
int fail(int status, std::string_view message);

/// A command's arguments: positionals, and `--flag VALUE` or `--flag=VALUE`
/// options from a fixed list. `-` alone is a positional (stdin / stdout).
class Args {
 public:
  /// Parses `argv` (the words after the command name). Only `flags` are
  /// accepted, each at most once, each with a value; `--help` and `-h` set
  /// help(). On error returns nullopt and sets `error`.
  static std::optional<Args> parse(std::span<char* const> argv, std::span<const std::string_view> flags,
                                   std::string& error);

  const std::vector<std::string>& positional() const noexcept { return positional_; }
  bool help() const noexcept { return help_; }
  /// The value given to `flag`, if it was given.
  std::optional<std::string_view> get(std::string_view flag) const;

 private:
  std::vector<std::string> positional_;
  std::vector<std::pair<std::string, std::string>> values_;
  bool help_ = false;
};

/// Reads `text` in full as a decimal unsigned integer no larger than `max`.
/// On failure sets `error` to a message naming `flag`.
bool parse_uint(std::string_view flag, std::string_view text, std::uint64_t max, std::uint64_t& out,
                std::string& error);

/// The scenario options shared by `gen` and `run`; the last four are version 2's.
inline constexpr std::string_view kScenarioFlags[] = {"--n",      "--seed",    "--density", "--speed",
                                                      "--moving", "--inserts", "--removes", "--cycle",
                                                      "--static", "--groups",  "--regroup", "--queries"};

/// Applies the scenario options found in `args` to `params`. False (and
/// `error` set) on a bad number.
bool apply_scenario_options(const Args& args, ScenarioParams& params, std::string& error);

/// Whether `name` is a scenario of scenario_list().
bool is_scenario(std::string_view name);
/// "unknown scenario 'x'; scenarios: unisize2d, tracy, ..."
std::string unknown_scenario(std::string_view name);
/// The scenario's resolved parameters as `key=value` words, those it uses only.
std::string describe_params(const ScenarioParams& params);

/// Whether `name` is a registered algorithm (NAME, or NAME:SETTINGS).
bool is_algorithm(std::string_view name);
/// "" if `name` names a registered algorithm, NAME or NAME:SETTINGS with
/// SETTINGS not empty; else why not (unknown_algorithm(), or "NAME:" with
/// nothing after the colon, which BroadPhase::create would take as NAME).
std::string algorithm_error(std::string_view name);

/// Parses `--threads` (0..ThreadPool::kMaxThreads; 1 when absent).
bool parse_threads(const Args& args, std::uint64_t& threads, std::string& error);
/// A broad phase of the registered algorithm `algo` on `threads` threads,
/// or null with `error` set: create()'s reason, or a thread count the
/// system would not start (fewer threads would give the same output, but
/// the command line promises the count asked for).
std::unique_ptr<BroadPhase> start_broad_phase(const std::string& algo, int dims, std::uint64_t threads,
                                              std::string& error);
/// "unknown algorithm 'x'; algorithms: brute, sort-sweep, ..."
std::string unknown_algorithm(std::string_view name);

/// Reads a whole file (`-`: standard input). False (and `error` set) if it
/// cannot be read.
bool read_file(const std::string& path, std::string& text, std::string& error);

/// Appends the decimal form of `value`.
void append_uint(std::string& out, std::uint64_t value);
/// Appends `value` as 16 lowercase hexadecimal digits.
void append_hex64(std::string& out, std::uint64_t value);
/// `value` with `decimals` digits after the point.
std::string fixed(double value, int decimals);

/// A one-line progress bar on stderr, drawn only when stderr is a terminal
/// and redrawn at most ten times a second.
class Progress {
 public:
  explicit Progress(std::uint64_t total);
  /// `done` of `total` steps finished; `note` is shown after the bar.
  void update(std::uint64_t done, std::string_view note);
  /// Erases the bar.
  void finish();

 private:
  std::uint64_t total_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_{};
};

}  // namespace sapling::cli
