// unisize: the bi-dimensional sweep and prune for boxes of one size of
// Capannini and Larsson, "Output Sensitive Collision Detection for Unisize
// Boxes" (SIGRAD 2016), Algorithm 1 (section 3), with the paper's names:
//   Sort(P)  a stable LSD radix sort of an axis' 2n endpoints that returns
//            indices, lows before highs on equal keys (Claim 1);
//   R        the rank array: R[p] and R[p + n] are the positions of object
//            p's low and high endpoint in the sorted first axis;
//   S        the set of active ranks while the second axis is swept: a
//            succinct 64-ary bit tree (bit_tree.hpp); the range query of
//            line 9 reads only the words between R[p] and R[p + n] that
//            hold values, found through the levels above.
// Claim 1: because every interval has the same length, no interval contains
// another in the sorted order, so b overlaps a on the first axis iff exactly
// one of b's endpoint ranks lies strictly between a's; every active rank in
// that range is therefore a collision and none is reported twice. Lines
// 7-10 insert R[p] and R[p + n] into S and report S's values between them;
// line 12 takes them out again at p's high.
//
// Beyond the paper (each explained where it is done):
// - strips: the x-sorted boxes are cut into strips of 16k boxes, and
//   Algorithm 1 runs per strip with local ranks, its arrays in cache; with
//   a task system of more than one thread, tasks of consecutive strips run
//   in parallel (measured 1.4x on this 2-vCPU machine with 2 threads, 2^19
//   squares, `sapling run --threads 2`), their pairs reported in strip
//   order, so the output does not depend on the thread count;
// - S without the paper's linked list. The paper links S's values in order
//   so that a range query walks them at O(1) each. Here the query reads
//   the range's words of level 0 that hold values, found through level 1
//   (and above, recursively), and reports each bit by count-trailing-zeros:
//   O(log64 u) per word that holds a reported value, O(1) per further
//   value in it. Nearly every value in the range is reported (Claim 1,
//   and line 12 keeps S to the active ranks but for a few, below), so this
//   is output-sensitive too, and the list's upkeep goes: the predecessor
//   search on every insertion and the relinking on every deletion.
//   Measured: the sweep 30% faster, the one-shot frame 13% (2^17 squares,
//   d = 0.2 and 0.8), against the linked tree with lazy deletion of the
//   previous version;
// - line 12 without a merge of lows and highs on y: highs come in the
//   order of lows (the size rule), so objects leave S in the order they
//   entered. Before each low one object leaves if its high is below the
//   low, without a branch, and every 64 lows the rest catch up in a loop;
//   the few gone objects left in S meanwhile are told apart in the query
//   by their high (6-7% off the one-shot frame, against a loop before
//   every low, whose exit the predictor missed every other time);
// - no unpredictable branches in the other hot loops: the rank merge
//   (lines 2-3) selects by masks and runs as two interleaved merges split
//   at a merge-path diagonal; S's updates run through every level without
//   early exits, at a depth fixed at compile time (BitTree::Fixed<L>);
//   pairs go to a buffer and count only if they are pairs;
// - Sort(P) sorts the lows only (the highs follow, see below): once on x
//   for all boxes, and per strip on y;
// - persistence by PairManager::assign (a bulk sort and merge of the
//   frame's pairs), as box-pruning's recompute adapter does;
// - UnisizePruner checks its input rule while the sweep first reads the
//   boxes (one pass over them), and names the first offender only after.
//
// Cost per frame: O(n) for the radix sorts and the merges, O(n log64 n)
// for the updates of S, O((n + |C|) log64 n) for the range queries, where
// |C| is the number of colliding pairs (in practice O(1) per pair: values
// of S sit together in words): O((n + |C|) log64 n) in 2D, with strips of
// 16k boxes making log64 n three. In 3D the two sweep axes
// are the two along which the boxes spread most (in units of the box size)
// and the third is tested per candidate (section 7): exact, fast when the
// world is flat along that axis, without the 2D bound otherwise. When every
// box overlaps every other on the third axis (a 2D scene, or cubes resting
// on one plane) the test is skipped.
//
// What "one size" means here, exactly. The first box added while none is
// live fixes the size: on each axis its extent max - min, which must be a
// float exactly (it is unless the box straddles zero with bounds of very
// different magnitudes). A box then fits iff on every axis
//   max == min + size   in float arithmetic (round to nearest),
// and all coordinates are finite. Every exact translate of the first box
// fits, and so does every box a program builds as {p, p + size} in float,
// however p + size rounds. Under that rule max is a non-decreasing function
// of min on each axis, which is all the sweep needs: sorting the lows by
// (key, position) also sorts the highs, with equal highs in their lows'
// order, so Sort(P) radix-sorts the n lows and merges in the n highs, whose
// keys follow from the lows' (float_key(key_float(k) + size)). On exact
// translates this is the paper's order (equal highs have equal lows, so
// their order is the object order). The paper's plain tie rule would not be
// enough for rounded translates: two boxes whose lows differ but whose highs
// round to the same float would nest, and Claim 1 would fail for them.
// Other boxes are refused by accepts() with kUnsupported. The size stays
// fixed while any box is live at the start of a frame (removing every box
// and adding boxes of another size in the same frame is refused); once a
// frame ends with no box live, the first box added fixes it anew. accepts()
// sees a batch only once the broad phase has accepted all of it, and
// records nothing: a refused batch leaves nothing. Choose unisize for many boxes of one size, flat worlds
// above all (crowds, particles, tiles); dual-axis for any boxes.
//
// Persistence: each frame with operations sweeps all live boxes (a one-shot
// method) whose members carry their ids, so pairs come out as ids, and hands
// the frame's pairs to PairManager::assign, which sorts them and merges them
// with the previous set (no hash probe per pair). Limits: fewer than
// 2^31 - 1 live boxes (2n ranks in 32 bits). The sweep alone, with no
// persistence, is the public UnisizePruner (sapling/unisize.hpp), defined at
// the end of this file.
//
// When to choose it, and what it costs here (one thread, 2-vCPU AMD EPYC
// shared with other work: figures move 5-10% between runs;
// bench/results/unisize-table1-2026-11-22b.md, all seven contenders, and
// unisize-table1-sapling-2026-11-22.md, the sapling ones over more frames):
// - the paper's Table 1 (2^17..2^20 squares, density 0.2..0.8): the sweep
//   alone (unisize-oneshot) takes 5.1..6.6 ms at 2^17 and 44..58 ms at
//   2^20, nearly flat in the density (the paper: 17..18 and 215..220 ms;
//   CGAL here 21..59x slower, 36..59x at 2^20); the persistent algorithm
//   6.3..9.1 and 54..78 ms. Against our box-pruning, whose grid makes it
//   output-sensitive in 2D too (not the single-axis box pruning of
//   Terdiman's that takes 400..700 ms at 2^20): persistent against
//   persistent 1.04..1.66x as fast on every cell of both runs (1.04..1.12x
//   at density 0.2, 1.11..1.19x at 0.4, 1.14..1.29x above but for 1.66x
//   at 2^20, d = 0.8, in the first); one-shot
//   against one-shot 0.96..1.06x at density 0.2, 0.98..1.16x at 0.4 and
//   1.10..1.28x above;
// - the paper's Figure 4 (100k cubes converging on a plane, 500 frames, up
//   to 1.66M pairs; cluster-2026-11-22b.md): the sweep's median frame
//   4.2 ms, mean 5.6, worst 18.0 (the paper: 13.2, 13.5, 17.5); the
//   persistent algorithm's median 5.2 ms, mean 11.6, the mean being the
//   frames at the peak, where a million pairs start or stop;
// - where the time goes (2^17, density 0.2, one-shot): the sweep of S 51%,
//   making and sorting the members on x 23%, the strips' y sorts 12%, the
//   rank merge 10%, gathering the sweep's items 4%. Tried without gain:
//   masked (branch-free) reports of the first value of each word of a
//   query, a counting sort into bins of x before sorting each bin in
//   cache, strips of 1k..8k boxes; with the linked tree of the previous
//   version, masked walk steps and S's top word held in a register.
// So: unisize for many boxes of one size with many overlaps (dense crowds,
// particles, tiles; flat worlds above all), where its time stays flat while
// candidates multiply for sweeps on one axis; box-pruning for sparse scenes
// and boxes of mixed sizes.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "algorithms/bit_tree.hpp"
#include "algorithms/builtin.hpp"
#include "algorithms/scratch_pool.hpp"
#include "detail/axis_sampler.hpp"
#include "detail/radix_sort.hpp"
#include "detail/slot_map.hpp"
#include "detail/task_plan.hpp"
#include "sapling/float_key.hpp"
#include "sapling/task_system.hpp"
#include "sapling/unisize.hpp"

