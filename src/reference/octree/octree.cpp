// octree: a dynamic loose octree over the live boxes, the spatial
// subdivision Tracy, Buss and Woods 2009 measure their SAP against (section
// 4: "an efficient dynamic octree", object lists in growable arrays). It is
// the baseline of the persistent algorithms: simple, insensitive to churn,
// blind to temporal coherence.
//
// A node is a cube cell (edge a power of two times the leaf size); its
// children split it in eight (four in a flat world: z is never split). A box
// lives in the smallest node whose cell holds its centre and whose loose
// bounds, the cell grown by a margin on every side, hold the box; never
// below the leaf size. Ulrich's loose octree takes a margin of half the
// edge, so a box settles at the level of its size wherever it is; a tight
// octree (no margin) keeps every box that straddles a split plane at that
// plane's node, thousands at the root of a large world. Here the margin is
// half the boxes' mean extent at the leaves (an eighth of the edge or less
// there), grown with the edge above: queries meet fewer neighbours.
// Children are made on demand and freed when empty; node lists are
// unordered arrays, a box's node and index kept by slot (swap removal).
//
// No world bounds: the root starts at the first box's cell and doubles
// outward, toward the box it must take, until it holds it. A box with an
// infinite bound, or one that would need more than max_levels doublings
// above the leaf size (+-FLT_MAX, 1e30 among unit boxes), is outsized:
// kept in node 0, a list outside the tree that every query reads.
//
// A frame: each changed box has a cover (old and new box). A pair that ends
// overlapped at the old boxes and one that starts overlaps at the new, so
// its covers overlap: between two changed boxes, one box pruning of the
// covers finds every such pair; between a changed box and an unchanged one
// (the same before and after), the cover's query of the tree does. The
// exact old and new boxes decide, so each pair is reported once, exactly.
//
// Invariants (validate()): every live box is in exactly one node, where
// its slot's location says; a tree node's box has its centre in the cell
// and lies in the loose bounds, and place() would put it there (the child
// holding its centre cannot take it, or the node is a leaf); a child's
// cell is its parent's octant, its bounds within the parent's; no tree
// node is empty and childless; the root is not an empty node of one child.
//
// Cost per frame: O(changes x (depth + nodes and boxes a query meets)) plus
// a box pruning of the changes; nothing follows the world's size but the
// depth. Choose it as a baseline, or where boxes come and go more than they
// move. Method and measurements: docs/algorithms/octree.md.
#include "reference/octree/octree.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "algorithms/builtin.hpp"
#include "detail/cell_size_policy.hpp"
#include "detail/reserve.hpp"
#include "detail/settings.hpp"

namespace sapling::detail {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Free nodes whose arrays are kept for reuse beyond a quarter of the live
// ones: a box crossing into an empty node allocates nothing.
constexpr std::size_t kKeptFreeNodes = 64;
// A coordinate more than 2^50 leaf sizes from 0 is outsized: node centres,
// multiples of half a leaf, stay exact in double.
constexpr double kFarInLeaves = 0x1p50;
// The least margin of a node chosen from the data, in edges.
constexpr double kLeastMargin = 1.0 / 64;
// Per axis, the octants on its lower side (their bit for the axis clear).
constexpr std::array<std::uint32_t, 3> kLowerOctants = {0x55, 0x33, 0x0f};

double centre_of(const Box3& b, int k) noexcept { return 0.5 * double(b.min[k]) + 0.5 * double(b.max[k]); }

}  // namespace

Octree::Octree(const Options& options, OctreeConfig config) : config_(config), axes_(options.dims == 2 ? 2 : 3) {
  if (config_.leaf_size > 0) leaf_size_ = std::exp2(std::ceil(std::log2(config_.leaf_size)));
  if (config_.looseness > 0) extra_ = std::max(0.0, (config_.looseness - 1) / 2);
  nodes_.emplace_back();  // the outsized list
  nodes_[kOutsized].bounds = Box3{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}};
}

Reported Octree::update(const FrameOps& ops, std::span<const Id> ids, PairManager& pairs) {
  filter_ = ops.filter;
  if (live_objects_ == 0 && !ops.added.empty()) size_from(ops.added_boxes);
  marks_.next_frame();
  collect_changes(ops);
  changed_pairs(ids, pairs);
  apply_changes();
  unchanged_pairs(ids, pairs);
  shrink_root();
  release_scratch();
  return Reported::kChanges;
}

