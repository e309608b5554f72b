// AabbTree: a binary bounding-volume hierarchy over exact boxes, for the
// static objects of a world (a level laid out once, changed rarely); it
// answers region queries (every leaf overlapping a box) and ray casts.
//
// Structure. Every node holds a box; a leaf holds one caller's slot and the
// box exactly as given (no fattening: static objects do not move); an
// internal node has exactly two children and its box is the exact union of
// theirs, so a box or ray that misses a node misses everything below it.
// Nodes live in one array, linked by indices (parent, two children); freed
// nodes form a free list; `leaf_of_[slot]` finds a slot's leaf. A node is 40
// bytes and n leaves need 2n - 1 nodes: about 84 bytes per leaf with the map.
//
// Building. build() lays the tree out top-down: a range of boxes is split in
// two by binned SAH (the surface area heuristic, MacDonald and Booth 1990,
// binned as in Wald 2007: 32 bins along the longest axis of the centroids'
// bounds) or at the median centroid of that axis (nth_element); both are
// O(n log n). Or, for a bulk load, sorted: the centroids sorted once by
// their Morton code (z-order; a radix sort, O(n)), and each range cut where
// its first and last codes part (Lauterbach et al. 2009's LBVH, built top
// down), each split a binary search, in the middle where that cut is
// lopsided: 2.7 times faster than the binned SAH at 1M boxes (memory bound),
// and as good on the grids levels are made of. Nodes are numbered depth
// first, a node's two children side by side, which a walk tests together.
// The median split's height is ceil(log2 n), the sorted one's O(log n).
// Given a task system, a large sorted build runs on it: the codes and the
// radix sort's counts and scatters chunk by chunk, then the top of the tree
// down to ranges of n / 256 boxes here and each such subtree as a task, at
// the node numbers the depth-first order gives it (known from its size).
// Every boundary depends on the input only: the same tree, node for node.
//
// Changing. insert() descends from the root towards the best sibling by the
// greedy SAH cost of Box2D's b2DynamicTree (the area a new parent would add
// at each level, plus what the ancestors would grow by), pairs the new leaf
// with it under a new parent, and walks back up refitting boxes and heights;
// on the way, a node whose children's heights differ by more than one is
// rotated (its taller child takes its place, AVL style), as Box2D does: the
// height stays logarithmic on ordinary layouts (boxes at exponentially
// growing distances still grow it linearly). remove() replaces the leaf's
// parent by its sibling and walks up the same way; move() is a removal and
// an insertion. Each costs O(height).
//
// Queries walk an explicit stack, no recursion: a depth-first walk needs at
// most height + 1 entries, kept in an array on the C++ stack up to
// kInlineStack entries (no allocation); a deeper tree (possible after
// adversarial inserts) walks with a local vector of height + 1. A walk
// writes nothing shared, so any number of threads may query or cast rays on
// a const tree at once, and a visitor may query the same tree. Rays walk the
// nearer child first and skip what lies beyond the bound the visitor returns.
//
// Infinite bounds (a ground plane) and +-FLT_MAX are valid: a centroid
// coordinate is taken in double, 0 for [-inf, +inf], clamped to +-FLT_MAX;
// surface areas are taken in double with extents clamped, so no cost is NaN.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <xmmintrin.h>
#endif

#include "sapling/box.hpp"
#include "sapling/ray.hpp"

namespace sapling {
class TaskSystem;
}  // namespace sapling

namespace sapling::detail {

class AabbTree {
 public:
  /// The caller's payload per leaf (sapling::Slot): a dense small integer.
  using Slot = std::uint32_t;
  /// How build() splits a range of boxes in two.
  enum class Split : std::uint8_t {
    kBinnedSah,  ///< the cheapest of 32 binned SAH splits along the centroids' longest axis
    kMedian,     ///< at the median centroid along that axis
    kSorted,     ///< by the centroids' Morton order, sorted once: at the highest differing bit (a bulk load)
  };

