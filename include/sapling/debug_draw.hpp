// A debug-draw callback: what an algorithm shows of its own structure (the
// sorted endpoints of a sweep axis, grid cells, tree nodes) as lines and
// boxes in world coordinates, so an engine can draw it in its own debug
// view. BroadPhase::debug_draw() hands the callback to the algorithm, which
// calls it for each element; the order of the calls is the structure's own
// (endpoints in sorted order). Nothing is allocated or changed on the way.
//
//   struct MyDraw : sapling::DebugDraw {
//     void line(const sapling::DebugPoint& a, const sapling::DebugPoint& b, sapling::DebugCategory c,
//               sapling::Id owner) override;
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
#include "sapling/pair.hpp"

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

/// The owner of a line or box that belongs to no one object (a cell, a node).
inline constexpr Id kNoOwner = 0xffffffffu;

/// The callback an algorithm draws into; every method defaults to doing
/// nothing, so a viewer overrides what it shows.
struct DebugDraw {
  virtual ~DebugDraw() = default;
  /// A segment from `a` to `b`, belonging to the object `owner` (a user
  /// id) or to none (kNoOwner). For an endpoint (kMinEndpoint,
  /// kMaxEndpoint) on sweep axis k, a[k] == b[k] is the coordinate, the
  /// segment spans the owner's extent on another axis, and a viewer that
  /// ranks each (owner, category) from one frame to the next sees which
  /// endpoints the frame's swaps moved.
  virtual void line(const DebugPoint& /*a*/, const DebugPoint& /*b*/, DebugCategory /*category*/, Id /*owner*/) {}
  /// A box (a cell, a node), belonging to the object `owner` or to none (kNoOwner).
  virtual void box(const Box3& /*box*/, DebugCategory /*category*/, Id /*owner*/) {}
  /// A named running total of the algorithm's work since it was created
  /// (sap: "swaps"); a viewer shows the differences between two frames.
  virtual void count(std::string_view /*name*/, std::uint64_t /*value*/) {}
  /// A named state of the algorithm in words (auto: "algorithm", the one it
  /// runs, and "reason", why); a viewer may print it.
  virtual void text(std::string_view /*name*/, std::string_view /*value*/) {}
};

}  // namespace sapling
