// sapling-mpi: a scenario run across the ranks of mpirun on the distributed
// broad phase (sapling/mpi/distributed_broad_phase.hpp).
//
//   mpirun -np 2 sapling-mpi run --scenario tracy --n 1000000 --frames 100
//
// Every rank steps the whole scenario (it is deterministic) and stages the
// operations on the objects it owns: with --owners domain (the default) the
// rank whose domain holds the object's centre (the domains drawn from frame
// 0's boxes first, plan_domains(); an object handed over, hand_over(), when
// a move carries it into another domain), as a domain-decomposed
// simulation keeps them; with --owners hashed, a hash
// of the id (owners scattered over space). Rank 0 prints, over frames
// 1..F-1, the frame time (the slowest rank's staging and update(), each
// rank's own), bytes sent per frame, what each rank holds (its
// domain's objects and its ghosts), and the load imbalance. --compare runs
// the single-process BroadPhase on the same frames in the same process
// (interleaved, rank 0, meaningful on one rank): the distributed layer's
// own cost. --verify checks every frame's gathered delta against it.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "cli.hpp"
#include "sapling/mpi/distributed_broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace sapling::cli {
namespace {

constexpr std::string_view kUsage = R"(usage: mpirun -np RANKS sapling-mpi run [options]

options:
  --scenario NAME   unisize2d, tracy (default), allmoving3d, cluster, small
  --frames F        frames to run (default 100)
  --algo NAME       the local broad phases' algorithm (default auto)
  --owners KIND     domain (default): the rank whose domain holds the object's
                    centre, handed over when a move carries it across; hashed: a
                    hash of its id, for good
  --compare on      also run the single-process BroadPhase on rank 0, interleaved
  --verify on       check every frame's gathered delta against BroadPhase (exit 4 if not equal)
  --per-frame FILE  a CSV line per frame: the slowest rank's ms, bytes sent, imbalance,
                    whether the domains were redrawn, hand-overs (rank 0's)
  and the scenario options of `sapling run` (--n, --seed, --moving, ...; see `sapling help`)
)";

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::max<std::size_t>(rank, 1) - 1];
}
double mean(const std::vector<double>& v) {
  double s = 0;
  for (const double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

int run(std::span<char* const> argv, int rank, int ranks) {
  std::vector<std::string_view> flags(std::begin(kScenarioFlags), std::end(kScenarioFlags));
  flags.insert(flags.end(), {"--algo", "--scenario", "--frames", "--owners", "--compare", "--verify", "--per-frame"});
  std::string error;
  const auto args = Args::parse(argv, flags, error);
  const auto say = [&](int status, const std::string& message) {
    if (rank == 0) std::fprintf(stderr, "sapling-mpi: %s\n", message.c_str());
    return status;
  };
  if (!args) return say(kExitUsage, "run: " + error + "\n" + std::string(kUsage));
  if (args->help()) {
    if (rank == 0) std::fputs(kUsage.data(), stdout);
    return kExitOk;
  }
  const std::string algo(args->get("--algo").value_or("auto"));
  ScenarioParams params;
  params.name = args->get("--scenario").value_or("tracy");
  if (!is_scenario(params.name)) return say(kExitUsage, unknown_scenario(params.name));
  if (params.name != "small") params.n = 100000;
  if (!apply_scenario_options(*args, params, error)) return say(kExitUsage, "run: " + error);
  std::uint64_t frames = 100;
  if (const auto text = args->get("--frames")) {
    if (!parse_uint("--frames", *text, std::numeric_limits<std::uint32_t>::max(), frames, error) || frames < 2)
      return say(kExitUsage, "run: --frames must be a number, at least 2");
  }
  const std::string owners(args->get("--owners").value_or("domain"));
  if (owners != "domain" && owners != "hashed") return say(kExitUsage, "run: --owners must be domain or hashed");
  const auto on = [&](std::string_view flag) {
    const std::string_view v = args->get(flag).value_or("off");
    return v == "on" || v == "1";
  };
  const bool compare = on("--compare"), verify = on("--verify");
  std::FILE* per_frame = nullptr;  // --per-frame FILE: a CSV line per frame, from rank 0
  if (const auto path = args->get("--per-frame"); path && rank == 0) {
    per_frame = std::fopen(std::string(*path).c_str(), "w");
    if (per_frame == nullptr) return say(kExitUsage, "run: cannot write " + std::string(*path));
    std::fputs("frame,ms,bytes,imbalance,redrawn,handed_over\n", per_frame);
  }

  const auto scenario = make_scenario(params, &error);
  if (!scenario) return say(kExitUsage, "run: " + error);
  Options options;
  options.dims = scenario->dims();
  Status why;
  const auto dist = mpi::DistributedBroadPhase::create(MPI_COMM_WORLD, algo, options, &why);
  if (dist == nullptr) return say(kExitUsage, "run: " + why.message());
  std::unique_ptr<BroadPhase> single;
  if (rank == 0 && (compare || verify)) single = BroadPhase::create(algo, options);

  // With --owners domain the domains are drawn from frame 0's boxes (each
  // rank samples its ranks-th share) before any object is handed out.
  TraceFrame frame, share;  // the whole frame, and this rank's operations in it
  fill_frame(*scenario, frame);
  if (owners == "domain") {
    std::vector<Box3> sample;
    for (std::size_t k = static_cast<std::size_t>(rank); k < frame.added_boxes.size();
         k += static_cast<std::size_t>(ranks))
      sample.push_back(frame.added_boxes[k]);
    dist->plan_domains(sample);
  }
  std::vector<std::int32_t> owner;  // by id
  std::vector<Id> hand_ids;
  std::vector<int> hand_to;
  const auto owner_of = [&](Id id, const Box3& b) -> int {
    if (owners == "hashed") return static_cast<int>((id * 2654435761u) % static_cast<unsigned>(ranks));
    return dist->domain_rank(b);
  };

  using Clock = std::chrono::steady_clock;
  std::vector<double> ms, own_ms, local_ms, single_ms, bytes, held, imbalance;
  std::vector<Pair> created, deleted;
  bool same = true;
  for (std::uint64_t f = 0; f < frames; ++f) {
    if (f > 0) {
      scenario->step();
      fill_frame(*scenario, frame);
    }
    for (std::size_t k = 0; k < frame.added.size(); ++k) {
      if (frame.added[k] >= owner.size()) owner.resize(std::size_t{frame.added[k]} + 1, -1);
      owner[frame.added[k]] = static_cast<std::int32_t>(owner_of(frame.added[k], frame.added_boxes[k]));
    }
    mpi::share_of(
        frame, [&](Id id) { return owner[id] == rank; }, share);
    // With --owners domain, an object a move carries into another domain
    // is handed to that domain's rank (every rank decides the same).
    hand_ids.clear(), hand_to.clear();
    if (owners == "domain") {
      for (std::size_t k = 0; k < frame.moved.size(); ++k) {
        const Id id = frame.moved[k];
        const int home = dist->domain_rank(frame.moved_boxes[k]);
        if (home == owner[id]) continue;
        if (owner[id] == rank) hand_ids.push_back(id), hand_to.push_back(home);
        owner[id] = home;
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    const Clock::time_point start = Clock::now();
    if (Status s = mpi::stage_frame(*dist, share); !s || !(s = dist->hand_over(hand_ids, hand_to)))
      return say(kExitTraceError, "run: frame " + std::to_string(f) + ": " + s.message());
    const FrameDelta& delta = dist->update();
    if (!delta.status) return say(kExitTraceError, "run: frame " + std::to_string(f) + ": " + delta.status.message());
    const double mine = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    double slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    const double sent = static_cast<double>(dist->stats().bytes_sent);
    double total_sent = 0;
    MPI_Reduce(&sent, &total_sent, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (verify) dist->gather(0, created, deleted);
    if (single != nullptr) {
      const Clock::time_point single_start = Clock::now();
      if (Status s = stage_frame(*single, frame); !s) return say(kExitTraceError, "run: " + s.message());
      const FrameDelta& expected = single->update();
      if (f > 0) single_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - single_start).count());
      if (verify && (!std::equal(created.begin(), created.end(), expected.created.begin(), expected.created.end()) ||
                     !std::equal(deleted.begin(), deleted.end(), expected.deleted.begin(), expected.deleted.end()))) {
        std::fprintf(stderr, "sapling-mpi: frame %llu: the gathered delta differs from BroadPhase's\n",
                     static_cast<unsigned long long>(f));
        same = false;
      }
    }
    if (per_frame != nullptr)
      std::fprintf(per_frame, "%llu,%.4f,%.0f,%.4f,%d,%zu\n", static_cast<unsigned long long>(f), slowest, total_sent,
                   dist->stats().imbalance(), dist->stats().redrawn ? 1 : 0, dist->stats().handed_over);
    if (f == 0) continue;
    ms.push_back(slowest);
    own_ms.push_back(mine);
    local_ms.push_back(dist->stats().local_seconds * 1e3);
    bytes.push_back(total_sent);
    held.push_back(static_cast<double>(dist->stats().held));
    imbalance.push_back(dist->stats().imbalance());
  }
  if (per_frame != nullptr) std::fclose(per_frame);
  int all_same = same ? 1 : 0, agreed = 0;
  MPI_Allreduce(&all_same, &agreed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

  // Per rank: update time, what it holds and owns, and its ghosts (held
  // boxes whose centre lies in another domain), from the final frame.
  std::size_t ghosts = 0;
  for (const Id id : scenario->alive_ids()) {
    const Box3& b = scenario->boxes()[id];
    if (dist->domain_rank(b) != rank && [&] {
          const Box3 d = dist->domain(rank);
          for (int k = 0; k < 3; ++k)
            if (!(b.max[k] >= d.min[k] && (b.min[k] < d.max[k] || d.max[k] == std::numeric_limits<float>::infinity())))
              return false;
          return true;
        }())
      ++ghosts;
  }
  constexpr int kColumns = 7;
  const double rank_row[kColumns] = {percentile(own_ms, 0.5),
                                     percentile(local_ms, 0.5),
                                     percentile(held, 0.5),
                                     percentile(held, 1.0),
                                     static_cast<double>(dist->size()),
                                     static_cast<double>(ghosts),
                                     static_cast<double>(dist->memory_bytes())};
  std::vector<double> rows(static_cast<std::size_t>(ranks) * kColumns);
  MPI_Gather(rank_row, kColumns, MPI_DOUBLE, rows.data(), kColumns, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("sapling-mpi run: %s %s, %d rank%s, algorithm %s (rank 0 runs %s), owners %s, %llu frames\n",
                params.name.c_str(), describe_params(scenario->params()).c_str(), ranks, ranks == 1 ? "" : "s",
                algo.c_str(), std::string(dist->algorithm_name()).c_str(), owners.c_str(),
                static_cast<unsigned long long>(frames));
    std::printf("  frame (slowest rank, frames 1-%llu)  median %.3f ms, p95 %.3f ms, max %.3f ms, mean %.3f ms\n",
                static_cast<unsigned long long>(frames - 1), percentile(ms, 0.5), percentile(ms, 0.95),
                percentile(ms, 1.0), mean(ms));
    if (!single_ms.empty()) {
      std::printf("  BroadPhase (same frames, rank 0)   median %.3f ms, p95 %.3f ms, max %.3f ms, mean %.3f ms\n",
                  percentile(single_ms, 0.5), percentile(single_ms, 0.95), percentile(single_ms, 1.0), mean(single_ms));
      std::printf("  distributed / BroadPhase           median %.3f, mean %.3f\n",
                  percentile(ms, 0.5) / percentile(single_ms, 0.5), mean(ms) / mean(single_ms));
    }
    std::printf("  bytes sent per frame (all ranks)   median %.0f, max %.0f\n", percentile(bytes, 0.5),
                percentile(bytes, 1.0));
    std::printf("  load imbalance (max held / mean)   median %.3f, max %.3f\n", percentile(imbalance, 0.5),
                percentile(imbalance, 1.0));
    std::printf(
        "  rank  frame ms  local ms  held       held max   owned      ghosts     memory MiB\n"
        "        (medians over frames; local: in its BroadPhase; held: boxes its domain holds; owned, ghosts and "
        "memory: at the last frame)\n");
    for (int r = 0; r < ranks; ++r) {
      const double* row = &rows[static_cast<std::size_t>(r) * kColumns];
      std::printf("  %-4d  %-8.3f  %-8.3f  %-9.0f  %-9.0f  %-9.0f  %-9.0f  %.1f\n", r, row[0], row[1], row[2], row[3],
                  row[4], row[5], row[6] / (1024.0 * 1024.0));
    }
    if (verify) std::printf("  verified: %s\n", agreed ? "every frame's delta is BroadPhase's" : "MISMATCH");
  }
  return agreed ? kExitOk : kExitWrongPairs;
}

}  // namespace
}  // namespace sapling::cli

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = sapling::cli::kExitUsage;
  if (argc >= 2 && std::string_view(argv[1]) == "run") {
    status = sapling::cli::run(std::span<char* const>(argv + 2, static_cast<std::size_t>(argc - 2)), rank, ranks);
  } else {
    const bool help = argc >= 2 && std::string_view(argv[1]) == "help";
    if (rank == 0) std::fputs(sapling::cli::kUsage.data(), help ? stdout : stderr);
    if (help) status = sapling::cli::kExitOk;
  }
  MPI_Finalize();
  return status;
}