// The leaf size and margin for a world that starts with `boxes`, where the
// configuration leaves them open. The leaf at least 2^-20 of the largest
// coordinate, so that the cells of the world stay apart in float.
void Octree::size_from(std::span<const Box3> boxes) {
  double largest = 0, extents = 0;
  std::size_t finite = 0;
  for (const Box3& b : boxes) {
    double extent = 0;
    bool is_finite = true;
    for (int k = 0; k < axes_; ++k) {
      is_finite = is_finite && std::isfinite(b.min[k]) && std::isfinite(b.max[k]);
      for (const float x : {b.min[k], b.max[k]}) {
        if (std::isfinite(x)) largest = std::max(largest, std::abs(double(x)));
      }
      extent = std::max(extent, double(b.max[k]) - double(b.min[k]));
    }
    if (is_finite) extents += extent, ++finite;
  }
  if (config_.leaf_size <= 0) {
    const double size = std::max(cell_size_for(boxes, boxes.size(), axes_, config_.boxes_per_leaf), largest * 0x1p-20);
    leaf_size_ = std::exp2(std::round(std::log2(size)));
  }
  if (config_.looseness <= 0) {
    const double mean_extent = finite > 0 ? extents / double(finite) : 0.0;
    extra_ = std::clamp(mean_extent / 2 / leaf_size_, kLeastMargin, 0.5);
  }
}

// The frame's changes, removals then moves then additions, and each
// changed slot marked with its change.
void Octree::collect_changes(const FrameOps& ops) {
  changes_.clear();
  detail::reserve_geometric(changes_, ops.removed.size() + ops.moved.size() + ops.added.size());
  const auto mark = [&](Slot s) { marks_.mark(s, static_cast<std::uint32_t>(changes_.size())); };
  const auto box_of = [&](Slot s) -> const Box3& { return nodes_[where_[s].node].entries[where_[s].at].box; };
  for (const Slot s : ops.removed) {
    mark(s);
    changes_.push_back(Change{s, true, false, box_of(s), {}});
  }
  for (std::size_t i = 0; i < ops.moved.size(); ++i) {
    mark(ops.moved[i]);
    changes_.push_back(Change{ops.moved[i], true, true, box_of(ops.moved[i]), ops.moved_boxes[i]});
  }
  for (std::size_t i = 0; i < ops.added.size(); ++i) {
    mark(ops.added[i]);
    changes_.push_back(Change{ops.added[i], false, true, {}, ops.added_boxes[i]});
  }
}

// The pairs of two changed boxes that end or start: a pair that ends
// overlapped at the old boxes, one that starts overlaps at the new ones, so
// either way the two covers overlap; one box pruning of the covers finds
// them all.
void Octree::changed_pairs(std::span<const Id> ids, PairManager& pairs) {
  covers_.clear();
  for (const Change& c : changes_) covers_.push_back(c.cover());
  met_.clear();
  pruner_.complete(covers_, met_);
  pruned_ = std::max(pruned_, covers_.size());
  for (const IndexPair& m : met_) {
    const Change &a = changes_[m.i], &b = changes_[m.j];
    const bool was = overlapped(a, &b, b.old_box), now = overlap_now(a, &b, b.new_box);
    if (was == now) continue;
    if (now) {
      if (filter_.accepts(a.slot, b.slot)) pairs.add(ids[a.slot], ids[b.slot]);
    } else {
      pairs.remove(ids[a.slot], ids[b.slot]);
    }
  }
}

// The pairs of a changed box and an unchanged one that end or start: the
// changed box's cover queries the tree (whose unchanged boxes are where they
// were) once, and the exact old and new boxes decide. Nothing to do when
// every live box changed.
void Octree::unchanged_pairs(std::span<const Id> ids, PairManager& pairs) {
  std::size_t changed_live = 0;
  for (const Change& c : changes_) changed_live += c.has_new;
  if (changed_live == live_objects_) return;
  for (std::size_t i = 0; i < changes_.size(); ++i) {
    const Change& a = changes_[i];
    query(covers_[i], [&](const Entry& e) {
      if (changed(e.slot) != nullptr) return;  // itself, or a pair of changed_pairs()
      const bool was = overlapped(a, nullptr, e.box), now = overlap_now(a, nullptr, e.box);
      if (was == now) return;
      if (now) {
        if (filter_.accepts(a.slot, e.slot)) pairs.add(ids[a.slot], ids[e.slot]);
      } else {
        pairs.remove(ids[a.slot], ids[e.slot]);
      }
    });
  }
}