namespace sapling::builtin {
namespace {

using Extent = std::array<float, 3>;

bool finite(const Box3& b) {
  for (int k = 0; k < 3; ++k) {
    if (!std::isfinite(b.min[k]) || !std::isfinite(b.max[k])) return false;
  }
  return true;
}

// The size rule: max == min + size on every axis, in float arithmetic.
bool fits(const Box3& b, const Extent& size) {
  for (int k = 0; k < 3; ++k) {
    if (!(b.max[k] == b.min[k] + size[k])) return false;
  }
  return true;
}

// fits() and finite() together, every condition evaluated (no branch per
// axis): a finite max equal to min + size (size finite) implies a finite min.
bool fits_finite(const Box3& b, const Extent& size) {
  int good = 1;
  for (int k = 0; k < 3; ++k) {
    good &= int(b.max[k] == b.min[k] + size[k]) & int(std::fabs(b.max[k]) <= std::numeric_limits<float>::max());
  }
  return good != 0;
}

// The extent max - min of a box with finite bounds, if it is a float
// exactly: Knuth's TwoSum in double gives the rounding error of the
// difference, which must be zero, and the double must be a float.
bool exact_extent(const Box3& b, Extent& out) {
  for (int k = 0; k < 3; ++k) {
    const double hi = b.max[k], lo = -double(b.min[k]);
    const double s = hi + lo;
    const double lo_part = s - hi;
    const double error = (hi - (s - lo_part)) + (lo - lo_part);
    const auto e = static_cast<float>(s);
    if (error != 0 || double(e) != s) return false;
    out[k] = e;
  }
  return true;
}

// The key of max from the key of min under the size rule.
inline std::uint32_t high_key(std::uint32_t low_key, float size) { return float_key(key_float(low_key) + size); }

// Radix sorts of 32-bit keys: 11-bit digits (the counts of a pass fit in L1).
constexpr detail::RadixDigits kDigits{11, 3};
using RadixCounts = std::array<std::uint32_t, kDigits.counts()>;

// The three roles of the axes: x is ranked (the paper's first axis), y is
// swept (its second axis), t is tested per candidate unless flat.
using Axes = detail::AxisRoles;

// Algorithm 1 over the live boxes, one frame. Objects are named by slot.
//
// The ranks of the whole frame would spread S, R and the rank-to-object map
// over tens of megabytes, and every range query would miss the cache
// (measured: 200 ms of a 2^20-box frame went to those misses). So the boxes,
// sorted along x, are cut into strips of consecutive boxes, and
// Algorithm 1 runs on each strip with ranks local to it, its arrays in
// cache. A strip also holds the boxes before it that reach its first low
// ("straddlers"; with one size they are consecutive too), and reports a pair
// only if one of its boxes is its own: a pair belongs to the strip of its
// later box in x order, which holds the earlier one as well.
class UnisizeSweep {
 public:
  // Reports every overlapping pair of the boxes of `live` once, as
  // report(name, name): names[slot], or the slot if `names` is empty. With
  // `check`, first checks the input rule (fits_finite) while it reads the
  // boxes, and reports nothing and returns false if a box breaks it.
  template <class Report>
  bool run(std::span<const Box3> boxes, std::span<const Slot> live, std::span<const Id> names, const Extent& size,
           bool check, Report&& report) {
    const auto n = static_cast<std::uint32_t>(live.size());
    if (n < 2) return n == 0 || !check || fits_finite(boxes[live[0]], size);
    const Axes axes = choose_axes(boxes, live, size);
    size_x_ = size[axes.x];
    size_y_ = size[axes.y];
    size_t_ = size[axes.t];

    // Each box as a member (its lows' keys on x and y, its low on t), then
    // line 1, Ix <- Sort(Px), for the lows (strips are runs of it), and the
    // highs' keys on x and y from the lows' (the size rule), once for every
    // member rather than once per strip and per merge step.
    members_.resize(n);
    x_high_.resize(n);
    tags_.resize(n);
    float t_lo = std::numeric_limits<float>::infinity(), t_hi = -t_lo;
    bool good = true;
    for (std::uint32_t i = 0; i < n; ++i) {
      const Slot s = live[i];
      const Box3& b = boxes[s];
      if (check) good &= fits_finite(b, size);  // all conditions evaluated, no branch per box
      members_[i] =
          Member{float_key(b.min[axes.x]), float_key(b.min[axes.y]), names.empty() ? s : names[s], b.min[axes.t]};
      t_lo = std::min(t_lo, b.min[axes.t]);
      t_hi = std::max(t_hi, b.min[axes.t]);
    }
    if (!good) return false;
    RadixCounts counts;
    detail::radix_sort(
        members_, member_scratch_, [](const Member& m) { return m.x_key; }, kDigits, counts.data());
    for (std::uint32_t i = 0; i < n; ++i) {
      x_high_[i] = high_key(members_[i].x_key, size_x_);
      tags_[i] = (std::uint64_t{high_key(members_[i].y_key, size_y_)} << 32) | members_[i].name;
    }
    // Every pair overlaps on t iff the highest low is not above the lowest high.
    const bool flat = t_hi <= t_lo + size_t_;

    // The strips, then buffers and S sized once for the largest (the same
    // depth of S for every strip: one instantiation of the sweep).
    strips_.clear();
    std::uint32_t first = 0, largest = 0;
    for (std::uint32_t own = 0, end = 0; own < n; own = end) {
      const std::uint32_t cut = members_[own].x_key;
      while (x_high_[first] < cut) ++first;
      end = n - own > strip_members_ ? own + strip_members_ : n;
      strips_.push_back(Strip{first, own, end});
      largest = std::max(largest, end - first);
    }
    largest_ = largest;
    switch (BitTree::levels_for(2 * largest)) {
      case 1:
        sweep<1>(flat, report);
        break;
      case 2:
        sweep<2>(flat, report);
        break;
      case 3:
        sweep<3>(flat, report);
        break;
      case 4:
        sweep<4>(flat, report);
        break;
      case 5:
        sweep<5>(flat, report);
        break;
      default:
        sweep<6>(flat, report);  // 64^6 > 2^32
    }
    return true;
  }

