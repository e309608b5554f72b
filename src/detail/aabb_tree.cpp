// AabbTree's building, changes and invariants (the lesson is in aabb_tree.hpp).
#include "detail/aabb_tree.hpp"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cfloat>
#include <memory>

#include "detail/radix_sort.hpp"
#include "detail/reserve.hpp"
#include "sapling/task_system.hpp"

namespace sapling::detail {
namespace {

// Extents above this count as this, so that areas of infinite boxes stay
// finite (and comparable, if coarsely) in double: no cost is ever NaN.
constexpr double kMaxExtent = 2.0 * FLT_MAX;

double extent(float lo, float hi) noexcept {
  if (lo == hi) return 0.0;  // also [inf, inf], where hi - lo is NaN
  return std::min(static_cast<double>(hi) - static_cast<double>(lo), kMaxExtent);
}

// Half the surface area: the SAH's measure of how likely a node is entered.
double area(const Box3& b) noexcept {
  const double x = extent(b.min[0], b.max[0]), y = extent(b.min[1], b.max[1]), z = extent(b.min[2], b.max[2]);
  return x * y + y * z + z * x;
}

// The middle of [lo, hi], 0 for [-inf, +inf], clamped to +-FLT_MAX: finite,
// never NaN. In float (halves first: no overflow); the tree's shape is no
// part of any answer.
float centroid(float lo, float hi) noexcept {
  const float c = 0.5f * lo + 0.5f * hi;
  return c == c ? std::clamp(c, -FLT_MAX, FLT_MAX) : 0.0f;
}

// A box to build from, with its centroid and its index in the input.
struct Ref {
  Box3 box;
  std::array<float, 3> c;
  std::uint32_t index;
};

// A range of refs still to split, and its node; an empty range marks a
// node whose children are laid out, to be refit (its box and height).
struct BuildTask {
  std::uint32_t begin, end;
  std::uint32_t node;
  bool refits() const noexcept { return begin == end; }
};

constexpr int kBins = 32;

// The axis along which the centroids of refs spread most, with their range on it.
int widest_axis(std::span<const Ref> refs, double& lo, double& width) noexcept {
  std::array<float, 3> cmin = refs[0].c, cmax = refs[0].c;
  for (const Ref& r : refs) {
    for (int k = 0; k < 3; ++k) {
      cmin[k] = std::min(cmin[k], r.c[k]);
      cmax[k] = std::max(cmax[k], r.c[k]);
    }
  }
  int axis = 0;
  width = -1.0;
  for (int k = 0; k < 3; ++k) {
    const double w = static_cast<double>(cmax[k]) - static_cast<double>(cmin[k]);  // finite: centroids are
    if (w > width) width = w, axis = k, lo = cmin[k];
  }
  return axis;
}

// An empty box: the union with it of any box is that box.
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr Box3 kEmpty{{kInf, kInf, kInf}, {-kInf, -kInf, -kInf}};

// Splits refs at the cheapest of the binned SAH planes along `axis` (kBins
// bins, fewer for fewer refs: their setup would dominate small ranges); the
// size of the left part, 0 if no plane separates anything.
std::size_t sah_split(std::span<Ref> refs, int axis, double lo, double width) {
  struct Bin {
    Box3 box;
    std::size_t count;
  };
  const int bin_count = static_cast<int>(std::min<std::size_t>(kBins, refs.size()));
  std::array<Bin, kBins> bins;
  for (int b = 0; b < bin_count; ++b) bins[b] = {kEmpty, 0};
  const double scale = bin_count / width;
  auto bin_of = [&](const Ref& r) {
    const double b = (static_cast<double>(r.c[axis]) - lo) * scale;
    return std::min(static_cast<int>(b), bin_count - 1);
  };
  for (const Ref& r : refs) {
    Bin& bin = bins[bin_of(r)];
    bin.box = enclosing(bin.box, r.box);
    ++bin.count;
  }
  // Right-to-left sweep: the cost of each right part; then left to right.
  std::array<double, kBins> right_cost;
  Box3 acc = kEmpty;
  std::size_t count = 0;
  for (int b = bin_count - 1; b > 0; --b) {
    acc = enclosing(acc, bins[b].box);
    count += bins[b].count;
    right_cost[b] = count == 0 ? 0.0 : area(acc) * static_cast<double>(count);
  }
  double best = std::numeric_limits<double>::infinity();
  int best_plane = -1;
  acc = kEmpty;
  count = 0;
  for (int b = 0; b < bin_count - 1; ++b) {
    acc = enclosing(acc, bins[b].box);
    count += bins[b].count;
    if (count == 0 || count == refs.size()) continue;
    const double cost = area(acc) * static_cast<double>(count) + right_cost[b + 1];
    if (cost < best) best = cost, best_plane = b;
  }
  if (best_plane < 0) return 0;
  const auto mid = std::partition(refs.begin(), refs.end(), [&](const Ref& r) { return bin_of(r) <= best_plane; });
  return static_cast<std::size_t>(mid - refs.begin());
}

// The sorted build's order: each box's centroid quantised to 16 bits per
// axis on one scale for all three (the widest spread of the centroids: a
// flat level keeps its little height in few bits) and the bits interleaved
// (a Morton code, z-order); the boxes' indices sorted by code, ties in
// input order (a stable radix sort).
struct Coded {
  std::uint64_t code;
  std::uint32_t index;
};

// The centroids' bounds over boxes[begin, end), merged into cmin, cmax.
void centroid_bounds(std::span<const Box3> boxes, std::size_t begin, std::size_t end, std::array<float, 3>& cmin,
                     std::array<float, 3>& cmax) noexcept {
  for (std::size_t i = begin; i < end; ++i) {
    for (int k = 0; k < 3; ++k) {
      const float c = centroid(boxes[i].min[k], boxes[i].max[k]);
      cmin[k] = std::min(cmin[k], c), cmax[k] = std::max(cmax[k], c);
    }
  }
}

// Spreads the 21 low bits of v to every third bit (16 are used).
std::uint64_t spread(std::uint64_t v) noexcept {
  v &= 0x1fffff;
  v = (v | v << 32) & 0x001f00000000ffffull;
  v = (v | v << 16) & 0x001f0000ff0000ffull;
  v = (v | v << 8) & 0x100f00f00f00f00full;
  v = (v | v << 4) & 0x10c30c30c30c30c3ull;
  v = (v | v << 2) & 0x1249249249249249ull;
  return v;
}

constexpr double kTop = (1u << 16) - 1;  // 48-bit codes: four passes of the sort
constexpr RadixDigits kMortonDigits{.bits = 12, .passes = 4, .insertion_up_to = 32};

// The scale from centroid coordinates to the 16-bit grid.
double morton_scale(const std::array<float, 3>& cmin, const std::array<float, 3>& cmax) noexcept {
  double width = 0.0;
  for (int k = 0; k < 3; ++k) width = std::max(width, static_cast<double>(cmax[k]) - static_cast<double>(cmin[k]));
  return width > 0.0 ? kTop / width : 0.0;
}

// The codes of boxes[begin, end) into order[begin, end).
void encode(std::span<const Box3> boxes, std::size_t begin, std::size_t end, const std::array<float, 3>& cmin,
            double scale, Coded* order) noexcept {
  // c - cmin[k] is at least 0 (cmin[k] is the least of the same c); where
  // it overflows to infinity, the product is too and the code kTop.
  const auto top = static_cast<float>(kTop), scale_f = static_cast<float>(scale);
  for (std::size_t i = begin; i < end; ++i) {
    std::uint64_t code = 0;
    for (int k = 0; k < 3; ++k) {
      const float c = centroid(boxes[i].min[k], boxes[i].max[k]);
      const float q = std::min(top, (c - cmin[k]) * scale_f);
      code |= spread(static_cast<std::uint64_t>(q)) << (2 - k);
    }
    order[i] = {code, static_cast<std::uint32_t>(i)};
  }
}

// The codes and their sort's other buffer are left unwritten (Coded is
// trivial): encode() writes the first, the sort the second.
std::unique_ptr<Coded[]> morton_order(std::span<const Box3> boxes) {
  const std::size_t n = boxes.size();
  std::array<float, 3> cmin{}, cmax{};
  for (int k = 0; k < 3; ++k) cmin[k] = cmax[k] = centroid(boxes[0].min[k], boxes[0].max[k]);
  centroid_bounds(boxes, 0, n, cmin, cmax);
  auto order = std::make_unique_for_overwrite<Coded[]>(n), scratch = std::make_unique_for_overwrite<Coded[]>(n);
  advise_huge_pages(order.get(), n * sizeof(Coded));
  advise_huge_pages(scratch.get(), n * sizeof(Coded));
  encode(boxes, 0, n, cmin, morton_scale(cmin, cmax), order.get());
  std::vector<std::uint32_t> counts(kMortonDigits.counts());
  const Coded* sorted = radix_sort(
      order.get(), scratch.get(), n, [](const Coded& c) { return c.code; }, kMortonDigits, counts.data());
  return sorted == order.get() ? std::move(order) : std::move(scratch);
}

// The same on a task system, chunk by chunk (a fixed size: the tasks depend
// on n only): the bounds per chunk (min and max: exact in any order), the
// codes, and parallel_radix_sort(); the same order as morton_order()'s.
constexpr std::size_t kMortonChunk = std::size_t{1} << 16;

std::unique_ptr<Coded[]> morton_order(std::span<const Box3> boxes, TaskSystem& tasks) {
  const std::size_t n = boxes.size(), chunks = (n + kMortonChunk - 1) / kMortonChunk;
  std::array<float, 3> first{};
  for (int k = 0; k < 3; ++k) first[k] = centroid(boxes[0].min[k], boxes[0].max[k]);
  std::vector<std::array<float, 3>> lows(chunks, first), highs(chunks, first);
  auto bound = [&](std::size_t c) {
    centroid_bounds(boxes, c * kMortonChunk, std::min(n, (c + 1) * kMortonChunk), lows[c], highs[c]);
  };
  tasks.run(chunks, bound);
  std::array<float, 3> cmin = first, cmax = first;
  for (std::size_t c = 0; c < chunks; ++c) {
    for (int k = 0; k < 3; ++k) cmin[k] = std::min(cmin[k], lows[c][k]), cmax[k] = std::max(cmax[k], highs[c][k]);
  }
  const double scale = morton_scale(cmin, cmax);
  // Unwritten, as above: the tasks write them first.
  auto order = std::make_unique_for_overwrite<Coded[]>(n), scratch = std::make_unique_for_overwrite<Coded[]>(n);
  advise_huge_pages(order.get(), n * sizeof(Coded));
  advise_huge_pages(scratch.get(), n * sizeof(Coded));
  std::vector<std::uint32_t> counts(parallel_radix_counts(n, kMortonChunk, kMortonDigits));
  auto code = [&](std::size_t c) {
    encode(boxes, c * kMortonChunk, std::min(n, (c + 1) * kMortonChunk), cmin, scale, order.get());
  };
  tasks.run(chunks, code);
  const Coded* sorted = parallel_radix_sort(
      order.get(), scratch.get(), n, [](const Coded& c) { return c.code; }, kMortonDigits, kMortonChunk, tasks,
      counts.data());
  return sorted == order.get() ? std::move(order) : std::move(scratch);
}

// Where the sorted build splits a range of `order`: at the highest bit in
// which its first and last codes differ (every code before the split has it
// clear, every one after set: a cut of space by a plane of the Morton grid),
// or in the middle where all codes agree or that cut would leave one side
// under an eighth (clustered input: the height stays O(log n)). The size of
// the left part.
std::size_t morton_split(std::span<const Coded> range) {
  const std::size_t n = range.size(), middle = n / 2;
  const std::uint64_t differ = range.front().code ^ range.back().code;
  if (differ == 0) return middle;
  const std::uint64_t bit = std::uint64_t{1} << (63 - std::countl_zero(differ));
  const auto at =
      std::partition_point(range.begin(), range.end(), [bit](const Coded& c) { return (c.code & bit) == 0; });
  const auto left = static_cast<std::size_t>(at - range.begin());
  return 8 * std::min(left, n - left) < n ? middle : left;
}

}  // namespace

// Nodes `first` and `first + 1` become i's children, still to be laid out.
// Each written from one constant: a node written once and copied to the
// other stalled on reading back its own stores (a third of a build's own
// time).
void AabbTree::make_children(std::uint32_t i, std::uint32_t first) noexcept {
  const Node child{.box = {}, .parent = i};
  nodes_[first] = child;
  nodes_[first + 1] = child;
  nodes_[i].child = {first, first + 1};
}

// Top down, depth first, the left part next: a split numbers its two
// children side by side (a walk reads both at once), after their parent.
// split(begin, end) cuts the range [begin, end) of the build's order, the
// size of its left part in (0, end - begin); leaf(node, at) makes node the
// leaf of position `at`. A node is refit (box and height) as soon as both
// its subtrees are laid out, while they are still in the cache: a pass of
// its own over the nodes afterwards took a seventh of a 1M-box build.
template <class SplitRange, class MakeLeaf>
void AabbTree::lay_out(std::size_t n, SplitRange&& split, MakeLeaf&& leaf) {
  std::vector<BuildTask> tasks;
  nodes_.resize(2 * n - 1);  // unwritten: every node is written whole below
  root_ = 0;
  nodes_[root_] = Node{};
  auto next = std::uint32_t{1};
  tasks.push_back({0, static_cast<std::uint32_t>(n), root_});
  while (!tasks.empty()) {
    const BuildTask task = tasks.back();
    tasks.pop_back();
    const std::uint32_t i = task.node;
    if (task.refits()) {
      refit(i);
      continue;
    }
    if (task.end - task.begin == 1) {
      leaf(i, task.begin);
      continue;
    }
    const auto mid = task.begin + static_cast<std::uint32_t>(split(task.begin, task.end));
    const std::uint32_t first = next;
    next += 2;
    make_children(i, first);
    tasks.push_back({0, 0, i});
    tasks.push_back({mid, task.end, first + 1});
    tasks.push_back({task.begin, mid, first});
  }
}

// In parallel: the top of the tree is laid out here, as lay_out() does,
// down to ranges of at most `grain` positions; each such range's subtree is
// set aside for a task, its 2m - 2 descendants (m leaves) given the node
// numbers lay_out() would give them, which follow the numbering of the top
// only (depth first: a subtree's descendants are numbered together). The
// tasks lay their subtrees out and refit them as lay_out() does; the top is
// refit last. The same nodes as lay_out()'s, for any thread count. A task
// walks on a fixed stack: `split` must leave each part at least an eighth
// of its range, so the depth below a range of m is under log(m) / log(8 / 7),
// at most 167 for m < 2^32, and the stack holds two entries a level (a
// node's refit and its right part) and one more.
template <class SplitRange, class MakeLeaf>
void AabbTree::lay_out(std::size_t n, std::size_t grain, SplitRange&& split, MakeLeaf&& leaf, TaskSystem& tasks) {
  struct Subtree {
    BuildTask range;
    std::uint32_t first;  // its root's descendants: nodes [first, first + 2 * (size - 1))
  };
  std::vector<BuildTask> stack;
  std::vector<std::uint32_t> top;  // the internal nodes laid out here, parents first
  std::vector<Subtree> subtrees;
  nodes_.resize(2 * n - 1);  // unwritten: every node is written whole below
  root_ = 0;
  nodes_[root_] = Node{};
  auto next = std::uint32_t{1};
  stack.push_back({0, static_cast<std::uint32_t>(n), root_});
  while (!stack.empty()) {
    const BuildTask task = stack.back();
    stack.pop_back();
    const std::uint32_t size = task.end - task.begin;
    if (size <= grain) {
      subtrees.push_back({task, next});
      next += 2 * (size - 1);
      continue;
    }
    const std::uint32_t i = task.node;
    const auto mid = task.begin + static_cast<std::uint32_t>(split(task.begin, task.end));
    const std::uint32_t first = next;
    next += 2;
    make_children(i, first);
    top.push_back(i);
    stack.push_back({mid, task.end, first + 1});
    stack.push_back({task.begin, mid, first});
  }
  auto lay_subtree = [&](std::size_t t) {
    constexpr std::size_t kDepth = 2 * 168 + 2;
    std::array<BuildTask, kDepth> walk;
    const Subtree& s = subtrees[t];
    std::size_t depth = 0;
    walk[depth++] = s.range;
    std::uint32_t at = s.first;
    while (depth != 0) {
      const BuildTask task = walk[--depth];
      const std::uint32_t i = task.node;
      if (task.refits()) {
        refit(i);
        continue;
      }
      if (task.end - task.begin == 1) {
        leaf(i, task.begin);
        continue;
      }
      const auto mid = task.begin + static_cast<std::uint32_t>(split(task.begin, task.end));
      const std::uint32_t first = at;
      at += 2;
      make_children(i, first);
      assert(depth + 3 <= kDepth);
      walk[depth++] = {0, 0, i};
      walk[depth++] = {mid, task.end, first + 1};
      walk[depth++] = {task.begin, mid, first};
    }
  };
  tasks.run(subtrees.size(), lay_subtree);
  for (std::size_t k = top.size(); k-- > 0;) refit(top[k]);
}

void AabbTree::build(std::span<const Slot> slots, std::span<const Box3> boxes, Split split, TaskSystem* tasks) {
  assert(slots.size() == boxes.size());
  clear();
  const std::size_t n = slots.size();
  if (n == 0) {
    decltype(nodes_)().swap(nodes_);
    std::vector<std::uint32_t>().swap(leaf_of_);
    return;
  }
  reserve(n);
  Slot top = 0;
  for (const Slot s : slots) top = std::max(top, s);
  if (leaf_of_.size() <= top) leaf_of_.resize(std::size_t{top} + 1, kNull);

  const auto leaf = [&](std::uint32_t node, std::uint32_t index) {
    nodes_[node].box = boxes[index];
    nodes_[node].child[0] = slots[index];
    leaf_of_[slots[index]] = node;
  };
  // The sorted builds make their leaves in the order's sequence, which reads
  // the boxes and slots out of theirs: those a few leaves on are asked for
  // ahead (without, each leaf waited on memory twice).
  constexpr std::uint32_t kAhead = 16;
  const auto sorted_leaf = [&](const Coded* order, std::uint32_t node, std::uint32_t at) {
    if (at + kAhead < n) {
      const std::uint32_t next = order[at + kAhead].index;
      __builtin_prefetch(&boxes[next]);
      __builtin_prefetch(reinterpret_cast<const char*>(&boxes[next]) + sizeof(Box3) - 1);
      __builtin_prefetch(&slots[next]);
    }
    leaf(node, order[at].index);
  };
  // On a task system from this size: below, the tasks' overhead outweighs them.
  constexpr std::size_t kParallelFrom = std::size_t{1} << 15;
  try {
    if (split == Split::kSorted && tasks != nullptr && tasks->concurrency() > 1 && n >= kParallelFrom) {
      const std::unique_ptr<Coded[]> order = morton_order(boxes, *tasks);
      // Subtrees of at most n / 256 leaves (some 256 to 2048 of them: enough
      // for the tasks to even out), a number that depends on n only.
      const std::size_t grain = std::max<std::size_t>(1024, n / 256);
      lay_out(
          n, grain,
          [&](std::uint32_t begin, std::uint32_t end) {
            return morton_split({order.get() + begin, end - begin});
          },
          [&](std::uint32_t node, std::uint32_t at) { sorted_leaf(order.get(), node, at); }, *tasks);
    } else if (split == Split::kSorted) {
      const std::unique_ptr<Coded[]> order = morton_order(boxes);
      lay_out(
          n,
          [&](std::uint32_t begin, std::uint32_t end) {
            return morton_split({order.get() + begin, end - begin});
          },
          [&](std::uint32_t node, std::uint32_t at) { sorted_leaf(order.get(), node, at); });
    } else {
      // Copies, with their centroids: the splits then read memory in order.
      std::vector<Ref> refs(n);
      for (std::size_t i = 0; i < n; ++i) {
        const Box3& b = boxes[i];
        refs[i] = {b,
                   {centroid(b.min[0], b.max[0]), centroid(b.min[1], b.max[1]), centroid(b.min[2], b.max[2])},
                   static_cast<std::uint32_t>(i)};
      }
      const auto split_refs = [&](std::uint32_t begin, std::uint32_t end) {
        const std::span<Ref> range(refs.data() + begin, end - begin);
        double lo = 0.0, width = 0.0;
        const int axis = widest_axis(range, lo, width);
        std::size_t left = 0;
        if (split == Split::kBinnedSah && width > 0.0) left = sah_split(range, axis, lo, width);
        if (left == 0) {  // the median: also where every centroid coincides
          left = range.size() / 2;
          if (width > 0.0) {
            std::nth_element(range.begin(), range.begin() + static_cast<std::ptrdiff_t>(left), range.end(),
                             [axis](const Ref& a, const Ref& b) { return a.c[axis] < b.c[axis]; });
          }
        }
        return left;
      };
      lay_out(n, split_refs, [&](std::uint32_t node, std::uint32_t at) { leaf(node, refs[at].index); });
    }
  } catch (...) {  // memory ran short: an empty tree, not half a one (nodes may be unwritten)
    clear();
    throw;
  }
  leaves_ = n;
}

bool AabbTree::identical(const AabbTree& other) const noexcept {
  if (root_ != other.root_ || free_ != other.free_ || leaves_ != other.leaves_ || leaf_of_ != other.leaf_of_ ||
      nodes_.size() != other.nodes_.size()) {
    return false;
  }
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const Node &a = nodes_[i], &b = other.nodes_[i];
    if (a.box.min != b.box.min || a.box.max != b.box.max || a.parent != b.parent || a.child != b.child ||
        a.height != b.height) {
      return false;
    }
  }
  return true;
}

