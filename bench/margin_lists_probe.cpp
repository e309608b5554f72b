// A probe of another design for many movers, measured against sap in the
// same process (docs/algorithms/sap.md, "Where the time goes at a million"):
// persistent candidate lists from fattened boxes, the Verlet neighbour lists
// of molecular dynamics made exact. Each object keeps a fat box (its box
// grown by MARGIN times its extent once it has moved; static objects keep
// their box) in a uniform grid of CELL-extent cells, and a list of every
// object whose fat box overlaps its own, each with a flag: whether their
// boxes overlap now. Two boxes can overlap only while their fat boxes do, so
// a move inside the fat box tests the list alone; a move out of it
// re-fattens the box and queries the grid for a new list. The frame's cost
// is then the movers' lists plus the re-fattened boxes' queries, nothing
// proportional to the world.
//
//   margin_lists_probe N FRAMES [MARGIN CELL]   (tracy, 10% moving, 0.5% churn)
//
// Every frame's pair count is compared with sap's, and the last frame's
// pair set too. This is a measurement, not a contender: the lists are
// plain vectors per object and the grid a dense array of vectors.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "sapling/broad_phase.hpp"
#include "scenarios/scenario.hpp"

namespace {

using namespace sapling;

bool overlap(const Box3& a, const Box3& b) {
  for (int k = 0; k < 3; ++k) {
    if (a.max[k] < b.min[k] || b.max[k] < a.min[k]) return false;
  }
  return true;
}

bool contains(const Box3& outer, const Box3& inner) {
  for (int k = 0; k < 3; ++k) {
    if (inner.min[k] < outer.min[k] || outer.max[k] < inner.max[k]) return false;
  }
  return true;
}

constexpr std::uint32_t kOverlaps = 0x80000000u, kIdBits = 0x7fffffffu;

class MarginLists {
 public:
  MarginLists(float margin, float cell, float world) : margin_(margin), cell_(cell) {
    per_axis_ = static_cast<int>(std::ceil(world / cell)) + 1;
    grid_.resize(std::size_t(per_axis_) * per_axis_ * per_axis_);
  }

  std::int64_t pairs() const { return pairs_; }

  void frame(const Scenario& s) {
    const std::span<const Box3> boxes = s.boxes();
    grow(s.capacity());
    for (const Id r : s.removed()) {
      for (const std::uint32_t e : lists_[r]) {
        drop(e & kIdBits, r);
        pairs_ -= (e & kOverlaps) != 0;
      }
      lists_[r].clear();
      grid_erase(r);
    }
    // Every new box first, so that each test below sees both boxes' new bounds.
    refatten_.clear();
    ++stamp_;
    for (const Id a : s.moved()) {
      box_[a] = boxes[a];
      if (!contains(fat_[a], box_[a])) {
        refatten_.push_back(a);
        seen_[a] = stamp_;
      }
    }
    const std::uint32_t refattened = stamp_;
    for (const Id a : s.moved()) {
      if (seen_[a] == refattened) continue;
      for (std::uint32_t& e : lists_[a]) {
        const std::uint32_t b = e & kIdBits;
        const bool now = overlap(box_[a], box_[b]), was = (e & kOverlaps) != 0;
        if (now == was) continue;
        pairs_ += now ? 1 : -1;
        e = b | (now ? kOverlaps : 0);
        set_flag(b, a, now);
      }
    }
    tested_at_ = std::chrono::steady_clock::now();
    for (const Id a : refatten_) {
      grid_erase(a);
      fat_[a] = fatten(box_[a]);
      grid_insert(a);
      requery(a);
    }
    for (const Id a : s.added()) {
      box_[a] = fat_[a] = boxes[a];
      grid_insert(a);
      requery(a);
    }
  }

