// octree: a dynamic loose octree over the live boxes (octree.cpp teaches the
// method). Declared here for its tests.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "detail/frame_marks.hpp"
#include "sapling/algorithm.hpp"
#include "sapling/box_pruning.hpp"

namespace sapling::detail {

/// What the octree is built with beyond Options.
struct OctreeConfig {
  /// The edge of the smallest nodes (rounded up to a power of two); 0
  /// chooses it from the first boxes added (and again whenever the world
  /// has emptied).
  double leaf_size = 0;
  /// Boxes per smallest node aimed at when the size is chosen from the data.
  /// Measured: docs/algorithms/octree.md, "Tuning".
  double boxes_per_leaf = 32;
  /// A node holds the boxes whose centre lies in its cell and that fit in
  /// the cell grown by (looseness - 1) / 2 of its edge on every side: 1 is
  /// the tight octree, 2 the loose octree of Ulrich. 0 chooses it with the
  /// leaf size: the margin of a leaf is half the boxes' mean extent, so
  /// that a box of the mean size settles in a leaf wherever its centre is.
  double looseness = 0;
  /// The root grows to at most this many doublings above the leaf size; a
  /// box that would need more (or has an infinite bound) is outsized: kept
  /// apart in a list every query reads.
  int max_levels = 40;
};

/// A dynamic octree whose nodes keep their boxes in growable arrays
/// (Tracy, Buss and Woods 2009, section 4), persistent across frames.
class Octree final : public Algorithm {
 public:
  explicit Octree(const Options& options, OctreeConfig config = {});

  Reported update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) override;
  bool query(const Box3& box, std::vector<Slot>& out) const override;
  /// Down through the nodes whose loose bounds the ray enters, nearer first;
  /// the outsized list tested box by box.
  bool ray_cast(const Ray3& ray, RayVisitor visit) const override;
  std::size_t memory_bytes() const override;
  bool validate() const override;
  /// Draws the cell of every live node (DebugCategory::kNode) and counts
  /// them ("nodes").
  void debug_draw(DebugDraw& draw, std::span<const Id> ids) const override;

  /// The edge of the smallest nodes (0 before the first box).
  double leaf_size() const noexcept { return leaf_size_; }
  /// The looseness in use: 1 + twice a node's margin in edges.
  double looseness() const noexcept { return 1 + 2 * extra_; }
  /// Live nodes of the tree (the outsized list apart).
  std::size_t nodes() const noexcept { return live_nodes_; }
  /// Live boxes kept apart as outsized.
  std::size_t outsized() const noexcept { return nodes_.empty() ? 0 : nodes_[kOutsized].entries.size(); }
  /// Levels below the root, the root's included (0 when empty).
  int depth() const noexcept;

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  // Node 0 is not in the tree: it is the outsized list, read by every query.
  static constexpr std::uint32_t kOutsized = 0;

  struct Entry {
    Box3 box;
    Slot slot;
  };
  struct Node {
    std::array<double, 3> centre{};  // of the node's cell
    double half = 0;                 // half the cell's edge, a power of two
    Box3 bounds;                     // the loose cell, rounded outward and within the parent's
    // Per axis, the children's bounds on it: [0, 1] for the lower octants,
    // [2, 3] for the upper ones (a query picks children without reading them).
    std::array<std::array<float, 4>, 3> split{};
    std::array<std::uint32_t, 8> child{};
    std::uint32_t parent = kNone;
    std::uint32_t mask = 0;      // bit o set: child[o] is a node
    std::vector<Entry> entries;  // the boxes kept here, in no order
    bool live = false;
  };
  // Where a slot's box is: its node and its index in the node's entries.
  struct Location {
    std::uint32_t node = kNone;
    std::uint32_t at = 0;
  };
  // One object changed this frame: its box before and after.
  struct Change {
    Slot slot;
    bool had_old, has_new;
    Box3 old_box, new_box;