  /// Strips run in parallel on `tasks` (null: on the calling thread).
  void set_tasks(TaskSystem* tasks) { tasks_ = tasks; }
  /// Own boxes per strip (tests: many strips and straddlers in small inputs).
  void set_strip_members(std::uint32_t members) { strip_members_ = std::max<std::uint32_t>(1, members); }

  bool validate() const {
    bool valid = true;
    arrays_.for_each([&](const StripArrays& w) { valid = valid && w.tree.validate(); });
    return valid;
  }

  std::size_t memory_bytes() const {
    std::size_t bytes = (members_.capacity() + member_scratch_.capacity()) * sizeof(Member) +
                        x_high_.capacity() * sizeof(std::uint32_t) + tags_.capacity() * sizeof(std::uint64_t) +
                        strips_.capacity() * sizeof(Strip) + plan_.memory_bytes();
    for (const PairBuffer& buffer : task_pairs_) bytes += buffer.pairs.capacity() * sizeof(std::uint64_t);
    arrays_.for_each([&](const StripArrays& w) { bytes += w.memory_bytes(); });
    return bytes;
  }

 private:
  // Own boxes per strip (and its straddlers besides): 2 * 16k ranks, S of
  // three levels, the strip's arrays about 1 MB. Measured on the paper's
  // scenes against strips of 4k and 8k, and of 2k where few boxes straddle:
  // as fast at 2^17 boxes, up to 5% faster at 2^18 and 2^19, 3..10% at 2^20
  // (fewer straddlers, each copied into two strips).
  static constexpr std::uint32_t kStripMembers = 16384;
  std::uint32_t strip_members_ = kStripMembers;  // tests make it small
  struct Strip {
    std::uint32_t first, own, end;  // members [first, end), its own from `own`
  };
  struct Member {
    std::uint32_t x_key, y_key;  // keys of the lows
    std::uint32_t name;          // what pairs report: an id, or the slot
    float t_min;                 // the low on the third axis
  };
  // An object as the sweep sees it, in y order.
  struct SweepItem {
    std::uint32_t low, high;      // keys of its low and high on y
    std::uint32_t r_low, r_high;  // R[p], R[p + n]
    std::uint32_t name;
    std::uint32_t own;  // 1 if the strip's own, 0 for a straddler
  };
  static constexpr std::uint32_t kFoundBuffer = 1024;
  // Parallel sweeps: a task takes consecutive strips of about one strip's
  // members, and there are at most kMaxTasks.
  static constexpr std::uint32_t kMaxTasks = 256;
  // A task's pairs, (slot << 32 | slot), when tasks run in parallel.
  struct PairBuffer {
    std::vector<std::uint64_t> pairs;
    void operator()(Slot p, Slot q) { pairs.push_back((std::uint64_t{p} << 32) | q); }
    void clear() { pairs.clear(); }
  };