  /// Replaces the content by `slots[i]` with `boxes[i]` (distinct slots, equal lengths): top-down, O(n log n).
  /// An empty build gives the storage back. With `tasks` (running more than one at once), a large kSorted
  /// build runs on them: the same tree, node for node, as without. Where memory runs short (std::bad_alloc),
  /// the tree is left empty.
  void build(std::span<const Slot> slots, std::span<const Box3> boxes, Split split = Split::kBinnedSah,
             TaskSystem* tasks = nullptr);
  /// Adds `slot` (not in the tree) with `box`: O(height).
  void insert(Slot slot, const Box3& box);
  /// Removes `slot`, which must be in the tree: O(height).
  void remove(Slot slot);
  /// Gives `slot`, which must be in the tree, the box `box`: O(height).
  void move(Slot slot, const Box3& box);
  /// Gives each of `slots` (all in the tree, distinct) its box in `boxes`, the tree's shape kept: the
  /// ancestors are refit, along each leaf's path (stopping where a box comes out unchanged) or all at once,
  /// whichever is less work: O(min(k height, n)). Cheap where boxes move a little (jitter, a drifting
  /// crowd); where they travel the tree's quality (area_ratio()) drifts, and the caller rebuilds.
  void move_in_place(std::span<const Slot> slots, std::span<const Box3> boxes);
  /// Whether `slot` is in the tree.
  bool contains(Slot slot) const noexcept { return slot < leaf_of_.size() && leaf_of_[slot] != kNull; }
  /// The number of leaves.
  std::size_t size() const noexcept { return leaves_; }
  /// The box `slot` (in the tree) was given.
  const Box3& box(Slot slot) const noexcept { return nodes_[leaf_of_[slot]].box; }
  /// The tree's quality: the internal nodes' surface areas summed, over the root's (with extents clamped to
  /// 2 FLT_MAX); the SAH's expected count of internal nodes a random ray entering the root enters. Lower is better.
  double area_ratio() const noexcept;
  /// The number of edges from the root to the deepest leaf (0 for one leaf or none).
  std::uint32_t height() const noexcept { return root_ == kNull ? 0 : nodes_[root_].height; }

  /// Calls visit(slot) for every leaf whose box overlaps `box` (closed, sapling::overlaps), each once, in no order.
  template <class Visit>
  void query(const Box3& box, Visit&& visit) const;
  /// A leaf a query met: its slot and its box as the tree holds it.
  struct Hit {
    Box3 box;
    Slot slot;
  };
  /// query() for many boxes at once: done(i, hits) exactly once for each box i, `hits` the leaves
  /// overlapping boxes[i] in the order query() visits them (valid during the call only); the boxes finish
  /// in an order fixed by the tree and the boxes alone. Walks of a large tree wait on memory at every
  /// level; there kQueryLanes walks advance in turn, each fetching the children it will test next while
  /// the others work, so that their waits overlap. done() may query this tree but must not change it.
  template <class Done>
  void query_each(std::span<const Box3> boxes, Done&& done) const;
  /// Whether query_each() interleaves its walks here (else it is query() box by box).
  bool interleaves_queries() const noexcept {
    return root_ != kNull && height() + 1 <= kInlineStack && leaves_ >= kInterleavedLeaves;
  }
  /// Calls visit(slot, t) for every leaf the valid ray `r` meets (sapling::ray_entry), t its entry, nearer
  /// subtrees first. visit returns the largest t still of interest (r.max_t for every hit, the best t so far
  /// for the closest); a subtree whose entry is greater is skipped, one at that bound still visited.
  template <class Visit>
  void ray(const Ray3& r, Visit&& visit) const;