  std::vector<Pair> pair_set() const {
    std::vector<Pair> out;
    for (std::uint32_t a = 0; a < lists_.size(); ++a) {
      for (const std::uint32_t e : lists_[a]) {
        if ((e & kOverlaps) != 0 && a < (e & kIdBits)) out.push_back(Pair{a, e & kIdBits});
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::size_t refattened() const { return refatten_.size(); }
  /// When the frame's removals and list tests were done (the rest is the re-fattened boxes and the additions).
  std::chrono::steady_clock::time_point tested_at() const { return tested_at_; }

 private:
  void grow(std::size_t n) {
    if (box_.size() >= n) return;
    box_.resize(n), fat_.resize(n), lists_.resize(n), seen_.resize(n, 0);
  }
  int cell_of(float x) const { return std::clamp(static_cast<int>(std::floor(x / cell_)), 0, per_axis_ - 1); }
  template <class Visit>
  void cells(const Box3& b, Visit&& visit) {
    for (int z = cell_of(b.min[2]); z <= cell_of(b.max[2]); ++z)
      for (int y = cell_of(b.min[1]); y <= cell_of(b.max[1]); ++y)
        for (int x = cell_of(b.min[0]); x <= cell_of(b.max[0]); ++x)
          visit(grid_[(std::size_t(z) * per_axis_ + y) * per_axis_ + x]);
  }
  void grid_insert(std::uint32_t a) {
    cells(fat_[a], [&](std::vector<std::uint32_t>& c) { c.push_back(a); });
  }
  void grid_erase(std::uint32_t a) {
    cells(fat_[a], [&](std::vector<std::uint32_t>& c) {
      *std::find(c.begin(), c.end(), a) = c.back();
      c.pop_back();
    });
  }
  // Removes a from b's list.
  void drop(std::uint32_t b, std::uint32_t a) {
    std::vector<std::uint32_t>& list = lists_[b];
    *std::find_if(list.begin(), list.end(), [a](std::uint32_t e) { return (e & kIdBits) == a; }) = list.back();
    list.pop_back();
  }
  void set_flag(std::uint32_t b, std::uint32_t a, bool on) {
    for (std::uint32_t& e : lists_[b]) {
      if ((e & kIdBits) == a) e = a | (on ? kOverlaps : 0);
    }
  }
  Box3 fatten(const Box3& b) const {
    Box3 f = b;
    for (int k = 0; k < 3; ++k) {
      const float m = margin_ * (b.max[k] - b.min[k]);
      f.min[k] -= m, f.max[k] += m;
    }
    return f;
  }
  // a's list anew from the grid: kept entries re-tested, lost ones dropped
  // from both lists, new ones added to both.
  void requery(std::uint32_t a) {
    const std::uint32_t visited = ++stamp_;
    found_.clear();
    seen_[a] = visited;
    cells(fat_[a], [&](std::vector<std::uint32_t>& c) {
      for (const std::uint32_t b : c) {
        if (seen_[b] == visited) continue;
        seen_[b] = visited;
        if (overlap(fat_[a], fat_[b])) found_.push_back(b);
      }
    });
    const std::uint32_t candidate = ++stamp_;
    for (const std::uint32_t b : found_) seen_[b] = candidate;
    std::vector<std::uint32_t>& list = lists_[a];
    std::size_t kept = 0;
    for (const std::uint32_t e : list) {
      const std::uint32_t b = e & kIdBits;
      const bool was = (e & kOverlaps) != 0;
      if (seen_[b] != candidate) {
        pairs_ -= was;
        drop(b, a);
        continue;
      }
      seen_[b] = visited;  // listed already
      const bool now = overlap(box_[a], box_[b]);
      if (now != was) pairs_ += now ? 1 : -1, set_flag(b, a, now);
      list[kept++] = b | (now ? kOverlaps : 0);
    }
    list.resize(kept);
    for (const std::uint32_t b : found_) {
      if (seen_[b] != candidate) continue;
      const bool now = overlap(box_[a], box_[b]);
      pairs_ += now;
      list.push_back(b | (now ? kOverlaps : 0));
      lists_[b].push_back(a | (now ? kOverlaps : 0));
    }
  }

  float margin_, cell_;
  int per_axis_ = 1;
  std::vector<std::vector<std::uint32_t>> grid_, lists_;
  std::vector<Box3> box_, fat_;
  std::vector<std::uint32_t> seen_, found_, refatten_;
  std::uint32_t stamp_ = 0;
  std::int64_t pairs_ = 0;
  std::chrono::steady_clock::time_point tested_at_;
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * double(v.size() - 1))];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s N FRAMES [MARGIN CELL]\n", argv[0]);
    return 1;
  }
  ScenarioParams params;
  params.name = "tracy";
  params.n = std::strtoull(argv[1], nullptr, 10);
  const int frames = std::atoi(argv[2]);
  const float margin = argc > 3 ? std::strtof(argv[3], nullptr) : 0.5f;
  const float cell_extents = argc > 4 ? std::strtof(argv[4], nullptr) : 2.0f;
  const std::unique_ptr<Scenario> scenario = make_scenario(params);
  if (!scenario) return 1;
  const Box3& first = scenario->boxes()[0];
  MarginLists lists(margin, cell_extents * (first.max[0] - first.min[0]), scenario->world()->max[0]);
  std::unique_ptr<BroadPhase> sap = BroadPhase::create("sap");
  std::vector<double> sap_ms, lists_ms;
  double refattened = 0, tests_ms = 0;
  using Clock = std::chrono::steady_clock;
  for (int f = 0; f < frames; ++f) {
    if (f > 0) scenario->step();
    const TraceFrame frame = scenario_frame(*scenario);
    for (int turn = 0; turn < 2; ++turn) {  // the order alternates by frame
      if ((turn + f) % 2 == 0) {
        const auto start = Clock::now();
        if (!sap->remove(frame.removed) || !sap->move(frame.moved, frame.moved_boxes) ||
            !sap->add(frame.added, frame.added_boxes)) {
          return 1;
        }
        sap->update();
        if (f > 0) sap_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      } else {
        const auto start = Clock::now();
        lists.frame(*scenario);
        if (f > 0) lists_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
        if (f > 0) refattened += double(lists.refattened());
        if (f > 0) tests_ms += std::chrono::duration<double, std::milli>(lists.tested_at() - start).count();
      }
    }
    if (lists.pairs() != static_cast<std::int64_t>(sap->pairs().size())) {
      std::fprintf(stderr, "frame %d: %lld pairs, sap %zu\n", f, static_cast<long long>(lists.pairs()),
                   sap->pairs().size());
      return 4;
    }
  }
  std::vector<Pair> expected(sap->pairs().begin(), sap->pairs().end());
  std::sort(expected.begin(), expected.end());
  if (lists.pair_set() != expected) {
    std::fprintf(stderr, "the last frame's pair sets differ\n");
    return 4;
  }
  std::printf(
      "tracy n=%s, %d frames, margin %.2f, cell %.1f extents: %.0f boxes re-fattened per frame; removals and list "
      "tests %.3f ms per frame (mean), the re-fattened boxes and additions the rest\n",
      argv[1], frames, double(margin), double(cell_extents), refattened / double(frames - 1),
      tests_ms / double(frames - 1));
  std::printf("| contender | median ms | p95 ms | max ms |\n|---|---:|---:|---:|\n");
  std::printf("| sap | %.3f | %.3f | %.3f |\n", quantile(sap_ms, 0.5), quantile(sap_ms, 0.95), quantile(sap_ms, 1.0));
  std::printf("| margin lists | %.3f | %.3f | %.3f |\n", quantile(lists_ms, 0.5), quantile(lists_ms, 0.95),
              quantile(lists_ms, 1.0));
  return 0;
}
