// What the demo draws over the bodies, kept from frame to frame: pairs as
// they are created (a bright flash) and deleted (a red line that fades),
// the algorithm's structure through sapling's DebugDraw (debug_draw.hpp),
// and the rolling graph of broad-phase time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sapling/debug_draw.hpp"
#include "world.hpp"

namespace sapling::demo {

/// Which overlays are shown (each toggled by a key).
struct OverlayFlags {
  bool pairs = true;      ///< current pairs, created flashes and deleted fades
  bool structure = true;  ///< the algorithm's debug draw (sap: sorted endpoints on the border)
  bool graph = true;      ///< the broad-phase time graph
  bool help = true;       ///< the key help line
};

/// Pairs created and deleted in recent frames, with their age.
class PairTrails {
 public:
  /// Frames a created pair flashes and a deleted pair fades.
  static constexpr int kFadeFrames = 30;
  /// A segment between two bodies' centres (world coordinates).
  struct Trail {
    float x0, y0, x1, y1;  ///< the two centres when the pair changed
    int age;               ///< frames since
    bool created;          ///< created (else deleted)
  };
  /// Ages the trails and adds the world's last frame's changes.
  void update(const World& world);
  void clear() { trails_.clear(); }
  const std::vector<Trail>& trails() const noexcept { return trails_; }

 private:
  std::vector<Trail> trails_;
};

/// The algorithm's structure as sapling's DebugDraw hands it over.
struct StructureLines : DebugDraw {
  /// An endpoint on the sweep axis: its coordinate, min or max, and whether
  /// this frame's swaps moved it.
  struct Endpoint {
    float x;       ///< the coordinate
    bool is_max;   ///< a max endpoint (else a min)
    bool swapped;  ///< its rank among the endpoints present in both frames changed
    Id owner;      ///< the box's id
  };
  std::vector<Endpoint> endpoints;  ///< in the structure's sorted order
  std::vector<Box3> boxes;          ///< cells or nodes
  /// Collects `bp`'s structure as of its last update, and marks the
  /// endpoints whose order changed since the last collect().
  void collect(const BroadPhase& bp);
  /// Forgets the last frame's order (a new scene or algorithm).
  void reset();
  void line(const DebugPoint& a, const DebugPoint& b, DebugCategory category, Id owner) override;
  void box(const Box3& box, DebugCategory category, Id owner) override;

 private:
  std::unordered_map<std::uint64_t, std::uint32_t> rank_;  // last frame: (owner, kind) -> rank among the kept
  std::vector<std::uint64_t> previous_;                    // last frame's keys in order
};

/// The last frames' broad-phase times.
class TimeGraph {
 public:
  static constexpr std::size_t kFrames = 240;  ///< frames kept
  void push(double ms);
  void clear() { values_.clear(); }
  /// Oldest first.
  const std::vector<double>& values() const noexcept { return values_; }
  double mean() const noexcept;
  double max() const noexcept;

 private:
  std::vector<double> values_;
};

}  // namespace sapling::demo