  /// Makes room for `leaves` leaves (slots below `leaves`).
  void reserve(std::size_t leaves);
  /// Empties the tree, keeping its room.
  void clear() noexcept;
  /// Bytes held: nodes and the slot map.
  std::size_t memory_bytes() const noexcept;
  /// Checks every invariant: parent and child links agree and reach every
  /// live node once, node boxes are the exact union of their children's,
  /// heights are 1 + the taller child's, leaves and the slot map agree, the
  /// free list holds the other nodes; false on the first violation.
  bool validate() const;
  /// Whether `other` holds the same nodes at the same indices, the same
  /// slot map and root (for tests: builds on any thread count agree).
  bool identical(const AabbTree& other) const noexcept;

 private:
  static constexpr std::uint32_t kNull = ~std::uint32_t{0};
  static constexpr std::size_t kInlineStack = 64;
  static constexpr std::size_t kQueryLanes = 16;
  // Trees of fewer leaves (nodes of 10 MB) mostly sit in the caches, where
  // interleaving cost more than it saved: 100k region queries on a tree of
  // 100k leaves took 8% longer interleaved, on one of 1M half the time
  // (bench/results/concurrent-reads.md).
  static constexpr std::size_t kInterleavedLeaves = std::size_t{1} << 17;

  // A leaf has height 0 and its slot in child[0]; an internal node two children.
  // A free node links the next free one through `parent`.
  struct Node {
    Box3 box;
    std::uint32_t parent = kNull;
    std::array<std::uint32_t, 2> child{kNull, kNull};
    std::uint32_t height = 0;
  };
  static_assert(offsetof(Node, box) == 0 && sizeof(Box3) + sizeof(float) <= sizeof(Node), "NodeTest's loads");
  struct StackEntry {
    std::uint32_t node;
    float t;  // the node's ray entry (ray casts only)
  };
  // Whether a node's box overlaps a query's (closed), in one SSE compare per
  // side where there is SSE: lanes x, y, z, and a fourth that is ignored (a
  // node's box is followed by its other fields, so the load of four floats
  // at its max stays inside the node). 10-25% off a walk against the six
  // scalar compares, on trees of 500 to 100k boxes. (Not switched off by
  // SAPLING_SCALAR, which only the library's own files see: every file that
  // includes this header must agree on the struct.)
  struct NodeTest {
#if defined(__SSE2__)
    __m128 min, max;
    explicit NodeTest(const Box3& box) noexcept
        : min(_mm_setr_ps(box.min[0], box.min[1], box.min[2], 0.0f)),
          max(_mm_setr_ps(box.max[0], box.max[1], box.max[2], 0.0f)) {}
    bool operator()(const Node& node) const noexcept {
      const __m128 below = _mm_cmple_ps(_mm_loadu_ps(node.box.min.data()), max);
      const __m128 above = _mm_cmple_ps(min, _mm_loadu_ps(node.box.max.data()));
      return (_mm_movemask_ps(_mm_and_ps(below, above)) & 7) == 7;
    }
#else
    Box3 box;
    explicit NodeTest(const Box3& query) noexcept : box(query) {}
    bool operator()(const Node& node) const noexcept { return overlaps(node.box, box); }
#endif
  };

  // The nodes of a build, top down (aabb_tree.cpp).
  template <class SplitRange, class MakeLeaf>
  void lay_out(std::size_t n, SplitRange&& split, MakeLeaf&& leaf);
  // The same, the subtrees of at most `grain` leaves laid out as tasks (splits of bounded depth only).
  template <class SplitRange, class MakeLeaf>
  void lay_out(std::size_t n, std::size_t grain, SplitRange&& split, MakeLeaf&& leaf, TaskSystem& tasks);
  void make_children(std::uint32_t i, std::uint32_t first) noexcept;
  std::uint32_t allocate_node();
  void free_node(std::uint32_t i) noexcept;
  // Box and height of internal node i from its children.
  void refit(std::uint32_t i) noexcept;
  // Rotates i if its children's heights differ by more than one; the subtree's root after.
  std::uint32_t balance(std::uint32_t i) noexcept;
  // Refits and balances from i up to the root.
  void walk_up(std::uint32_t i) noexcept;
  // query(), visiting each leaf's node.
  template <class VisitLeaf>
  void visit_leaves(const Box3& box, VisitLeaf&& visit) const;
  // The walks proper, on a stack of at least height() + 1 entries.
  template <class Visit>
  void query_walk(const Box3& box, Visit& visit, StackEntry* stack) const;
  template <class Visit>
  void ray_walk(const Ray3& r, float t, Visit& visit, StackEntry* stack) const;