// Every entry whose box overlaps q (closed): the outsized list, then the
// tree from the root, down through the nodes whose loose bounds meet q.
template <class Hit>
void Octree::visit(const Box3& q, std::vector<std::uint32_t>& stack, Hit&& hit) const {
  for (const Entry& e : nodes_[kOutsized].entries) {
    if (overlaps(e.box, q)) hit(e);
  }
  if (root_ == kNone || !overlaps(nodes_[root_].bounds, q)) return;
  stack.clear();
  stack.push_back(root_);
  while (!stack.empty()) {
    const Node& n = nodes_[stack.back()];
    stack.pop_back();
    for (const Entry& e : n.entries) {
      if (overlaps(e.box, q)) hit(e);
    }
    if (n.mask == 0) continue;
    // The octants whose bounds meet q: per axis, the lower or upper half.
    std::uint32_t meet = n.mask;
    for (int k = 0; k < axes_; ++k) {
      const std::array<float, 4>& s = n.split[k];
      const std::uint32_t lower = q.min[k] <= s[1] && s[0] <= q.max[k] ? kLowerOctants[k] : 0;
      const std::uint32_t upper = q.min[k] <= s[3] && s[2] <= q.max[k] ? ~kLowerOctants[k] : 0;
      meet &= lower | upper;
    }
    for (; meet != 0; meet &= meet - 1) stack.push_back(n.child[std::countr_zero(meet)]);
  }
}

bool Octree::query(const Box3& box, std::vector<Slot>& out) const {
  std::vector<std::uint32_t> stack;  // a region query's own: the frame's scratch is not touched
  visit(box, stack, [&](const Entry& e) { out.push_back(e.slot); });
  return true;
}

// Every entry the ray meets: the outsized list, then the tree from the root
// through the nodes whose loose bounds the ray enters within the bound. A
// node's bounds hold every box of its subtree, so a ray that misses them (or
// enters them past the bound) misses those boxes (or enters them later:
// ray.hpp). Children are walked nearer first, so that a closest-hit search
// tightens its bound early; the stack holds at most 7 nodes per level.
bool Octree::ray_cast(const Ray3& ray, RayVisitor visit) const {
  struct Pending {
    std::uint32_t node;
    float t;
  };
  float bound = ray.max_t, t = 0;
  for (const Entry& e : nodes_[kOutsized].entries) {
    if (ray_entry(ray, e.box, t) && !(t > bound)) bound = visit(e.slot, t);
  }
  if (root_ == kNone || !ray_entry(ray, nodes_[root_].bounds, t) || t > bound) return true;
  std::array<Pending, 512> local;
  std::vector<Pending> deep;
  Pending* stack = local.data();
  if (const std::size_t most = 8 * (std::size_t(std::max(config_.max_levels, 0)) + 2); most > local.size()) {
    deep.resize(most);
    stack = deep.data();
  }
  std::size_t top = 0;
  stack[top++] = {root_, t};
  while (top != 0) {
    const Pending p = stack[--top];
    if (p.t > bound) continue;  // the bound fell since it was pushed
    const Node& n = nodes_[p.node];
    for (const Entry& e : n.entries) {
      if (ray_entry(ray, e.box, t) && !(t > bound)) bound = visit(e.slot, t);
    }
    // The children the ray enters within the bound, pushed farthest first.
    const std::size_t first = top;
    for (std::uint32_t m = n.mask; m != 0; m &= m - 1) {
      const std::uint32_t c = n.child[std::countr_zero(m)];
      if (!ray_entry(ray, nodes_[c].bounds, t) || t > bound) continue;
      std::size_t at = top++;
      for (; at > first && stack[at - 1].t < t; --at) stack[at] = stack[at - 1];
      stack[at] = {c, t};
    }
  }
  return true;
}

// The tree takes the frame's changes: a moved box stays in its entry when
// place() finds the same node, else it is appended to the new node before
// leaving the old one (whose emptied ancestors are then freed: never the
// new node, which holds it).
void Octree::apply_changes() {
  for (const Change& c : changes_) {
    if (!c.has_new) {
      erase(c.slot);
      --live_objects_;
      continue;
    }
    const std::uint32_t to = place(c.new_box);
    if (!c.had_old) {
      if (c.slot >= where_.size()) {
        detail::reserve_geometric(where_, std::size_t{c.slot} + 1);
        where_.resize(std::size_t{c.slot} + 1);
      }
      append(to, c.new_box, c.slot);
      ++live_objects_;
      continue;
    }
    const Location from = where_[c.slot];
    if (from.node == to) {
      nodes_[to].entries[from.at].box = c.new_box;
      continue;
    }
    append(to, c.new_box, c.slot);
    erase_at(from);
    prune_upward(from.node);
  }
}

