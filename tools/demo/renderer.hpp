// Draws one frame of the demo: the bodies coloured by state, the pairs'
// flashes and fades, the algorithm's structure, the counters, the time
// graph and the help line.
//
// Colours: grey static, blue resting (slow for Body::kRestingFrames frames),
// green moving, orange touching another body; a white line between two
// centres is a pair created this frame, red a pair deleted (both fade over
// PairTrails::kFadeFrames), faint yellow a current pair. The border strip at
// the bottom holds the sweep axis' sorted endpoints (sap), min endpoints as
// green ticks pointing up, max endpoints red pointing down, and those that
// this frame's swaps moved in yellow across the strip.
#pragma once

#include "canvas.hpp"
#include "demo.hpp"

namespace sapling::demo {

/// The mapping between world coordinates (y up) and canvas pixels (y down).
struct Viewport {
  float scale = 1;             ///< pixels per world unit
  float left = 0, bottom = 0;  ///< the pixel of world (0, 0)
  float to_x(float x) const noexcept { return left + x * scale; }
  float to_y(float y) const noexcept { return bottom - y * scale; }
  float world_x(float px) const noexcept { return (px - left) / scale; }
  float world_y(float py) const noexcept { return (bottom - py) / scale; }
};

/// The world fitted into the canvas, above the endpoint strip.
Viewport fit(const World& world, int width, int height);
/// Draws the demo's current frame.
void render(Canvas& canvas, const Demo& demo);

}  // namespace sapling::demo