  // An allocator whose construct() without a value writes nothing: resize(n)
  // then leaves the new nodes to the bulk build's tasks, which write them
  // (and touch their pages first) in parallel instead of one thread zeroing
  // 80 MB at 1M leaves. Node is an aggregate, an implicit-lifetime type: the
  // storage holds Nodes once allocated (C++20). Every other growth passes a
  // Node{} to copy.
  template <class T>
  struct UnwrittenAllocator : std::allocator<T> {
    template <class U>
    struct rebind {
      using other = UnwrittenAllocator<U>;
    };
    UnwrittenAllocator() = default;
    template <class U>
    UnwrittenAllocator(const UnwrittenAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
    template <class U>
    void construct(U*) noexcept {}
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
      std::construct_at(p, std::forward<Args>(args)...);
    }
  };

  std::vector<Node, UnwrittenAllocator<Node>> nodes_;
  std::vector<std::uint32_t> leaf_of_;  // slot -> leaf node, kNull when absent
  std::uint32_t root_ = kNull;
  std::uint32_t free_ = kNull;
  std::size_t leaves_ = 0;
};

template <class Visit>
void AabbTree::query(const Box3& box, Visit&& visit) const {
  visit_leaves(box, [&](const Node& leaf) { visit(Slot{leaf.child[0]}); });
}

template <class VisitLeaf>
void AabbTree::visit_leaves(const Box3& box, VisitLeaf&& visit) const {
  if (root_ == kNull || !overlaps(nodes_[root_].box, box)) return;
  if (nodes_[root_].height == 0) {
    visit(nodes_[root_]);
    return;
  }
  if (height() + 1 <= kInlineStack) {
    std::array<StackEntry, kInlineStack> stack;
    query_walk(box, visit, stack.data());
  } else {
    std::vector<StackEntry> stack(std::size_t{height()} + 1);
    query_walk(box, visit, stack.data());
  }
}

template <class Visit>
void AabbTree::query_walk(const Box3& box, Visit& visit, StackEntry* stack) const {
  std::size_t top = 0;
  stack[top++] = {root_, 0.0f};
  const NodeTest meets(box);
  // Only internal nodes known to overlap are pushed: children are tested
  // here, and a leaf that overlaps is visited at once.
  while (top != 0) {
    const Node& node = nodes_[stack[--top].node];
    for (const std::uint32_t c : node.child) {
      const Node& child = nodes_[c];
      if (!meets(child)) continue;
      if (child.height == 0) {
        visit(child);
      } else {
        stack[top++] = {c, 0.0f};
      }
    }
  }
}

template <class Done>
void AabbTree::query_each(std::span<const Box3> boxes, Done&& done) const {
  std::vector<Hit> one;
  // No tree, a deep one, or one small enough for the caches: a walk at a time.
  if (!interleaves_queries()) {
    for (std::size_t i = 0; i < boxes.size(); ++i) {
      one.clear();
      visit_leaves(boxes[i], [&](const Node& leaf) { one.push_back({leaf.box, Slot{leaf.child[0]}}); });
      done(i, std::span<const Hit>(one));
    }
    return;
  }
  struct Lane {
    std::size_t box = 0;
    std::size_t top = 0;  // 0: idle
    std::array<std::uint32_t, kInlineStack> stack;
    std::vector<Hit> hits;
  };
  std::array<Lane, kQueryLanes> lanes;
  const Node* nodes = nodes_.data();
  const auto fetch_children = [nodes](const Node& n) {
    for (const std::uint32_t c : n.child) {
      const char* at = reinterpret_cast<const char*>(&nodes[c]);
      __builtin_prefetch(at);
      __builtin_prefetch(at + sizeof(Node) - 1);
    }
  };
  // The next box whose walk goes below the root, on `lane`; the others are answered at once.
  std::size_t next = 0;
  const auto start = [&](Lane& lane) {
    const Node& root = nodes[root_];
    while (next < boxes.size()) {
      const std::size_t i = next++;
      one.clear();
      if (overlaps(root.box, boxes[i])) {
        if (root.height != 0) {
          lane.box = i;
          lane.hits.clear();
          lane.stack[lane.top++] = root_;
          return true;
        }
        one.push_back({root.box, Slot{root.child[0]}});
      }
      done(i, std::span<const Hit>(one));
    }
    return false;
  };
  std::size_t busy = 0;
  for (Lane& lane : lanes) busy += start(lane) ? 1 : 0;
  // One node per lane in turn, popped and its children tested as query_walk() does.
  while (busy != 0) {
    for (Lane& lane : lanes) {
      if (lane.top == 0) continue;
      const NodeTest meets(boxes[lane.box]);
      const Node& node = nodes[lane.stack[--lane.top]];
      for (const std::uint32_t c : node.child) {
        const Node& child = nodes[c];
        // Pushed without a branch on the test, whose outcome is a coin
        // toss: the entry is written always and counted only for an inner
        // child that overlaps (the stack never holds more than the height).
        const bool hit = meets(child), inner = child.height != 0;
        if (hit && !inner) lane.hits.push_back({child.box, Slot{child.child[0]}});
        lane.stack[lane.top] = c;
        lane.top += static_cast<std::size_t>(hit & inner);
        if (hit & inner) fetch_children(child);
      }
      if (lane.top == 0) {
        done(lane.box, std::span<const Hit>(lane.hits));
        if (!start(lane)) --busy;
      }
    }
  }
}

template <class Visit>
void AabbTree::ray(const Ray3& r, Visit&& visit) const {
  float t = 0.0f;
  if (root_ == kNull || !ray_entry(r, nodes_[root_].box, t)) return;
  if (height() + 1 <= kInlineStack) {
    std::array<StackEntry, kInlineStack> stack;
    ray_walk(r, t, visit, stack.data());
  } else {
    std::vector<StackEntry> stack(std::size_t{height()} + 1);
    ray_walk(r, t, visit, stack.data());
  }
}

template <class Visit>
void AabbTree::ray_walk(const Ray3& r, float t, Visit& visit, StackEntry* stack) const {
  std::size_t top = 0;
  float bound = r.max_t;
  stack[top++] = {root_, t};
  while (top != 0) {
    const StackEntry e = stack[--top];
    if (e.t > bound) continue;  // the bound fell since it was pushed
    const Node& node = nodes_[e.node];
    if (node.height == 0) {
      bound = visit(Slot{node.child[0]}, e.t);
      continue;
    }
    // Both children tested here; the nearer pushed last, so walked first.
    float t0 = 0.0f, t1 = 0.0f;
    const bool hit0 = ray_entry(r, nodes_[node.child[0]].box, t0) && !(t0 > bound);
    const bool hit1 = ray_entry(r, nodes_[node.child[1]].box, t1) && !(t1 > bound);
    if (hit0 && hit1) {
      if (t0 <= t1) {
        stack[top++] = {node.child[1], t1};
        stack[top++] = {node.child[0], t0};
      } else {
        stack[top++] = {node.child[0], t0};
        stack[top++] = {node.child[1], t1};
      }
    } else if (hit0) {
      stack[top++] = {node.child[0], t0};
    } else if (hit1) {
      stack[top++] = {node.child[1], t1};
    }
  }
}

}  // namespace sapling::detail
