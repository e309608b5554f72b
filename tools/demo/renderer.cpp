// Drawing one frame (renderer.hpp).
#include "renderer.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace sapling::demo {
namespace {

constexpr int kMargin = 8;
constexpr int kStrip = 28;       // the endpoint strip at the bottom
constexpr int kTop = 64;         // the counters above the world
constexpr int kLineHeight = 14;  // a line of text at scale 2
constexpr int kGraphWidth = 240, kGraphHeight = 64;

constexpr Color kBackground{18, 20, 26};
constexpr Color kWorldBackground{28, 31, 40};
constexpr Color kStatic{110, 110, 120};
constexpr Color kResting{70, 110, 210};
constexpr Color kMoving{80, 200, 120};
constexpr Color kTouching{245, 150, 50};
constexpr Color kText{230, 230, 235};
constexpr Color kDim{150, 150, 160};

Color with_alpha(Color c, int a) {
  c.a = static_cast<std::uint8_t>(std::clamp(a, 0, 255));
  return c;
}

Color body_color(const Body& b) {
  if (b.is_static()) return kStatic;
  if (b.resting()) return kResting;
  if (b.touching) return kTouching;
  return kMoving;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

void draw_bodies(Canvas& c, const Viewport& v, const World& w) {
  for (const Body& b : w.bodies()) {
    const Color col = body_color(b);
    const float x = v.to_x(b.x), y = v.to_y(b.y);
    if (b.shape == Shape::kCircle) {
      c.fill_circle(x, y, b.half[0] * v.scale, col);
    } else {
      const float hx = b.half[0] * v.scale, hy = b.half[1] * v.scale;
      c.fill_rect(x - hx, y - hy, 2 * hx, 2 * hy, col);
      if (hx > 3 && hy > 3) c.rect(x - hx, y - hy, 2 * hx, 2 * hy, with_alpha({0, 0, 0}, 90));
    }
  }
}

void draw_pairs(Canvas& c, const Viewport& v, const Demo& d) {
  const World& w = d.world();
  for (const Pair& p : w.pairs()) {
    const Body* a = w.find(p.a);
    const Body* b = w.find(p.b);
    if (a && b) c.line(v.to_x(a->x), v.to_y(a->y), v.to_x(b->x), v.to_y(b->y), {230, 220, 90, 70});
  }
  for (const PairTrails::Trail& t : d.trails().trails()) {
    const int alpha = 255 - 255 * t.age / PairTrails::kFadeFrames;
    const Color col = t.created ? Color{255, 255, 255} : Color{255, 60, 60};
    c.line(v.to_x(t.x0), v.to_y(t.y0), v.to_x(t.x1), v.to_y(t.y1), with_alpha(col, alpha));
  }
}

// The sorted endpoints of the sweep axis along the bottom border, those the
// frame's swaps moved flashing yellow, and the number of swaps as a bar.
void draw_structure(Canvas& c, const Viewport& v, const Demo& d) {
  const float top = static_cast<float>(c.height() - kStrip);
  const StructureLines& s = d.structure();
  // Cells (box pruning's grid), clamped to the world: end cells are open.
  const World& w = d.world();
  for (const Box3& b : s.boxes) {
    const float x0 = std::clamp(b.min[0], 0.0f, w.width()), x1 = std::clamp(b.max[0], 0.0f, w.width());
    const float y0 = std::clamp(b.min[1], 0.0f, w.height()), y1 = std::clamp(b.max[1], 0.0f, w.height());
    c.rect(v.to_x(x0), v.to_y(y1), (x1 - x0) * v.scale, (y1 - y0) * v.scale, {120, 160, 255, 110});
  }
  if (s.endpoints.empty() && s.boxes.empty()) {
    c.text(kMargin, static_cast<int>(top) + 9, d.world().algorithm() + ": no structure to draw this frame", kDim);
    return;
  }
  for (const StructureLines::Endpoint& e : s.endpoints) {
    const float x = v.to_x(e.x);
    if (e.swapped) {  // moved by this frame's swaps: the full strip, bright
      c.line(x, top + 4, x, top + 24, {255, 240, 120, 255});
    } else if (e.is_max) {
      c.line(x, top + 4, x, top + 14, {240, 90, 90, 200});
    } else {
      c.line(x, top + 14, x, top + 24, {90, 230, 120, 200});
    }
  }
  const std::uint64_t swaps = d.world().stats().swaps;
  if (swaps > 0) {
    const float width = std::min(static_cast<float>(swaps) / 4.0f, static_cast<float>(c.width()));
    c.fill_rect(0, top, width, 3, {255, 240, 120, 220});
  }
}

void draw_graph(Canvas& c, const Demo& d) {
  const int x0 = c.width() - kGraphWidth - kMargin, y0 = kMargin;
  c.fill_rect(static_cast<float>(x0), static_cast<float>(y0), kGraphWidth, kGraphHeight + 14, {0, 0, 0, 220});
  const auto& values = d.graph().values();
  // Scaled to twice the mean, so that a spike (a frame of many additions)
  // shows clipped in red instead of flattening the rest.
  const double top = std::max(2 * d.graph().mean(), 1e-3);
  const float bar = static_cast<float>(kGraphWidth) / static_cast<float>(TimeGraph::kFrames);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const bool clipped = values[i] > top;
    const float h = static_cast<float>(std::min(values[i] / top, 1.0)) * kGraphHeight;
    c.fill_rect(static_cast<float>(x0) + bar * static_cast<float>(i), static_cast<float>(y0 + kGraphHeight) - h, bar, h,
                clipped ? Color{255, 90, 90, 230} : Color{120, 200, 255, 220});
  }
  c.text(x0 + 4, y0 + kGraphHeight + 3, "BROAD PHASE MS PER FRAME, TOP " + fixed(top, 3), kDim, 1);
}

void draw_counters(Canvas& c, const Demo& d) {
  const World& w = d.world();
  const FrameStats& s = w.stats();
  const std::string lines[] = {
      "SCENE " + d.scene().name + "   ALGORITHM " + w.algorithm() + (d.paused() ? "   PAUSED" : ""),
      "OBJECTS " + std::to_string(s.objects) + "  PAIRS " + std::to_string(s.pairs) + "  CREATED " +
          std::to_string(s.created) + "  DELETED " + std::to_string(s.deleted) + "  SWAPS " + std::to_string(s.swaps),
      "BROAD PHASE " + fixed(s.broad_phase_ms, 3) + " MS (MEAN " + fixed(d.graph().mean(), 3) + ")  MOVING " +
          std::to_string(static_cast<int>(d.moving() * 100 + 0.5f)) + "%  FRAME " + std::to_string(w.frame()),
  };
  int width = 0;
  for (const std::string& l : lines) width = std::max(width, Canvas::text_width(l));
  c.fill_rect(kMargin, kMargin, static_cast<float>(width + 12), 3 * 14 + 8, {0, 0, 0, 150});
  for (int i = 0; i < 3; ++i) c.text(kMargin + 6, kMargin + 6 + 14 * i, lines[i], kText);
}

}  // namespace

