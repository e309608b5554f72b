// The runner: interleaved timing, budgets, verification on sampled frames.
#include "harness/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <memory>
#include <set>

#include "harness/timing.hpp"

namespace sapling::bench {
namespace {

// |a \ b| and |b \ a| for sorted, duplicate-free pair lists.
void compare(const std::vector<Pair>& a, const std::vector<Pair>& b, std::uint64_t& only_a, std::uint64_t& only_b) {
  only_a = only_b = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a[i] < b[j]) {
      ++only_a;
      ++i;
    } else if (b[j] < a[i]) {
      ++only_b;
      ++j;
    } else {
      ++i;
      ++j;
    }
  }
  only_a += a.size() - i;
  only_b += b.size() - j;
}

// A contender that runs in this scene: its result, whether it still runs, its budgeted time.
struct Runner {
  std::unique_ptr<Contender> contender;
  ContenderResult* result = nullptr;
  bool active = false;
  double total_ms = 0;
};

// Brute force (a reference of choice).
bool is_brute(const std::string& name) { return name == "brute-oneshot" || name == "brute-bipartite"; }

// What one scene's run shares between its steps: the spec and options, the result being
// filled, the scenario, the contenders that run and the reference among them.
struct SceneRun {
  SceneRun(const SceneSpec& s, const RunOptions& o)
      : spec(s), options(o), tty(o.progress && isatty(STDERR_FILENO)), budget_ms(o.budget_s * 1000.0) {}
  const SceneSpec& spec;
  const RunOptions& options;
  const bool tty;          // progress on a terminal: one line rewritten per frame
  const double budget_ms;  // options.budget_s in ms
  SceneResult scene;
  std::unique_ptr<Scenario> scenario;
  std::vector<Runner> runners;  // point into scene.contenders (reserved: never reallocated)
  Runner* reference = nullptr;
  std::set<int> samples;                     // frames whose pair sets are compared
  std::vector<Pair> reference_pairs, pairs;  // buffers for the comparison
  int total_frames() const { return scene.warmup + scene.frames; }
};

// The scene's names and its frame, warm-up and repetition counts (the options over the spec's defaults).
SceneResult describe_scene(const SceneSpec& spec, const RunOptions& options) {
  SceneResult scene;
  scene.name = spec.name;
  scene.description = spec.description;
  scene.series = spec.series;
  scene.expected_pairs = spec.expected_pairs;
  scene.frames = spec.is_static ? 0 : spec.one_frame ? 1 : (options.frames >= 0 ? options.frames : spec.frames);
  scene.warmup = spec.is_static || spec.one_frame ? 0 : (options.warmup >= 0 ? options.warmup : spec.warmup);
  scene.reps = options.reps > 0 ? options.reps : spec.reps;
  return scene;
}

// Builds the contenders that take this kind of query; lists the others' reasons.
void build_runners(SceneRun& run, const std::vector<const ContenderInfo*>& contenders) {
  const SceneSpec& spec = run.spec;
  const RunOptions& options = run.options;
  const Query query = run.scene.shape.bipartite() ? Query::kBipartite : Query::kComplete;
  run.scene.contenders.reserve(contenders.size());
  for (const ContenderInfo* info : contenders) {
    if (info->query != query) continue;
    const auto& asked = spec.opt_in;
    const auto& only = spec.only;
    const bool listed = std::find(only.begin(), only.end(), info->name) != only.end();
    if (!options.explicit_contenders && !only.empty() && !listed) continue;
    if (info->opt_in && !options.explicit_contenders && !listed &&
        std::find(asked.begin(), asked.end(), info->name) == asked.end()) {
      continue;
    }
    ContenderResult& result = run.scene.contenders.emplace_back();
    result.name = info->name;
    result.origin = info->origin;
    std::unique_ptr<Contender> c = info->make(ContenderOptions{options.threads});
    result.note = c->note();
    result.exactness = c->exactness();
    std::string why;
    const auto& slow = spec.skip_by_default;
    if (!options.explicit_contenders && std::find(slow.begin(), slow.end(), info->name) != slow.end()) {
      result.skipped = "too slow at this size (name it in --contenders to run it)";
      continue;
    }
    if (!c->supports(run.scene.shape, &why)) {
      result.skipped = why.empty() ? "not supported" : why;
      continue;
    }
    if (run.scene.shape.has_statics() && !c->handles_statics()) {
      result.skipped = "no static objects (would pair statics with statics)";
      continue;
    }
    run.runners.push_back({std::move(c), &result, true, 0});
  }
}