std::uint32_t AabbTree::allocate_node() {
  if (free_ != kNull) {
    const std::uint32_t i = free_;
    free_ = nodes_[i].parent;
    nodes_[i] = Node{};
    return i;
  }
  // reserve_geometric()'s growth (by a quarter), for this allocator.
  const std::size_t room = nodes_.capacity();
  if (nodes_.size() == room) nodes_.reserve(std::max(room + 1 + (room + 1) / 16, room + room / 4 + 4));
  nodes_.emplace_back(Node{});
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

void AabbTree::free_node(std::uint32_t i) noexcept {
  nodes_[i] = Node{};
  nodes_[i].parent = free_;
  free_ = i;
}

void AabbTree::refit(std::uint32_t i) noexcept {
  Node& node = nodes_[i];
  const Node& a = nodes_[node.child[0]];
  const Node& b = nodes_[node.child[1]];
  // Component by component into the node: a Box3 made whole on the stack
  // and copied in stalled on the copy's read of its own piecewise stores
  // (a sixth of a 1M-box build).
  for (int k = 0; k < 3; ++k) {
    node.box.min[k] = std::min(a.box.min[k], b.box.min[k]);
    node.box.max[k] = std::max(a.box.max[k], b.box.max[k]);
  }
  node.height = 1 + std::max(a.height, b.height);
}

// A rotation lifts the taller child c of a into a's place: a becomes c's
// child in place of c's shorter child, which becomes a's child in place of c.
// The heights of a's subtrees then differ by at most one more than c's did.
std::uint32_t AabbTree::balance(std::uint32_t a) noexcept {
  Node& node = nodes_[a];
  if (node.height < 2) return a;
  const std::uint32_t h0 = nodes_[node.child[0]].height, h1 = nodes_[node.child[1]].height;
  if (h0 <= h1 + 1 && h1 <= h0 + 1) return a;
  const int up = h1 > h0 ? 1 : 0;  // the side of the taller child
  const std::uint32_t c = node.child[up];
  Node& lifted = nodes_[c];
  const int shorter = nodes_[lifted.child[0]].height < nodes_[lifted.child[1]].height ? 0 : 1;
  const std::uint32_t moved = lifted.child[shorter];
  // c takes a's place under a's parent.
  lifted.parent = node.parent;
  if (node.parent == kNull) {
    root_ = c;
  } else {
    Node& p = nodes_[node.parent];
    p.child[p.child[0] == a ? 0 : 1] = c;
  }
  // a goes under c; c's shorter child goes under a.
  lifted.child[shorter] = a;
  node.parent = c;
  node.child[up] = moved;
  nodes_[moved].parent = a;
  refit(a);
  refit(c);
  return c;
}

void AabbTree::walk_up(std::uint32_t i) noexcept {
  while (i != kNull) {
    i = balance(i);
    refit(i);
    i = nodes_[i].parent;
  }
}

// Greedy descent by SAH cost (the idea of Box2D's b2DynamicTree): at each
// node, compare making the new leaf this node's sibling (a new parent of the
// union's area) with descending into either child (the area that child's
// box would gain, or the new parent's area at a leaf); every ancestor above
// grows by the same amount whichever is chosen below it, the inherited cost.
void AabbTree::insert(Slot slot, const Box3& box) {
  assert(!contains(slot));
  if (leaf_of_.size() <= slot) {
    reserve_geometric(leaf_of_, std::size_t{slot} + 1);
    leaf_of_.resize(std::size_t{slot} + 1, kNull);
  }
  const std::uint32_t leaf = allocate_node();
  nodes_[leaf].box = box;
  nodes_[leaf].child[0] = slot;
  leaf_of_[slot] = leaf;
  ++leaves_;
  if (root_ == kNull) {
    root_ = leaf;
    return;
  }
  std::uint32_t at = root_;
  while (nodes_[at].height != 0) {
    const Node& node = nodes_[at];
    const double here = area(enclosing(node.box, box));
    const double inherited = here - area(node.box);
    std::array<double, 2> cost{};
    for (int s = 0; s < 2; ++s) {
      const Node& c = nodes_[node.child[s]];
      const double grown = area(enclosing(c.box, box));
      cost[s] = (c.height == 0 ? grown : grown - area(c.box)) + inherited;
    }
    if (here <= cost[0] && here <= cost[1]) break;
    at = node.child[cost[1] < cost[0] ? 1 : 0];
  }
  // A new parent for `at` and the leaf, in at's place.
  const std::uint32_t parent = allocate_node();
  const std::uint32_t above = nodes_[at].parent;
  nodes_[parent].parent = above;
  nodes_[parent].child = {at, leaf};
  if (above == kNull) {
    root_ = parent;
  } else {
    Node& p = nodes_[above];
    p.child[p.child[0] == at ? 0 : 1] = parent;
  }
  nodes_[at].parent = parent;
  nodes_[leaf].parent = parent;
  walk_up(parent);
}

void AabbTree::remove(Slot slot) {
  assert(contains(slot));
  const std::uint32_t leaf = leaf_of_[slot];
  leaf_of_[slot] = kNull;
  --leaves_;
  const std::uint32_t parent = nodes_[leaf].parent;
  free_node(leaf);
  if (parent == kNull) {
    root_ = kNull;
    return;
  }
  // The sibling takes the parent's place.
  const Node& p = nodes_[parent];
  const std::uint32_t sibling = p.child[p.child[0] == leaf ? 1 : 0];
  const std::uint32_t above = p.parent;
  nodes_[sibling].parent = above;
  free_node(parent);
  if (above == kNull) {
    root_ = sibling;
    return;
  }
  Node& a = nodes_[above];
  a.child[a.child[0] == parent ? 0 : 1] = sibling;
  walk_up(above);
}

void AabbTree::move(Slot slot, const Box3& box) {
  assert(contains(slot));
  if (leaves_ == 1) {
    nodes_[root_].box = box;
    return;
  }
  remove(slot);
  insert(slot, box);
}

void AabbTree::move_in_place(std::span<const Slot> slots, std::span<const Box3> boxes) {
  assert(slots.size() == boxes.size());
  for (std::size_t k = 0; k < slots.size(); ++k) nodes_[leaf_of_[slots[k]]].box = boxes[k];
  if (slots.size() * (std::size_t{height()} + 1) <= nodes_.size()) {
    // A path's walk stops where a box comes out as it was: the walks before
    // this one left every ancestor above it enclosing its children.
    for (const Slot slot : slots) {
      for (std::uint32_t i = nodes_[leaf_of_[slot]].parent; i != kNull; i = nodes_[i].parent) {
        const Box3 before = nodes_[i].box;
        refit(i);
        if (nodes_[i].box == before) break;
      }
    }
    return;
  }
  // Every internal node, children before parents: a breadth-first order, reversed.
  std::vector<std::uint32_t> order;
  order.reserve(nodes_.size());
  order.push_back(root_);
  for (std::size_t k = 0; k < order.size(); ++k) {
    const Node& node = nodes_[order[k]];
    if (node.height != 0) order.insert(order.end(), node.child.begin(), node.child.end());
  }
  for (auto i = order.rbegin(); i != order.rend(); ++i) {
    if (nodes_[*i].height != 0) refit(*i);
  }
}

void AabbTree::reserve(std::size_t leaves) {
  reserve_large(nodes_, leaves == 0 ? 0 : 2 * leaves - 1);
  reserve_large(leaf_of_, leaves);
}

void AabbTree::clear() noexcept {
  nodes_.clear();
  std::fill(leaf_of_.begin(), leaf_of_.end(), kNull);
  root_ = kNull;
  free_ = kNull;
  leaves_ = 0;
}

std::size_t AabbTree::memory_bytes() const noexcept {
  return nodes_.capacity() * sizeof(Node) + leaf_of_.capacity() * sizeof(std::uint32_t);
}

double AabbTree::area_ratio() const noexcept {
  if (root_ == kNull || nodes_[root_].height == 0) return 0.0;
  const double root = area(nodes_[root_].box);
  if (root == 0.0) return 0.0;
  // Free nodes have height 0, as leaves do: neither counts.
  double total = 0.0;
  for (const Node& node : nodes_) {
    if (node.height != 0) total += area(node.box);
  }
  return total / root;
}

bool AabbTree::validate() const {
  const std::size_t count = nodes_.size();
  if ((root_ == kNull) != (leaves_ == 0)) return false;
  std::vector<std::uint8_t> seen(count, 0);
  std::size_t reached = 0, leaves = 0;
  if (root_ != kNull) {
    if (root_ >= count || nodes_[root_].parent != kNull) return false;
    std::vector<std::uint32_t> stack{root_};
    while (!stack.empty()) {
      const std::uint32_t i = stack.back();
      stack.pop_back();
      if (seen[i]) return false;  // reached twice: a cycle or a shared child
      seen[i] = 1;
      ++reached;
      const Node& node = nodes_[i];
      if (node.height == 0) {
        const Slot s = node.child[0];
        if (s >= leaf_of_.size() || leaf_of_[s] != i) return false;
        if (check_box(node.box).fault != BoxFault::kNone) return false;
        ++leaves;
        continue;
      }
      for (const std::uint32_t c : node.child) {
        if (c >= count || nodes_[c].parent != i) return false;
        stack.push_back(c);
      }
      const Node& a = nodes_[node.child[0]];
      const Node& b = nodes_[node.child[1]];
      if (node.height != 1 + std::max(a.height, b.height)) return false;
      if (!(node.box == enclosing(a.box, b.box))) return false;
    }
  }
  if (leaves != leaves_) return false;
  std::size_t mapped = 0;
  for (const std::uint32_t leaf : leaf_of_) {
    if (leaf == kNull) continue;
    if (leaf >= count || !seen[leaf] || nodes_[leaf].height != 0) return false;
    ++mapped;
  }
  if (mapped != leaves_) return false;
  // Every other node is on the free list, once.
  std::size_t free_count = 0;
  for (std::uint32_t i = free_; i != kNull; i = nodes_[i].parent) {
    if (i >= count || seen[i]) return false;
    seen[i] = 2;
    if (++free_count > count) return false;
  }
  return reached + free_count == count;
}

}  // namespace sapling::detail