  // What Algorithm 1 needs for one strip at a time: one set per task
  // running (ScratchPool).
  struct StripArrays {
    std::vector<std::uint32_t> x_low;               // the strip's keys of the lows on x, and a sentinel
    std::vector<std::uint32_t> ranks;               // R: R[p] at 2p, R[p + n] at 2p + 1, by local object
    std::vector<std::uint64_t> rank_info;           // by local rank: (own << 32 | name)
    std::vector<float> rank_t;                      // by local rank: the object's low on t (3D only)
    std::vector<std::uint32_t> rank_high;           // by local rank: the key of the object's high on y
    std::vector<std::uint64_t> y_items, y_scratch;  // the strip's lows on y: (key << 32 | local)
    std::vector<SweepItem> sweep_items;             // the strip's objects in y order
    std::vector<std::uint64_t> found;               // pairs found, (slot << 32 | slot), reported in batches
    BitTree tree;                                   // S

    // Sizes the arrays for strips of up to `largest` members.
    void fit(std::uint32_t largest) {
      if (ranks.size() < std::size_t{2} * largest) {
        ranks.resize(std::size_t{2} * largest);
        rank_info.resize(std::size_t{2} * largest);
        x_low.resize(std::size_t{largest} + 1);
        rank_t.resize(std::size_t{2} * largest);
        rank_high.resize(std::size_t{2} * largest);
        y_items.resize(largest);
        y_scratch.resize(largest);
        sweep_items.resize(largest);
      }
      found.resize(kFoundBuffer + std::size_t{2} * largest);  // a full buffer and a query over all of S
      if (tree.universe() != 2 * largest) tree.reset(2 * largest);
    }