bool Octree::contains(const Box3& outer, const Box3& inner) const noexcept {
  bool in = true;
  for (int k = 0; k < axes_; ++k) in = in && outer.min[k] <= inner.min[k] && inner.max[k] <= outer.max[k];
  return in;
}

bool Octree::centre_in_cell(const Box3& b, const std::array<double, 3>& centre, double half) const noexcept {
  bool in = true;
  for (int k = 0; k < axes_; ++k) {
    const double c = centre_of(b, k);
    in = in && centre[k] - half <= c && c < centre[k] + half;
  }
  return in;
}

// The cell grown by extra_ of its edge on every side, rounded outward to
// floats; z unbounded in a flat world.
Box3 Octree::loose_bounds(const std::array<double, 3>& centre, double half) const noexcept {
  Box3 b{{-kInf, -kInf, -kInf}, {kInf, kInf, kInf}};
  const double reach = half + 2 * half * extra_;
  for (int k = 0; k < axes_; ++k) {
    b.min[k] = round_down(centre[k] - reach);  // box.hpp
    b.max[k] = round_up(centre[k] + reach);
  }
  return b;
}

// Doublings of the root needed before it holds b (its centre in the cell,
// the box in the loose bounds), or -1 if b is outsized. Without a root,
// the root b would start.
int Octree::growth_needed(const Box3& b, std::array<double, 3>& centre, double& half) const noexcept {
  const double far = leaf_size_ * kFarInLeaves;
  for (int k = 0; k < axes_; ++k) {
    if (!(std::abs(double(b.min[k])) <= far && std::abs(double(b.max[k])) <= far)) return -1;  // inf too
  }
  int level = 0;
  if (root_ == kNone) {
    half = leaf_size_ / 2;
    centre = {0, 0, 0};
    for (int k = 0; k < axes_; ++k) centre[k] = (std::floor(centre_of(b, k) / leaf_size_) + 0.5) * leaf_size_;
  } else {
    half = nodes_[root_].half;
    centre = nodes_[root_].centre;
    level = std::ilogb(2 * half / leaf_size_);
  }
  for (int doublings = 0;; ++doublings) {
    if (centre_in_cell(b, centre, half) && contains(loose_bounds(centre, half), b)) return doublings;
    if (level + doublings >= config_.max_levels) return -1;
    for (int k = 0; k < axes_; ++k) centre[k] += centre_of(b, k) >= centre[k] ? half : -half;
    half *= 2;
  }
}

// The node b belongs in (made on the way if absent; the root grown if
// needed), or the outsized list.
std::uint32_t Octree::place(const Box3& b) {
  std::array<double, 3> centre;
  double half;
  const int doublings = growth_needed(b, centre, half);
  if (doublings < 0) return kOutsized;
  if (root_ == kNone) {
    root_ = new_node(centre, half, kNone);
  } else {
    for (int i = 0; i < doublings; ++i) {
      // The old root becomes the octant of a root twice its edge, on the side
      // away from b's centre.
      const std::uint32_t old = root_;
      std::array<double, 3> up = nodes_[old].centre;
      const double h = nodes_[old].half;
      for (int k = 0; k < axes_; ++k) up[k] += centre_of(b, k) >= up[k] ? h : -h;
      root_ = new_node(up, 2 * h, kNone);
      Node& r = nodes_[root_];
      Node& o = nodes_[old];
      // The new bounds and the old root's side of the split hold the old
      // bounds, whatever the rounding.
      const std::uint32_t at = octant_of(r, o.centre);
      for (int k = 0; k < 3; ++k) {
        r.bounds.min[k] = std::min(r.bounds.min[k], o.bounds.min[k]);
        r.bounds.max[k] = std::max(r.bounds.max[k], o.bounds.max[k]);
      }
      set_split(r);
      for (int k = 0; k < 3; ++k) {
        float* side = &r.split[k][(at >> k) & 1 ? 2 : 0];
        side[0] = std::min(side[0], o.bounds.min[k]);
        side[1] = std::max(side[1], o.bounds.max[k]);
      }
      r.child[at] = old;
      r.mask = 1u << at;
      o.parent = root_;
    }
  }
  std::uint32_t node = root_;
  for (;;) {
    const std::uint32_t c = child_for(node, b);
    if (c == kNone) return node;
    node = c;
  }
}

