// The demo's physics world: a small 2D rigid-body loop (no rotation) over
// sapling's public API only. Each frame runs a few sub-steps; a sub-step
// integrates gravity, hands the moved bodies' boxes to the broad phase,
// tests the broad phase's pairs exactly (circle-circle, circle-box,
// box-box: the narrow phase), and resolves contacts by impulses with a
// positional correction. Bodies are circles or axis-aligned boxes, dynamic
// or static (a static body never moves, so the broad phase never sees it
// again after its add).
//
// Deterministic: the same scene, count, fraction and seed give the same
// frames whatever the algorithm, because the narrow phase walks the pairs
// sorted and every algorithm reports the same pairs. Switching algorithm
// (set_algorithm) rebuilds the broad phase from the boxes it was last given
// and checks that the new one reports exactly the same pairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sapling/broad_phase.hpp"

namespace sapling::demo {

/// A body's shape: a circle of radius `half[0]`, or a box of half extents `half`.
enum class Shape : std::uint8_t { kCircle, kBox };

/// One rigid body (no rotation).
struct Body {
  Id id = 0;                     ///< the broad phase's id, unique for the world's life
  Shape shape = Shape::kCircle;  ///< circle or axis-aligned box
  float x = 0, y = 0;            ///< centre
  float vx = 0, vy = 0;          ///< velocity
  float half[2] = {0.5f, 0.5f};  ///< half extents (a circle: radius in half[0] and half[1])
  float inv_mass = 1;            ///< 0 for a static body
  int life = -1;                 ///< frames left before it despawns; -1 forever
  int slow_frames = 0;           ///< frames in a row below the resting speed
  bool touching = false;         ///< in contact with another body (narrow phase) this frame
  Box2 box{};                    ///< the box last handed to the broad phase
  bool is_static() const noexcept { return inv_mass == 0; }
  bool resting() const noexcept { return slow_frames >= kRestingFrames; }
  /// Frames below the resting speed after which a body counts as resting.
  static constexpr int kRestingFrames = 20;
};

/// What one frame did (summed over its sub-steps).
struct FrameStats {
  std::size_t objects = 0;    ///< live bodies
  std::size_t pairs = 0;      ///< overlapping box pairs after the frame
  std::size_t created = 0;    ///< pairs created during the frame
  std::size_t deleted = 0;    ///< pairs deleted during the frame
  std::size_t contacts = 0;   ///< pairs whose shapes touch (narrow phase), last sub-step
  std::uint64_t swaps = 0;    ///< endpoint swaps (algorithms that report them, e.g. sap)
  double broad_phase_ms = 0;  ///< time in BroadPhase::update(), wall clock
};

class World {
 public:
  /// An empty world [0, width] x [0, height] on algorithm `algorithm`;
  /// throws std::invalid_argument with the reason if it cannot be created.
  /// A broad phase that refuses what a step gives it is reported by
  /// last_error() (adds: the bodies are dropped) or, for what it should
  /// never refuse (moves, removes, a frame), by std::runtime_error.
  World(std::string algorithm, float width, float height);

  /// Switches to another registered algorithm: a new broad phase gets every
  /// body's last box, and must report the same pairs. On failure (unknown
  /// name, "NAME:" with empty settings, boxes the algorithm refuses,
  /// different pairs) returns the reason and keeps the current algorithm;
  /// "" on success.
  std::string set_algorithm(const std::string& name);
  const std::string& algorithm() const noexcept { return algorithm_; }

  /// Removes every body and sets the world's size.
  void reset(float width, float height);
  /// Adds a body (its id is assigned); it enters the broad phase at the next step.
  void add(Body body);
  /// Gravity along y (negative: down).
  void set_gravity(float g) noexcept { gravity_ = g; }
  void set_sub_steps(int n) noexcept { sub_steps_ = n < 1 ? 1 : n; }

  /// Advances one frame of `dt` seconds.
  void step(float dt = 1.0f / 60.0f);

  const std::vector<Body>& bodies() const noexcept { return bodies_; }
  const FrameStats& stats() const noexcept { return stats_; }
  /// Pairs created and deleted during the last frame, each list sorted.
  const std::vector<Pair>& created() const noexcept { return created_; }
  const std::vector<Pair>& deleted() const noexcept { return deleted_; }
  /// The current pairs, sorted.
  const std::vector<Pair>& pairs() const noexcept { return sorted_; }
  /// The body with id `id`, or null.
  const Body* find(Id id) const noexcept;
  const BroadPhase& broad_phase() const noexcept { return *broad_phase_; }
  /// Why the last step dropped bodies (the algorithm refused their boxes), or "".
  const std::string& last_error() const noexcept { return last_error_; }
  /// The refusal behind last_error() (StatusCode::kUnsupported: the
  /// algorithm does not take such boxes), or ok.
  const Status& last_refusal() const noexcept { return last_refusal_; }
  /// Whether the algorithm takes the bodies added since the last step: ok,
  /// or the refusal their add would meet (unisize: boxes of several sizes).
  /// A dry run on a fresh broad phase, exact while the world's own is
  /// empty (a scene just built); nothing changes.
  Status accepts_pending() const;
  float width() const noexcept { return width_; }
  float height() const noexcept { return height_; }
  std::uint64_t frame() const noexcept { return frame_; }

 private:
  void sub_step(float dt);
  void sync_broad_phase();
  void resolve_contacts();
  void despawn();
  void reindex();
  std::uint64_t swap_total() const;

  std::string algorithm_;
  std::unique_ptr<BroadPhase> broad_phase_;
  std::vector<Body> bodies_;
  std::vector<std::int32_t> index_of_id_;  // id -> index in bodies_, -1 if gone
  std::vector<Id> pending_adds_;           // bodies not yet in the broad phase
  std::vector<Pair> sorted_, created_, deleted_;
  std::string last_error_;
  Status last_refusal_;
  FrameStats stats_;
  std::uint64_t swaps_seen_ = 0;  // the algorithm's running swap total at the last frame
  Id next_id_ = 0;
  float width_, height_;
  float gravity_ = -9.8f;
  int sub_steps_ = 4;
  std::uint64_t frame_ = 0;
  // scratch
  std::vector<Id> ids_;
  std::vector<Box2> boxes_;
};

}  // namespace sapling::demo