Viewport fit(const World& world, int width, int height) {
  // Between the counters and the help (two lines) above the endpoint strip.
  const float w = static_cast<float>(width - 2 * kMargin);
  const float h = static_cast<float>(height - kTop - kStrip - 3 * kLineHeight - kMargin);
  Viewport v;
  v.scale = std::min(w / world.width(), h / world.height());
  v.left = (static_cast<float>(width) - world.width() * v.scale) / 2;
  v.bottom = static_cast<float>(kTop) + (h + world.height() * v.scale) / 2;
  return v;
}

void render(Canvas& c, const Demo& d) {
  const World& w = d.world();
  const Viewport v = fit(w, c.width(), c.height());
  c.clear(kBackground);
  c.fill_rect(v.to_x(0), v.to_y(w.height()), w.width() * v.scale, w.height() * v.scale, kWorldBackground);
  c.fill_rect(0, static_cast<float>(c.height() - kStrip), static_cast<float>(c.width()), kStrip, {10, 10, 14});
  draw_bodies(c, v, w);
  if (d.flags().pairs) draw_pairs(c, v, d);
  if (d.flags().structure) draw_structure(c, v, d);
  if (d.flags().graph) draw_graph(c, d);
  draw_counters(c, d);
  // The message, then the help wrapped at its double spaces, above the strip.
  std::vector<std::string> help;
  if (d.flags().help) {
    const std::string_view all = help_line();
    std::string line;
    for (std::size_t at = 0; at < all.size();) {
      std::size_t end = all.find("  ", at);
      if (end == std::string_view::npos) end = all.size();
      const std::string item(all.substr(at, end - at));
      if (!line.empty() && Canvas::text_width(line + "  " + item) > c.width() - 2 * kMargin - 12) {
        help.push_back(line);
        line.clear();
      }
      line += (line.empty() ? "" : "  ") + item;
      at = std::min(all.size(), end + 2);
    }
    if (!line.empty()) help.push_back(line);
  }
  int y = c.height() - kStrip - kMargin / 2 - kLineHeight * static_cast<int>(help.size() + 1);
  if (!d.message().empty()) c.text(kMargin + 6, y + 2, d.message(), {255, 230, 150});
  for (const std::string& line : help) {
    y += kLineHeight;
    c.text(kMargin + 6, y + 2, line, kDim);
  }
}

}  // namespace sapling::demo