    std::size_t memory_bytes() const {
      return (x_low.capacity() + ranks.capacity() + rank_t.capacity() + rank_high.capacity()) * sizeof(std::uint32_t) +
             (rank_info.capacity() + y_items.capacity() + y_scratch.capacity() + found.capacity()) *
                 sizeof(std::uint64_t) +
             sweep_items.capacity() * sizeof(SweepItem) + tree.memory_bytes();
    }
  };

  // Lines 2-3, R[Ix[i]] <- i, for local objects [0, n): the highs come in
  // the lows' order (see the file comment), so the 2n sorted endpoints are a
  // merge of two sorted runs, lows first on equal keys. Each step's choice
  // is a coin toss, so the merge is branch-free, and it runs as two
  // independent merges of equal length (split at merge-path diagonals by
  // binary search), interleaved, so that one step's loads need not wait for
  // the previous step's. Writes R (ranks_: R[p] at 2p, R[p + n] at 2p + 1)
  // and, by rank, what a range query needs of the object: 1 << 32 if it is
  // the strip's own | its name.
  struct Way {
    std::uint32_t a, b;  // lows and highs taken
  };
  // The merge-path split: where the first d endpoints end on each run.
  static Way split(const std::uint32_t* xl, const std::uint32_t* xh, std::uint32_t n, std::uint32_t d) {
    std::uint32_t lo = d > n ? d - n : 0, hi = std::min(d, n);
    while (lo < hi) {
      const std::uint32_t mid = lo + (hi - lo) / 2;  // low mid before high d - 1 - mid?
      if (xl[mid] <= xh[d - 1 - mid]) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return {lo, d - lo};
  }
  // One step, with masks rather than conditions (the compiler would
  // branch). xl[n] is a sentinel above every high, so a run of lows that
  // is exhausted is never taken; b < n holds before every step (the last
  // high comes last).
  static inline void merge_step(Way& w, const std::uint32_t* xl, const std::uint32_t* xh, const std::uint64_t* tags,
                                std::uint32_t own_from, std::uint32_t* ranks, std::uint64_t* info,
                                std::uint32_t* high) {
    const std::uint32_t a = w.a, b = w.b;
    const std::uint32_t take_low = static_cast<std::uint32_t>(xl[a] <= xh[b]);
    const std::uint32_t mask = 0u - take_low;
    const std::uint32_t p = (a & mask) | (b & ~mask);
    ranks[2 * p + 1 - take_low] = a + b;
    info[a + b] = (std::uint64_t{p >= own_from} << 32) | static_cast<std::uint32_t>(tags[p]);
    high[a + b] = static_cast<std::uint32_t>(tags[p] >> 32);
    w.a = a + take_low;
    w.b = b + 1 - take_low;
  }
  static void rank(StripArrays& w, const Member* m, const std::uint32_t* xh, const std::uint64_t* tags, std::uint32_t n,
                   std::uint32_t own_from) {
    std::uint32_t* const ranks = w.ranks.data();
    std::uint64_t* const info = w.rank_info.data();
    std::uint32_t* const high = w.rank_high.data();
    std::uint32_t* const xl = w.x_low.data();
    for (std::uint32_t p = 0; p < n; ++p) xl[p] = m[p].x_key;
    xl[n] = ~std::uint32_t{0};  // above the key of every finite float
    const std::uint32_t total = 2 * n, length = total / 2;
    Way w0 = split(xl, xh, n, 0), w1 = split(xl, xh, n, length);
    for (std::uint32_t k = 0; k < length; ++k) {
      merge_step(w0, xl, xh, tags, own_from, ranks, info, high);
      merge_step(w1, xl, xh, tags, own_from, ranks, info, high);
    }
  }

  // Algorithm 1 on every strip, in tasks of consecutive strips of about
  // strip_members_ own members each; pairs in strip order (task_plan.hpp).
  template <int L, class Report>
  void sweep(bool flat, Report& report) {
    const auto strips = static_cast<std::uint32_t>(strips_.size());
    plan_.split(
        strips, members_.size(), [&](std::uint32_t s) { return strips_[s].own; }, strip_members_, kMaxTasks);
    detail::run_ordered(
        tasks_, plan_.size(), task_pairs_, report,
        [&](std::size_t t, auto& sink) {
          StripArrays& w = arrays_.take();
          w.fit(largest_);
          for (std::uint32_t s = plan_.first(t); s < plan_.end(t); ++s) sweep_strip<L>(flat, w, strips_[s], sink);
          arrays_.give(w);
        },
        [](std::span<const PairBuffer> buffers, Report& to) {
          for (const PairBuffer& buffer : buffers) {
            for (const std::uint64_t pair : buffer.pairs) to(static_cast<Slot>(pair >> 32), static_cast<Slot>(pair));
          }
        });
  }

  template <int L, class Report>
  void sweep_strip(bool flat, StripArrays& w, const Strip& st, Report& report) const {
    if (flat) {
      strip<false, L>(w, st.first, st.own, st.end, report);
    } else {
      strip<true, L>(w, st.first, st.own, st.end, report);
    }
  }

  // Algorithm 1 on members [first, end), reporting the pairs with a box in
  // [own, end). Local object p is member first + p. S has L levels.
  template <bool kTestT, int L, class Report>
  void strip(StripArrays& w, std::uint32_t first, std::uint32_t own, std::uint32_t end, Report& report) const {
    const Member* m = members_.data() + first;
    const std::uint32_t n = end - first, own_from = own - first;
    std::uint32_t* const ranks = w.ranks.data();
    const std::uint64_t* const info = w.rank_info.data();
    const std::uint64_t* const tags = tags_.data() + first;
    rank(w, m, x_high_.data() + first, tags, n, own_from);

    // Line 4: Iy <- Sort(Py), the lows only (the highs come in their order).
    for (std::uint32_t p = 0; p < n; ++p) w.y_items[p] = (std::uint64_t{m[p].y_key} << 32) | p;
    RadixCounts digit_counts;
    const std::uint64_t* const y_sorted = detail::radix_sort(
        w.y_items.data(), w.y_scratch.data(), n, [](std::uint64_t x) { return key_of(x); }, kDigits,
        digit_counts.data());
    // What the sweep needs of each object, gathered in y order so that the
    // sweep reads it sequentially (these loads do not wait on one another).
    SweepItem* const items = w.sweep_items.data();
    for (std::uint32_t a = 0; a < n; ++a) {
      const std::uint32_t p = local_of(y_sorted[a]);
      // The tag from the strip's slice of tags_ (4 bytes of 8 per object, in
      // L1) rather than from R's entry in rank_info_ (twice as large).
      items[a] = SweepItem{
          key_of(y_sorted[a]), static_cast<std::uint32_t>(tags[p] >> 32), ranks[2 * p],
          ranks[2 * p + 1],    static_cast<std::uint32_t>(tags[p]),       static_cast<std::uint32_t>(p >= own_from)};
    }
    float* const rank_t = w.rank_t.data();
    const std::uint32_t* const rank_high = w.rank_high.data();
    if constexpr (kTestT) {
      for (std::uint32_t p = 0; p < n; ++p) rank_t[ranks[2 * p]] = rank_t[ranks[2 * p + 1]] = m[p].t_min;
    }

    // Lines 5-12: sweep the lows on y.
    w.tree.clear();
    BitTree::Fixed<L> tree(w.tree);
    std::uint64_t* const found = w.found.data();
    std::uint32_t count = 0;    // pairs in found
    std::uint32_t expired = 0;  // items[0, expired) have left S
    for (std::uint32_t a = 0; a < n; ++a) {
      const SweepItem it = items[a];
      // Line 12 for every object whose high on y is below p's low. Highs
      // come in the order of lows, so objects leave S in the order they
      // came, about one per object: one leaves here without a branch, and
      // every 64 objects the rest catch up. The few left over meanwhile are
      // told apart in the query by their high.
      {
        const SweepItem& e = items[expired];
        const bool gone = e.high < it.low;
        tree.erase_if(e.r_low, gone);
        tree.erase_if(e.r_high, gone);
        expired += static_cast<std::uint32_t>(gone);
      }
      if ((a & 63) == 63) {
        while (items[expired].high < it.low) {
          tree.erase_if(items[expired].r_low, true);
          tree.erase_if(items[expired].r_high, true);
          ++expired;
        }
      }
      // Lines 9-10: every value of S strictly between R[p] and R[p + n]:
      // the range's words of level 0 that level 1 marks as not empty.
      const std::uint64_t p_word = std::uint64_t{it.name} << 32;
      const float p_lo = kTestT ? rank_t[it.r_low] : 0.0f;
      const auto report_pair = [&](std::uint32_t v) {
        const std::uint64_t i = info[v];
        // Not gone (high below p's low), and not both straddlers.
        std::uint64_t counts = static_cast<std::uint64_t>(rank_high[v] >= it.low) & (((i >> 32) | it.own) & 1);
        if constexpr (kTestT) {
          const float q_lo = rank_t[v];
          counts &= static_cast<std::uint64_t>(q_lo <= p_lo + size_t_ && p_lo <= q_lo + size_t_);
        }
        found[count] = p_word | static_cast<std::uint32_t>(i);
        count += static_cast<std::uint32_t>(counts);
      };
      if (it.r_low + 1 < it.r_high) tree.for_each(it.r_low + 1, it.r_high - 1, report_pair);
      if (count >= kFoundBuffer) {
        flush(w, count, report);
        count = 0;
      }
      // Lines 7-8.
      tree.insert(it.r_low);
      tree.insert(it.r_high);
    }
    flush(w, count, report);
  }

  // Reports the first `count` pairs of w.found.
  template <class Report>
  static void flush(const StripArrays& w, std::uint32_t count, Report& report) {
    for (std::uint32_t k = 0; k < count; ++k) {
      report(static_cast<std::uint32_t>(w.found[k] >> 32), static_cast<std::uint32_t>(w.found[k]));
    }
  }

  static std::uint32_t key_of(std::uint64_t item) { return static_cast<std::uint32_t>(item >> 32); }
  static std::uint32_t local_of(std::uint64_t item) { return static_cast<std::uint32_t>(item); }

  // Picks t as the axis along which the boxes spread least in units of
  // their size (most pairs overlap on it), x and y as the other two, x the
  // wider. From the lows of a sample of at most 4096 boxes (finite, or the
  // sweep reports nothing).
  static Axes choose_axes(std::span<const Box3> boxes, std::span<const Slot> live, const Extent& size) {
    detail::AxisSample sample;
    detail::add_sample<detail::SamplePoint::kMin, detail::kFiniteInput>(
        sample, live.size(), detail::sample_stride(live.size(), 4096),
        [&](std::size_t i) -> const Box3& { return boxes[live[i]]; });
    return detail::axis_roles(sample, {size[0], size[1], size[2]});
  }

  float size_x_ = 0, size_y_ = 0, size_t_ = 0;
  std::vector<Member> members_, member_scratch_;  // live boxes, sorted by x low
  std::vector<std::uint32_t> x_high_;             // by member: key of the high on x
  std::vector<std::uint64_t> tags_;               // by member: key of the high on y << 32 | slot
  std::vector<Strip> strips_;
  std::uint32_t largest_ = 0;           // members of the largest strip
  detail::TaskPlan plan_;               // the sweep's tasks of consecutive strips
  std::vector<PairBuffer> task_pairs_;  // by task: its pairs (parallel sweeps)
  ScratchPool<StripArrays> arrays_;
  TaskSystem* tasks_ = nullptr;
};

class Unisize final : public Algorithm {
 public:
  Unisize(const Options& options, std::uint32_t strip_members) : tasks_(options) {
    sweep_.set_tasks(tasks_.get());
    if (strip_members != 0) sweep_.set_strip_members(strip_members);
  }