// The reference: one-shot brute force if it runs, else sapling's first exact contender, else any exact one.
Runner* pick_reference(std::vector<Runner>& runners) {
  Runner* reference = nullptr;
  for (Runner& r : runners) {
    if (!reference && is_brute(r.result->name)) reference = &r;
  }
  for (Runner& r : runners) {
    if (!reference && r.result->origin == "sapling" && r.result->exactness == Exactness::kExact) reference = &r;
  }
  for (Runner& r : runners) {
    if (!reference && r.result->exactness == Exactness::kExact) reference = &r;
  }
  return reference;
}

// Frames whose pair sets are compared: 0 and verify_samples evenly spaced up to the last.
std::set<int> sampled_frames(int total_frames, int verify_samples) {
  std::set<int> samples{0};
  for (int k = 1; k <= verify_samples && total_frames > 0; ++k) {
    samples.insert(static_cast<int>(std::lround(static_cast<double>(total_frames) * k / verify_samples)));
  }
  return samples;
}

// Progress: the scene's size, frame plan, contender count and reference.
void print_plan(const SceneRun& run) {
  if (!run.options.progress) return;
  const SceneResult& scene = run.scene;
  const std::string plan = run.spec.is_static
                               ? "static, " + std::to_string(scene.reps) + " rebuilds"
                               : std::to_string(scene.warmup) + " warm-up + " + std::to_string(scene.frames) +
                                     " frames x " + std::to_string(scene.reps) + " rep(s)";
  std::fprintf(stderr, "  n = %zu, %s, %zu contenders, reference %s\n", scene.shape.n, plan.c_str(), run.runners.size(),
               run.reference ? run.reference->result->name.c_str() : "(none)");
}

// Drops a contender that threw, keeping the error.
void fail(const SceneRun& run, Runner& r, const std::exception& e) {
  r.active = false;
  r.result->error = e.what();
  if (run.options.progress)
    std::fprintf(stderr, "%s  %s: error: %s\n", run.tty ? "\r" : "", r.result->name.c_str(), e.what());
}

// Compares every active contender's pairs on `frame` with the reference's (worst counts kept).
void verify(SceneRun& run, int frame) {
  Runner* const reference = run.reference;
  if (!run.options.verify || !reference || !reference->active) return;
  reference->contender->pairs(run.reference_pairs);
  if (frame == 0) run.scene.reference_pairs0 = run.reference_pairs.size();
  for (Runner& r : run.runners) {
    if (!r.active || &r == reference) continue;
    r.contender->pairs(run.pairs);
    std::uint64_t missing = 0, extra = 0;
    compare(run.reference_pairs, run.pairs, missing, extra);
    Verification& v = r.result->verification;
    const std::size_t reported = r.contender->pair_count();
    if (reported > run.pairs.size()) v.duplicates = std::max<std::uint64_t>(v.duplicates, reported - run.pairs.size());
    ++v.frames_checked;
    v.missing = std::max(v.missing, missing);
    v.extra = std::max(v.extra, extra);
    v.reference_pairs = run.reference_pairs.size();
    const bool bad = missing > 0 || (r.result->exactness == Exactness::kExact && extra > 0);
    if (bad && v.first_bad_frame < 0) v.first_bad_frame = frame;
  }
}

// Which of a contender's series a frame's time goes to.
enum class Kind { kFirst, kWarmup, kMeasured };