    // A box covering all it stands for this frame: old and new box.
    Box3 cover() const noexcept {
      if (!had_old) return new_box;
      if (!has_new) return old_box;
      Box3 c;
      for (int k = 0; k < 3; ++k) {
        c.min[k] = old_box.min[k] < new_box.min[k] ? old_box.min[k] : new_box.min[k];
        c.max[k] = old_box.max[k] > new_box.max[k] ? old_box.max[k] : new_box.max[k];
      }
      return c;
    }
  };

  const Change* changed(Slot s) const noexcept {
    const std::uint32_t at = marks_.find(s);
    return at != FrameMarks::kNone ? &changes_[at] : nullptr;
  }

  void size_from(std::span<const Box3> boxes);
  void collect_changes(const FrameOps& ops);
  // Whether a and b overlapped before the frame (a pair then: the manager
  // held exactly those) and whether they overlap now; `b_box` is b's box
  // when b did not change (then the same before and after).
  static bool overlapped(const Change& a, const Change* b, const Box3& b_box) noexcept {
    if (!a.had_old) return false;
    return b == nullptr ? overlaps(a.old_box, b_box) : b->had_old && overlaps(a.old_box, b->old_box);
  }
  static bool overlap_now(const Change& a, const Change* b, const Box3& b_box) noexcept {
    if (!a.has_new) return false;
    return b == nullptr ? overlaps(a.new_box, b_box) : b->has_new && overlaps(a.new_box, b->new_box);
  }
  void changed_pairs(std::span<const Id> ids, PairManager& pairs);
  PairFilter filter_;  // the frame's (FrameOps::filter)
  void unchanged_pairs(std::span<const Id> ids, PairManager& pairs);
  void apply_changes();
  template <class Hit>
  void query(const Box3& q, Hit&& hit) {
    visit(q, stack_, hit);
  }
  template <class Hit>
  void visit(const Box3& q, std::vector<std::uint32_t>& stack, Hit&& hit) const;

  std::uint32_t place(const Box3& b);
  int growth_needed(const Box3& b, std::array<double, 3>& centre, double& half) const noexcept;
  std::uint32_t child_for(std::uint32_t node, const Box3& b);
  std::uint32_t octant_of(const Node& n, const std::array<double, 3>& p) const noexcept;
  Box3 loose_bounds(const std::array<double, 3>& centre, double half) const noexcept;
  void set_split(Node& n) const noexcept;
  static Box3 child_bounds(const Node& parent, std::uint32_t octant) noexcept;
  bool contains(const Box3& outer, const Box3& inner) const noexcept;
  bool centre_in_cell(const Box3& b, const std::array<double, 3>& centre, double half) const noexcept;
  std::uint32_t new_node(const std::array<double, 3>& centre, double half, std::uint32_t parent);
  void free_node(std::uint32_t node);
  void append(std::uint32_t node, const Box3& b, Slot s);
  void erase_at(const Location& at);
  void erase(Slot s);
  void prune_upward(std::uint32_t node);
  void shrink_root();
  void release_scratch();
  void compact();

  OctreeConfig config_;
  int axes_;                 // 3, or 2 for a flat world (z is never split)
  double leaf_size_ = 0;     // 0 until sized
  double extra_ = 0.5;       // a node's margin on each side, in edges: (looseness - 1) / 2
  std::vector<Node> nodes_;  // nodes_[kOutsized] is the outsized list
  std::vector<std::uint32_t> free_nodes_;
  std::uint32_t root_ = kNone;
  std::size_t live_nodes_ = 0, live_objects_ = 0;
  std::vector<Location> where_;       // by slot
  FrameMarks marks_;                  // by slot: its index in changes_, this frame
  std::vector<Change> changes_;       // scratch: this frame's changes
  std::vector<std::uint32_t> stack_;  // scratch: a query's nodes to visit
  std::vector<Box3> covers_;          // scratch: the changes' covers, parallel to changes_
  std::vector<IndexPair> met_;        // scratch: the changes whose covers overlap
  BoxPruner pruner_;                  // finds met_
  std::size_t pruned_ = 0;            // the most covers pruned since pruner_ was made
};

}  // namespace sapling::detail
