// A debug-draw callback: what an algorithm shows of its own structure (the
// sorted endpoints of a sweep axis, grid cells, tree nodes) as lines and
// boxes in world coordinates, so an engine can draw it in its own debug
// view. BroadPhase::debug_draw() hands the callback to the algorithm, which
// calls it for each element; the order of the calls is the structure's own
// (endpoints in sorted order). Nothing is allocated or changed on the way.
//
//   struct MyDraw : sapling::DebugDraw {
//     void line(const sapling::DebugPoint& a, const sapling::DebugPoint& b, sapling::DebugCategory c) override;
//   } draw;
//   broad_phase->debug_draw(draw);
//
// 2D worlds get z = 0 everywhere. An algorithm without a structure worth
// drawing (brute, sort-sweep, the recomputing ones) draws nothing, and one
// may draw nothing on some frames: sap draws its x endpoints only while its
// arrays are current, not after a frame it finished by recomputing.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "sapling/box.hpp"

namespace sapling {

/// A point in world coordinates (x, y, z).
using DebugPoint = std::array<float, 3>;

/// What a line or box drawn by an algorithm stands for.
enum class DebugCategory : std::uint8_t {
  kMinEndpoint,  ///< a box's min endpoint on a sweep axis: a line at the coordinate across the box
  kMaxEndpoint,  ///< a box's max endpoint on a sweep axis: a line at the coordinate across the box
  kCell,         ///< a cell of a grid
  kNode,         ///< a node of a tree
};

/// The callback an algorithm draws into; every method defaults to doing
/// nothing, so a viewer overrides what it shows.
struct DebugDraw {
  virtual ~DebugDraw() = default;
  /// A segment from `a` to `b`. For an endpoint (kMinEndpoint,
  /// kMaxEndpoint) on sweep axis k, a[k] == b[k] is the coordinate and the
  /// segment spans the owner's extent on another axis.
  virtual void line(const DebugPoint& /*a*/, const DebugPoint& /*b*/, DebugCategory /*category*/) {}
  /// A box (a cell, a node).
  virtual void box(const Box3& /*box*/, DebugCategory /*category*/) {}
  /// A named running total of the algorithm's work since it was created
  /// (sap: "swaps"); a viewer shows the differences between two frames.
  virtual void count(std::string_view /*name*/, std::uint64_t /*value*/) {}
};

}  // namespace sapling