// One frame for every active contender, in frame_order(turn): times each, adds it to
// the budget, and (first repetition) samples its pair count, live boxes and memory.
void run_frame(SceneRun& run, std::size_t turn, Kind kind, bool record_pairs) {
  for (const std::size_t k : frame_order(run.runners.size(), turn)) {
    Runner& r = run.runners[k];
    if (!r.active) continue;
    try {
      const std::optional<Contender::Counter> before = r.contender->counter();
      const Clock::time_point start = Clock::now();
      r.contender->frame(*run.scenario);
      const double ms = ms_since(start);
      if (before && kind == Kind::kMeasured) {
        const std::optional<Contender::Counter> after = r.contender->counter();
        r.result->counter_name = before->name;
        // A counter that went back (the contender rebuilt its state) counts from zero.
        const std::uint64_t grown = after->total >= before->total ? after->total - before->total : after->total;
        r.result->frame_counts.push_back(static_cast<double>(grown));
      }
      (kind == Kind::kFirst    ? r.result->frame0_ms
       : kind == Kind::kWarmup ? r.result->warmup_ms
                               : r.result->frame_ms)
          .push_back(ms);
      // The budget counts what follows frame 0 (static scenes: every rebuild).
      if (kind != Kind::kFirst || run.spec.is_static) r.total_ms += ms;
      if (record_pairs) {
        r.result->pairs_last = r.contender->pair_count();
        if (kind == Kind::kFirst) r.result->frame0_pairs = r.result->pairs_last;
        if (kind == Kind::kMeasured) r.result->frame_pairs.push_back(r.result->pairs_last);
        r.result->boxes_last = run.scenario->alive_ids().size();
        r.result->memory = r.contender->memory();
      }
    } catch (const std::exception& e) {
      fail(run, r, e);
    }
  }
}

// Resets every active contender for a repetition.
void reset_contenders(SceneRun& run) {
  for (Runner& r : run.runners) {
    if (!r.active) continue;
    try {
      r.contender->reset(run.scene.shape);
      r.result->ran = true;
    } catch (const std::exception& e) {
      fail(run, r, e);
    }
  }
}

// Progress: each contender's frame 0 time and pair count.
void print_frame0(const SceneRun& run) {
  if (!run.options.progress) return;
  for (const Runner& r : run.runners) {
    if (!r.result->frame0_ms.empty()) {
      std::fprintf(stderr, "  %-22s frame 0: %10.2f ms, %zu pairs\n", r.result->name.c_str(),
                   r.result->frame0_ms.front(), r.result->pairs_last);
    }
  }
}

// Drops a contender for passing the budget.
void stop_by_budget(Runner& r) {
  r.active = false;
  r.result->stopped_by_budget = true;
}

// The budget after frame 0 of repetition `rep`: static scenes stop rebuilding past a quarter
// of the budget after 3 builds; a frame 0 far beyond the budget gets no more frames.
void apply_frame0_budget(SceneRun& run, int rep) {
  for (Runner& r : run.runners) {
    if (!r.active || r.result->frame0_ms.empty()) continue;  // failed before or at frame 0
    const bool over = run.spec.is_static ? rep >= 2 && rep + 1 < run.scene.reps && r.total_ms > run.budget_ms / 4
                                         : r.result->frame0_ms.back() > 4 * run.budget_ms;
    if (over) stop_by_budget(r);
  }
}

// The budget after measured frame `f` (not the last): a contender over it stops.
void apply_frame_budget(SceneRun& run, int f) {
  for (Runner& r : run.runners) {
    if (r.active && r.total_ms > run.budget_ms && f < run.total_frames() && f > run.scene.warmup) {
      stop_by_budget(r);
      if (run.options.progress) {
        std::fprintf(stderr, "%s  %s: stopped after %d frame(s), over the %.0f s budget\n", run.tty ? "\r" : "",
                     r.result->name.c_str(), f, run.options.budget_s);
      }
    }
  }
}

// Progress after frame `f`: a rewritten line on a terminal, else a line for a round over 5 s.
void print_round(const SceneRun& run, int rep, int f, double round_ms) {
  if (run.tty) {
    std::fprintf(stderr, "\r  rep %d/%d frame %d/%d (%.2f s)   ", rep + 1, run.scene.reps, f, run.total_frames(),
                 round_ms / 1000);
  } else if (run.options.progress && round_ms > 5000) {
    std::fprintf(stderr, "  frame %d/%d: %.1f s\n", f, run.total_frames(), round_ms / 1000);
  }
}

