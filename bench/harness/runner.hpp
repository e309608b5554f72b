// The benchmark runner: one scene, several contenders, run interleaved in
// one process (each frame, every contender in turn, in an order that gives
// each contender every other as its predecessor alike: frame_order()), with
// per-frame timings, a time budget per contender, and verification of the
// pair sets against a reference contender on sampled frames (runner.cpp).
// A query scene runs the same way with calls in place of contenders: each
// frame every call over the whole batch, in frame_order(), its answers
// checked against sapling's on the first (query_runner.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/contender.hpp"
#include "harness/scenes.hpp"

namespace sapling::bench {

struct RunOptions {
  int frames = -1;                   ///< measured frames after frame 0; -1 = the scene's default
  int warmup = -1;                   ///< frames run after frame 0 but not measured; -1 = the scene's default
  int reps = -1;                     ///< repetitions; -1 = the scene's default
  unsigned threads = 1;              ///< handed to sapling's contenders
  double budget_s = 60.0;            ///< seconds after frame 0 before a contender stops (after frame 1)
  int verify_samples = 3;            ///< frames checked besides frame 0 (evenly spaced, the last included)
  bool verify = true;                ///< false: no pair-set comparison at all
  bool progress = true;              ///< progress lines on stderr
  bool explicit_contenders = false;  ///< named by the user: run even those a scene skips by default
};

/// How a contender's pair sets compared with the reference's.
struct Verification {
  std::string status = "unverified";  ///< reference, exact, superset, MISSES, PHANTOM, unverified
  std::uint64_t frames_checked = 0;
  std::uint64_t missing = 0;          ///< largest number of reference pairs absent on a checked frame
  std::uint64_t extra = 0;            ///< pairs not in the reference, on the last checked frame
  std::uint64_t reference_pairs = 0;  ///< the reference's pair count on that frame
  std::uint64_t duplicates = 0;       ///< largest number of pairs reported more than once on a checked frame
  std::int64_t first_bad_frame = -1;  ///< first checked frame with a missing (or, exact: extra) pair
  /// One line, e.g. "exact (4 frames)" or "superset: +1234 (5.1%)".
  std::string text() const;
};

struct ContenderResult {
  std::string name, origin, note;
  Exactness exactness = Exactness::kExact;
  bool ran = false;
  std::string skipped;             ///< why it did not run, when it did not
  std::string error;               ///< what stopped it, when something did
  bool stopped_by_budget = false;  ///< dropped after passing the time budget
  std::vector<double> frame0_ms;   ///< frame 0 (mass insertion / first computation), one per repetition
  std::vector<double> warmup_ms;   ///< warm-up frames of every repetition (not in the statistics)
  std::vector<double> frame_ms;    ///< measured frames of every repetition
  /// Over frame_ms (static: over frame0_ms).
  double median_ms = 0, p95_ms = 0, p99_ms = 0, max_ms = 0, min_ms = 0, mean_ms = 0;
  double frame0_median_ms = 0;
  /// Frame times in bursts (mean above twice the median, the slow frames adding up to over
  /// 50 ms: e.g. periodic re-insertion of fattened boxes): the median shows only the quiet
  /// frames, so the headline figure is the mean.
  bool bursty = false;
  /// The headline ms per frame: the median, or the mean when bursty.
  double headline_ms() const { return bursty ? mean_ms : median_ms; }
  std::size_t pairs_last = 0;               ///< pair_count() after its last frame of the first repetition
  std::size_t boxes_last = 0;               ///< live boxes then
  std::optional<Contender::Memory> memory;  ///< bytes held then, when the contender tells
  /// pair_count() after each measured frame of the first repetition (frame_ms's first entries).
  std::vector<std::size_t> frame_pairs;
  std::size_t frame0_pairs = 0;  ///< pair_count() after frame 0 of the first repetition
  /// Contender::counter(): its name, and its growth over each measured frame of every repetition.
  std::string counter_name;
  std::vector<double> frame_counts;
  double counter_mean = 0;  ///< mean of frame_counts
  Verification verification;
  double ratio = 0;  ///< median_ms / the fastest contender's median_ms
  bool has_time() const { return ran && (!frame_ms.empty() || !frame0_ms.empty()); }
};

struct SceneResult {
  std::string name, description, series;
  SceneShape shape;
  int frames = 0, warmup = 0, reps = 0;
  std::string reference;             ///< the contender verified against, or empty
  std::size_t reference_pairs0 = 0;  ///< the reference's pair count at frame 0
  std::optional<std::size_t> expected_pairs;
  std::vector<ContenderResult> contenders;
  double wall_s = 0;
};

/// The order in which `n` contenders (or calls) run in frame `frame`: the
/// rows of a Williams square (Williams 1949, a Latin square balanced for
/// the carry-over of one treatment into the next), its mirror rows too
/// where n is odd. Over n frames (2n where n is odd) each contender
/// immediately follows each other one equally often inside a frame (the
/// first of a frame follows the last of the one before, 1 to 3 times in
/// all), so none always pays for the same predecessor's evictions from the
/// caches (a plain rotation gives each the same predecessor nearly every
/// frame).
std::vector<std::size_t> frame_order(std::size_t n, std::size_t frame);

/// Runs `spec` with `contenders` (those that do not support it are listed as
/// skipped). The reference is one-shot brute force if it runs, else
/// the first exact sapling contender, else the first exact one.
SceneResult run_scene(const SceneSpec& spec, const std::vector<const ContenderInfo*>& contenders,
                      const RunOptions& options);

/// One call timed in a query scene: a contender's region queries or rays over the whole batch.
struct QueryCallResult {
  std::string contender;  ///< "sapling sap (static)", a peer's name
  std::string call;       ///< "query", "query (batched)", "ray (all hits)", "ray (closest)"
  std::string note;       ///< the API called
  std::size_t batch_size = 0;
  std::vector<double> ns_per_query;  ///< one per frame: the batch's time over its size
  std::size_t answers = 0;           ///< ids or hits returned over the batch
  std::size_t wrong = 0;             ///< queries answered differently from sapling's reference
};

struct QuerySceneResult {
  std::string name;
  std::size_t boxes = 0, queries = 0, rays = 0;
  int frames = 0;
  std::vector<std::string> build_lines;  ///< how each contender built the world, and any difference arbitrated
  std::vector<QueryCallResult> calls;
  bool sapling_wrong = false;  ///< a sapling answer differed from another's, or from brute force
};

/// Runs a query scene: the world built by sapling (the reference answers:
/// BroadPhase::query ids ascending, BroadPhase::ray_cast hits in (t, id)
/// order) and by its peer unless `excluded` names it; a pass of every call
/// over the batch, its answers checked query by query (untimed; brute force
/// arbitrates the first differences); then `options.frames` frames (-1: the
/// spec's) of every call over the batch, in frame_order(), timed. Throws std::runtime_error when sapling
/// refuses the world.
QuerySceneResult run_query_scene(const QuerySceneSpec& spec, const RunOptions& options,
                                 const std::vector<std::string>& excluded);

}  // namespace sapling::bench
