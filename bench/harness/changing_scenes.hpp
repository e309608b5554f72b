// Worlds whose workload changes as they run (issue 27): the frames a user
// meets when a level loads, a part of it explodes, it is streamed in or
// emptied and filled again, its bodies bumped awake a few at a time, and a
// plane of resting squares. Each wraps a
// spec scenario (docs/scenarios.md) and edits its frames; the same seed
// gives the same frames on every platform.
#pragma once

#include <cstddef>
#include <memory>

#include "scenarios/scenario.hpp"

namespace sapling::bench {

/// W1 unisize2d's n squares in the plane, of which only the first `movers`
/// ids move (the others rest where frame 0 put them).
std::unique_ptr<Scenario> make_planar_resting(std::size_t n, std::size_t movers);

/// W2 tracy's n resting cubes with `movers` moving and no churn; over
/// frames [from, from + frames) every third cube besides is thrown outward
/// from the world's centre (0.5 per frame, slowing by a tenth each frame),
/// and then rests again where it came to.
std::unique_ptr<Scenario> make_explosion(std::size_t n, std::size_t movers, std::size_t from, std::size_t frames);

/// A level streamed in: W2 tracy's n cubes (`movers` of them moving, no
/// churn) added `batch` at a time, the first batch at frame 0 and another
/// every `every` frames, in id order, until all are in.
std::unique_ptr<Scenario> make_streamed_level(std::size_t n, std::size_t movers, std::size_t batch, std::size_t every);

/// W2 tracy's n cubes (`movers` moving, no churn), every one removed at
/// frame `empty_at` and every one added again, where it then is, at frame
/// `refill_at`.
std::unique_ptr<Scenario> make_refill(std::size_t n, std::size_t movers, std::size_t empty_at, std::size_t refill_at);

/// W2 tracy's n resting cubes (none of tracy's movers) bumped awake: every
/// frame `per_frame` cubes not yet woken in the last n / per_frame frames
/// wake, each then moves a small step (at most 0.05 on each axis, from a
/// hash of its id and the frame) in each of `awake` frames and rests again
/// (a game's bodies knocked about and put back to sleep): per_frame x
/// awake cubes move every frame, a different set each frame.
std::unique_ptr<Scenario> make_wakeups(std::size_t n, std::size_t per_frame, std::size_t awake);

}  // namespace sapling::bench