std::uint32_t Octree::octant_of(const Node& n, const std::array<double, 3>& p) const noexcept {
  std::uint32_t o = 0;
  for (int k = 0; k < axes_; ++k) o |= std::uint32_t(p[k] >= n.centre[k]) << k;
  return o;
}

// The child of `node` that b descends to (made if absent), or kNone where
// b stops: the node is a leaf, or the child holding b's centre cannot
// hold b.
std::uint32_t Octree::child_for(std::uint32_t node, const Box3& b) {
  const Node& n = nodes_[node];
  if (n.half < leaf_size_) return kNone;  // its edge is the leaf size
  std::array<double, 3> p{};
  for (int k = 0; k < axes_; ++k) p[k] = centre_of(b, k);
  const std::uint32_t o = octant_of(n, p);
  if (n.child[o] != kNone) return contains(nodes_[n.child[o]].bounds, b) ? n.child[o] : kNone;
  if (!contains(child_bounds(n, o), b)) return kNone;
  std::array<double, 3> centre = n.centre;
  const double half = n.half / 2;
  for (int k = 0; k < axes_; ++k) centre[k] += (o >> k) & 1 ? half : -half;
  const std::uint32_t c = new_node(centre, half, node);  // may move nodes_
  Node& parent = nodes_[node];
  parent.child[o] = c;
  parent.mask |= 1u << o;
  return c;
}

// The children's loose bounds on each axis, kept within the node's (nested
// whatever the rounding, so that a query may skip a child's whole subtree).
void Octree::set_split(Node& n) const noexcept {
  for (int k = 0; k < 3; ++k) {
    std::array<double, 3> lower = n.centre, upper = n.centre;
    lower[k] -= n.half / 2;
    upper[k] += n.half / 2;
    const Box3 lo = loose_bounds(lower, n.half / 2), hi = loose_bounds(upper, n.half / 2);
    n.split[k] = {std::max(lo.min[k], n.bounds.min[k]), std::min(lo.max[k], n.bounds.max[k]),
                  std::max(hi.min[k], n.bounds.min[k]), std::min(hi.max[k], n.bounds.max[k])};
  }
}

Box3 Octree::child_bounds(const Node& parent, std::uint32_t octant) noexcept {
  Box3 b;
  for (int k = 0; k < 3; ++k) {
    const std::size_t side = (octant >> k) & 1 ? 2 : 0;
    b.min[k] = parent.split[k][side];
    b.max[k] = parent.split[k][side + 1];
  }
  return b;
}

std::uint32_t Octree::new_node(const std::array<double, 3>& centre, double half, std::uint32_t parent) {
  std::uint32_t id;
  if (!free_nodes_.empty()) {
    id = free_nodes_.back();
    free_nodes_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.emplace_back();
  }
  Node& n = nodes_[id];
  n.centre = centre;
  n.half = half;
  n.bounds =
      parent == kNone ? loose_bounds(centre, half) : child_bounds(nodes_[parent], octant_of(nodes_[parent], centre));
  set_split(n);
  n.child.fill(kNone);
  n.parent = parent;
  n.mask = 0;
  n.live = true;
  ++live_nodes_;
  return id;
}

void Octree::free_node(std::uint32_t node) {
  Node& n = nodes_[node];
  n.live = false;
  n.entries.clear();  // the storage is kept for reuse (release_scratch() trims it)
  free_nodes_.push_back(node);
  --live_nodes_;
}

void Octree::append(std::uint32_t node, const Box3& b, Slot s) {
  std::vector<Entry>& v = nodes_[node].entries;
  where_[s] = Location{node, static_cast<std::uint32_t>(v.size())};
  v.push_back(Entry{b, s});
}

// Takes out the entry at `at`; the last entry of its node fills the hole.
void Octree::erase_at(const Location& at) {
  std::vector<Entry>& v = nodes_[at.node].entries;
  const Entry last = v.back();
  v.pop_back();
  if (at.at < v.size()) {
    v[at.at] = last;
    where_[last.slot].at = at.at;
  }
}