// Repetitions of a moving scene stop once the budget is spent (e.g. the one-by-one insertion).
void apply_rep_budget(SceneRun& run, int rep) {
  for (Runner& r : run.runners) {
    if (!run.spec.is_static && r.active && rep + 1 < run.scene.reps && r.total_ms > run.budget_ms) stop_by_budget(r);
  }
}

// One repetition: a fresh scenario (moving scenes), frame 0, then the warm-up and measured
// frames, every contender interleaved; the first repetition records pairs and verifies.
void run_rep(SceneRun& run, int rep) {
  const int total_frames = run.total_frames();
  if (rep > 0 && !run.spec.is_static) run.scenario = run.spec.make();
  reset_contenders(run);
  run_frame(run, static_cast<std::size_t>(rep), Kind::kFirst, rep == 0);
  if (rep == 0) {
    verify(run, 0);
    print_frame0(run);
  }
  apply_frame0_budget(run, rep);
  for (int f = 1; f <= total_frames; ++f) {
    const Clock::time_point round_start = Clock::now();
    run.scenario->step();
    run_frame(run, static_cast<std::size_t>(f + rep), f <= run.scene.warmup ? Kind::kWarmup : Kind::kMeasured,
              rep == 0);
    if (rep == 0 && run.samples.count(f)) verify(run, f);
    apply_frame_budget(run, f);
    print_round(run, rep, f, ms_since(round_start));
  }
  if (run.tty && total_frames > 0) std::fprintf(stderr, "\r%60s\r", "");
  apply_rep_budget(run, rep);
}

// A contender's figures over its timed frames (static: frame 0s): median, p95, p99, min, max, mean, bursts.
void summarise_times(ContenderResult& c, bool is_static) {
  const std::vector<double>& timed = is_static ? c.frame0_ms : c.frame_ms;
  c.frame0_median_ms = median(c.frame0_ms);
  if (timed.empty()) return;
  c.median_ms = median(timed);
  c.p95_ms = quantile(timed, 0.95);
  c.p99_ms = quantile(timed, 0.99);
  c.min_ms = *std::min_element(timed.begin(), timed.end());
  c.max_ms = *std::max_element(timed.begin(), timed.end());
  double sum = 0;
  for (const double t : timed) sum += t;
  c.mean_ms = sum / static_cast<double>(timed.size());
  if (!c.frame_counts.empty()) {
    double counted = 0;
    for (const double n : c.frame_counts) counted += n;
    c.counter_mean = counted / static_cast<double>(c.frame_counts.size());
  }
  // Bursts: the mean is over twice the median and the slow frames add up to more than
  // machine noise does (50 ms over the run).
  const double excess_ms = (c.mean_ms - c.median_ms) * static_cast<double>(timed.size());
  c.bursty = timed.size() >= 3 && c.mean_ms > 2 * c.median_ms && excess_ms > 50;
}

// A contender's verification status from its worst counts.
void settle_verification(ContenderResult& c, const Runner* reference) {
  Verification& v = c.verification;
  if (reference && c.name == reference->result->name) {
    v.status = "reference";
  } else if (v.frames_checked == 0) {
    v.status = "unverified";
  } else if (v.missing > 0) {
    v.status = "MISSES";
  } else if (c.exactness == Exactness::kExact && v.extra > 0) {
    v.status = "PHANTOM";
  } else {
    v.status = c.exactness == Exactness::kExact ? "exact" : "superset";
  }
}

// Figures and statuses of every contender, and each one's ratio to the fastest headline time.
void summarise(SceneRun& run) {
  const bool is_static = run.spec.is_static;
  double fastest = 0;
  for (ContenderResult& c : run.scene.contenders) {
    summarise_times(c, is_static);
    const bool timed = is_static ? !c.frame0_ms.empty() : !c.frame_ms.empty();
    if (timed && (fastest == 0 || c.headline_ms() < fastest)) fastest = c.headline_ms();
    settle_verification(c, run.reference);
  }
  for (ContenderResult& c : run.scene.contenders) {
    const bool timed = is_static ? !c.frame0_ms.empty() : !c.frame_ms.empty();
    if (timed && fastest > 0) c.ratio = c.headline_ms() / fastest;
  }
}