  Status accepts(Operation op, std::span<const Id> ids, std::span<const Box3> boxes,
                 const FrameOps& staged) const override {
    // The size: the live boxes', else (none live) the first box added this
    // frame fixes it. Nothing is recorded here: update() fixes the size
    // from the frame's first added box, so a refused batch leaves nothing.
    if (boxes.empty()) return {};
    Extent size = size_;
    std::size_t i = 0;
    if (live_.empty()) {
      const Box3& first = staged.added_boxes.empty() ? boxes[0] : staged.added_boxes[0];
      if (!finite(first)) return Status::unsupported(op, ids[0], 0, kInfinite);
      if (!exact_extent(first, size)) return Status::unsupported(op, ids[0], 0, kInexactSize);
    }
    // The common case in one test per box without a branch per axis (as in
    // UnisizePruner::complete); a failure is sorted out below.
    for (; i < boxes.size(); ++i) {
      if (fits_finite(boxes[i], size)) continue;
      if (!finite(boxes[i])) return Status::unsupported(op, ids[i], i, kInfinite);
      return Status::unsupported(op, ids[i], i, kOtherSize);
    }
    return {};
  }

  void update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override {
    // A frame that adds to an empty set fixes the size from its first box
    // (accepts() checked that it is exact and that the rest fit it).
    if (live_.empty() && !ops.added.empty()) exact_extent(ops.added_boxes[0], size_);
    for (const Slot s : ops.removed) live_.erase(s);
    for (std::size_t k = 0; k < ops.moved.size(); ++k) boxes_[ops.moved[k]] = ops.moved_boxes[k];
    for (std::size_t k = 0; k < ops.added.size(); ++k) insert(ops.added[k], ops.added_boxes[k]);

    frame_pairs_.clear();
    sweep_.run(boxes_, live_.slots(), ids, size_, /*check=*/false, [&](Id a, Id b) {
      const Id swap = (a ^ b) & (Id{0} - static_cast<Id>(b < a));  // make_pair without a branch on the order
      frame_pairs_.push_back(Pair{a ^ swap, b ^ swap});
    });
    pairs.assign(frame_pairs_);  // sorted and diffed in bulk; frame_pairs_ gets the old set's storage
  }