void Octree::erase(Slot s) {
  const Location at = where_[s];
  erase_at(at);
  where_[s].node = kNone;
  prune_upward(at.node);
}

// Frees `node` and then its ancestors while they are empty and childless.
void Octree::prune_upward(std::uint32_t node) {
  while (node != kOutsized && node != kNone) {
    Node& n = nodes_[node];
    if (!n.entries.empty() || n.mask != 0) return;
    const std::uint32_t parent = n.parent;
    if (parent == kNone) {
      root_ = kNone;
    } else {
      Node& p = nodes_[parent];
      const auto at = static_cast<std::uint32_t>(std::find(p.child.begin(), p.child.end(), node) - p.child.begin());
      p.child[at] = kNone;
      p.mask &= ~(1u << at);
    }
    free_node(node);
    node = parent;
  }
}

// A root that holds nothing itself and has one child hands over to it: the
// reverse of growth, once the world has moved away or emptied.
void Octree::shrink_root() {
  while (root_ != kNone) {
    const Node& r = nodes_[root_];
    if (!r.entries.empty() || std::popcount(r.mask) != 1) return;
    const std::uint32_t only = r.child[std::countr_zero(r.mask)];
    free_node(root_);
    root_ = only;
    nodes_[only].parent = kNone;
  }
}

// Scratch sized for a mass insertion or removal is given back once frames
// need far less; after a mass removal the live nodes are renumbered into a
// fresh array; everything goes when the world empties.
void Octree::release_scratch() {
  const std::size_t keep = std::max<std::size_t>(1024, live_objects_ / 16);
  if (changes_.capacity() > keep && changes_.size() * 4 < changes_.capacity()) {
    detail::free_storage(changes_);
    detail::free_storage(covers_);
    detail::free_storage(met_);
  }
  if (pruned_ > keep && changes_.size() * 4 < pruned_) {
    pruner_ = BoxPruner{};  // its buffers were sized for a mass insertion or removal
    pruned_ = 0;
  }
  if (live_objects_ == 0) {
    nodes_.resize(1);
    nodes_.shrink_to_fit();
    detail::free_storage(nodes_[kOutsized].entries);
    detail::free_storage(free_nodes_);
    detail::free_storage(where_);
    marks_.release();
    detail::free_storage(stack_);
    detail::free_storage(covers_);
    detail::free_storage(met_);
    pruner_ = BoxPruner{};
    pruned_ = 0;
    return;
  }
  if (nodes_.size() > 4 * kKeptFreeNodes && live_nodes_ * 4 < nodes_.size()) {
    compact();
    return;
  }
  const std::size_t kept_free = kKeptFreeNodes + live_nodes_ / 4;
  for (std::size_t i = kept_free; i < free_nodes_.size(); ++i) detail::free_storage(nodes_[free_nodes_[i]].entries);
  if (where_.size() > 1024 && live_objects_ * 4 < where_.size()) {
    while (!where_.empty() && where_.back().node == kNone) where_.pop_back();
    where_.shrink_to_fit();
    marks_.shrink_to(where_.size());
  }
}

// The live nodes renumbered into a fresh array (node ids live only in the
// tree and the locations).
void Octree::compact() {
  std::vector<std::uint32_t> renumber(nodes_.size(), kNone);
  std::vector<Node> kept;
  kept.reserve(live_nodes_ + 1);
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    if (i != kOutsized && !nodes_[i].live) continue;
    renumber[i] = static_cast<std::uint32_t>(kept.size());
    kept.push_back(std::move(nodes_[i]));
  }
  for (std::uint32_t i = 0; i < kept.size(); ++i) {
    Node& n = kept[i];
    if (n.parent != kNone) n.parent = renumber[n.parent];
    for (std::uint32_t& c : n.child) {
      if (c != kNone) c = renumber[c];
    }
    for (const Entry& e : n.entries) where_[e.slot].node = i;
  }
  if (root_ != kNone) root_ = renumber[root_];
  nodes_.swap(kept);
  detail::free_storage(free_nodes_);
}

int Octree::depth() const noexcept {
  int deepest = 0;
  for (std::uint32_t i = 1; i < nodes_.size(); ++i) {
    if (!nodes_[i].live) continue;
    int d = 1;
    for (std::uint32_t p = nodes_[i].parent; p != kNone; p = nodes_[p].parent) ++d;
    deepest = std::max(deepest, d);
  }
  return deepest;
}