// Progress: each contender's headline time and verification (or why it was skipped), and the wall time.
void print_summary(const SceneResult& scene, const RunOptions& options) {
  if (!options.progress) return;
  for (const ContenderResult& c : scene.contenders) {
    if (!c.skipped.empty()) {
      std::fprintf(stderr, "  %-22s skipped: %s\n", c.name.c_str(), c.skipped.c_str());
    } else {
      std::fprintf(stderr, "  %-22s %10.3f ms/frame%s  %s\n", c.name.c_str(), c.headline_ms(),
                   c.bursty ? " (mean)" : "", c.verification.text().c_str());
    }
  }
  std::fprintf(stderr, "  (%.1f s)\n", scene.wall_s);
}

}  // namespace

std::string Verification::text() const {
  char buf[160];
  if (status == "reference" || status == "unverified") return status;
  const std::string dup = duplicates ? ", " + std::to_string(duplicates) + " reported twice" : "";
  if (status == "exact") {
    std::snprintf(buf, sizeof buf, "exact (%llu frame%s)", static_cast<unsigned long long>(frames_checked),
                  frames_checked == 1 ? "" : "s");
  } else if (status == "superset") {
    const double pct = reference_pairs ? 100.0 * static_cast<double>(extra) / static_cast<double>(reference_pairs) : 0;
    std::snprintf(buf, sizeof buf, "superset +%llu (%.1f%%)", static_cast<unsigned long long>(extra), pct);
  } else if (status == "MISSES") {
    std::snprintf(buf, sizeof buf, "MISSES %llu (frame %lld)%s", static_cast<unsigned long long>(missing),
                  static_cast<long long>(first_bad_frame), extra ? ", extra too" : "");
  } else {
    std::snprintf(buf, sizeof buf, "%s +%llu (frame %lld)", status.c_str(), static_cast<unsigned long long>(extra),
                  static_cast<long long>(first_bad_frame));
  }
  return buf + dup;
}

std::vector<std::size_t> frame_order(std::size_t n, std::size_t frame) {
  std::vector<std::size_t> order(n);
  if (n == 0) return order;
  const std::size_t row = frame % (n % 2 == 0 ? n : 2 * n);
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t first = k % 2 == 1 ? (k + 1) / 2 : n - k / 2;  // 0, 1, n-1, 2, n-2, ...
    order[k] = (first + row) % n;
  }
  if (row >= n) std::reverse(order.begin(), order.end());
  return order;
}

SceneResult run_scene(const SceneSpec& spec, const std::vector<const ContenderInfo*>& contenders,
                      const RunOptions& options) {
  const Clock::time_point scene_start = Clock::now();
  SceneRun run(spec, options);
  run.scene = describe_scene(spec, options);
  run.scenario = spec.make();
  run.scene.shape = shape_of(spec, *run.scenario);
  // A scene's own contenders with settings (NAME:SETTINGS in its list),
  // made on demand as --contenders would.
  std::vector<const ContenderInfo*> all = contenders;
  for (const std::string& name : spec.only) {
    if (options.explicit_contenders || name.find(':') == std::string::npos) continue;
    const ContenderInfo* info = find_contender(name);
    if (info != nullptr && std::find(all.begin(), all.end(), info) == all.end()) all.push_back(info);
  }
  build_runners(run, all);
  run.reference = pick_reference(run.runners);
  if (run.reference) run.scene.reference = run.reference->result->name;
  run.samples = sampled_frames(run.total_frames(), options.verify_samples);
  print_plan(run);
  for (int rep = 0; rep < run.scene.reps; ++rep) run_rep(run, rep);
  summarise(run);
  run.scene.wall_s = ms_since(scene_start) / 1000;
  print_summary(run.scene, options);
  return std::move(run.scene);
}

}  // namespace sapling::bench