  std::size_t memory_bytes() const override {
    return boxes_.capacity() * sizeof(Box3) + live_.memory_bytes() + frame_pairs_.capacity() * sizeof(Pair) +
           sweep_.memory_bytes();
  }

  // Invariants after update():
  // - live_ lists each live slot once (SlotMap::valid());
  // - when a box is live, every live box has finite coordinates and fits
  //   the size (max == min + size per axis);
  // - the sweep's S is a valid tree with its list in order.
  bool validate() const override {
    if (!live_.valid()) return false;
    for (const Slot s : live_.slots()) {
      if (s >= boxes_.size() || !finite(boxes_[s]) || !fits(boxes_[s], size_)) return false;
    }
    return sweep_.validate();
  }

 private:
  static constexpr const char* kInfinite = "unisize: coordinates must be finite (an infinite box has no size)";
  static constexpr const char* kOtherSize =
      "unisize: every box must have the size of the first live box (max == min + size on each axis, in float)";
  static constexpr const char* kInexactSize =
      "unisize: the size max - min of the first box must be a float exactly on each axis";

  void insert(Slot s, const Box3& box) {
    if (s >= boxes_.size()) boxes_.resize(s + 1);
    boxes_[s] = box;
    live_.insert(s);
  }

  std::vector<Box3> boxes_;  // by slot
  detail::SlotMap<> live_;   // the live slots
  Extent size_{};            // every live box's size
  OptionTasks tasks_;
  UnisizeSweep sweep_;
  std::vector<Pair> frame_pairs_;  // the frame's pairs as ids, handed to PairManager::assign
};

}  // namespace

std::unique_ptr<Algorithm> make_unisize(const Options& options) { return std::make_unique<Unisize>(options, 0); }

std::unique_ptr<Algorithm> make_unisize_with_strips(const Options& options, std::uint32_t strip_members) {
  return std::make_unique<Unisize>(options, strip_members);
}

}  // namespace sapling::builtin

namespace sapling {

// The one-shot sweep: the persistent algorithm's UnisizeSweep over every box.
struct UnisizePruner::Impl {
  builtin::UnisizeSweep sweep;
  std::vector<Slot> all;  // 0..n-1
};

UnisizePruner::UnisizePruner(TaskSystem* tasks) : impl_(new Impl) { impl_->sweep.set_tasks(tasks); }
UnisizePruner::~UnisizePruner() { delete impl_; }
UnisizePruner::UnisizePruner(UnisizePruner&& other) noexcept : impl_(std::exchange(other.impl_, nullptr)) {}
UnisizePruner& UnisizePruner::operator=(UnisizePruner&& other) noexcept {
  std::swap(impl_, other.impl_);
  return *this;
}

Status UnisizePruner::complete(std::span<const Box3> boxes, std::vector<IndexPair>& out) {
  static constexpr const char* kInfinite = "unisize: coordinates must be finite (an infinite box has no size)";
  static constexpr const char* kOtherSize =
      "unisize: every box must have the size of the first (max == min + size on each axis, in float)";
  static constexpr const char* kInexactSize =
      "unisize: the size max - min of the first box must be a float exactly on each axis";
  if (boxes.empty()) return {};
  builtin::Extent size{};
  if (!builtin::finite(boxes[0])) return Status::unsupported(Operation::kNone, 0, 0, kInfinite);
  if (!builtin::exact_extent(boxes[0], size)) return Status::unsupported(Operation::kNone, 0, 0, kInexactSize);
  const auto n = static_cast<Slot>(boxes.size());
  if (impl_->all.size() != n) {
    impl_->all.resize(n);
    for (Slot s = 0; s < n; ++s) impl_->all[s] = s;
  }
  // The input rule is checked while the sweep reads the boxes; if a box
  // breaks it, nothing is reported and the first offender is named.
  const bool fit = impl_->sweep.run(boxes, impl_->all, {}, size, /*check=*/true, [&out](Slot p, Slot q) {
    const Slot swap = (p ^ q) & (Slot{0} - static_cast<Slot>(q < p));  // no branch on the order
    out.push_back(IndexPair{p ^ swap, q ^ swap});
  });
  if (fit) return {};
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    if (!builtin::finite(boxes[i])) return Status::unsupported(Operation::kNone, static_cast<Id>(i), i, kInfinite);
    if (!builtin::fits(boxes[i], size)) return Status::unsupported(Operation::kNone, static_cast<Id>(i), i, kOtherSize);
  }
  return {};
}

}  // namespace sapling