std::size_t Octree::memory_bytes() const {
  std::size_t bytes = nodes_.capacity() * sizeof(Node) + free_nodes_.capacity() * sizeof(std::uint32_t) +
                      where_.capacity() * sizeof(Location) + marks_.memory_bytes() +
                      changes_.capacity() * sizeof(Change) + stack_.capacity() * sizeof(std::uint32_t) +
                      covers_.capacity() * sizeof(Box3) + met_.capacity() * sizeof(IndexPair) + pruner_.memory_bytes();
  for (const Node& n : nodes_) bytes += n.entries.capacity() * sizeof(Entry);
  return bytes;
}

void Octree::debug_draw(DebugDraw& draw, std::span<const Id> /*ids*/) const {
  for (std::uint32_t i = 1; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (!n.live) continue;
    Box3 cell{};
    for (int k = 0; k < axes_; ++k) {
      cell.min[k] = static_cast<float>(n.centre[k] - n.half);
      cell.max[k] = static_cast<float>(n.centre[k] + n.half);
    }
    draw.box(cell, DebugCategory::kNode, kNoOwner);
  }
  draw.count("nodes", live_nodes_);
}

bool Octree::validate() const {
  // Every entry where its slot's location says, each slot once.
  std::size_t entries = 0;
  for (std::uint32_t i = 0; i < nodes_.size(); ++i) {
    const Node& n = nodes_[i];
    if (i != kOutsized && !n.live) {
      if (!n.entries.empty()) return false;
      continue;
    }
    for (std::uint32_t j = 0; j < n.entries.size(); ++j) {
      const Slot s = n.entries[j].slot;
      if (s >= where_.size() || where_[s].node != i || where_[s].at != j) return false;
    }
    entries += n.entries.size();
  }
  if (entries != live_objects_) return false;
  std::size_t located = 0;
  for (const Location& l : where_) located += l.node != kNone;
  if (located != live_objects_) return false;
  // The tree, from the root: links, cells, bounds, placement.
  if (root_ == kNone) return live_nodes_ == 0 && nodes_[kOutsized].entries.size() == live_objects_;
  const Node& root = nodes_[root_];
  if (!root.live || root.parent != kNone || (root.entries.empty() && std::popcount(root.mask) == 1)) return false;
  if (!contains(root.bounds, loose_bounds(root.centre, root.half))) return false;
  std::vector<std::uint32_t> todo{root_};
  std::size_t reached = 0;
  while (!todo.empty()) {
    const std::uint32_t i = todo.back();
    todo.pop_back();
    const Node& n = nodes_[i];
    ++reached;
    if (!n.live || n.half * 2 < leaf_size_ || (n.entries.empty() && n.mask == 0)) return false;
    std::uint32_t mask = 0;
    for (std::uint32_t o = 0; o < 8; ++o) {
      const std::uint32_t c = n.child[o];
      if (c == kNone) continue;
      mask |= 1u << o;
      const Node& ch = nodes_[c];
      std::array<double, 3> centre = n.centre;
      for (int k = 0; k < axes_; ++k) centre[k] += (o >> k) & 1 ? n.half / 2 : -n.half / 2;
      if (o >> axes_ != 0 || ch.parent != i || ch.half != n.half / 2 || ch.centre != centre) return false;
      if (!contains(child_bounds(n, o), ch.bounds) || !contains(n.bounds, child_bounds(n, o))) return false;
      todo.push_back(c);
    }
    if (mask != n.mask) return false;
    for (const Entry& e : n.entries) {
      if (!contains(n.bounds, e.box) || !centre_in_cell(e.box, n.centre, n.half)) return false;
      // place() would stop here: the child holding the centre cannot take it.
      if (n.half >= leaf_size_) {
        std::array<double, 3> p{};
        for (int k = 0; k < axes_; ++k) p[k] = centre_of(e.box, k);
        const std::uint32_t o = octant_of(n, p);
        if (contains(n.child[o] != kNone ? nodes_[n.child[o]].bounds : child_bounds(n, o), e.box)) return false;
      }
    }
  }
  return reached == live_nodes_;
}

std::unique_ptr<Algorithm> make_octree(const Options& options) {
  no_settings(options);
  return std::make_unique<Octree>(options);
}

std::unique_ptr<Algorithm> make_octree_with(const Options& options, const OctreeConfig& config) {
  return std::make_unique<Octree>(options, config);
}

}  // namespace sapling::detail
