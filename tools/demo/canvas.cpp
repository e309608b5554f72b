// The demo's drawing surface (canvas.hpp).
#include "canvas.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "font.hpp"

namespace sapling::demo {

Canvas::Canvas(int width, int height) : width_(width), height_(height) {
  surface_ = SDL_CreateRGBSurfaceWithFormat(0, width, height, 32, SDL_PIXELFORMAT_ARGB8888);
  if (!surface_) throw std::runtime_error(std::string("SDL_CreateRGBSurfaceWithFormat: ") + SDL_GetError());
  renderer_ = SDL_CreateSoftwareRenderer(surface_);
  if (!renderer_) {
    SDL_FreeSurface(surface_);
    throw std::runtime_error(std::string("SDL_CreateSoftwareRenderer: ") + SDL_GetError());
  }
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_BLEND);
}

Canvas::~Canvas() {
  SDL_DestroyRenderer(renderer_);
  SDL_FreeSurface(surface_);
}

void Canvas::set(Color c) { SDL_SetRenderDrawColor(renderer_, c.r, c.g, c.b, c.a); }

void Canvas::clear(Color c) {
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_NONE);
  set(c);
  SDL_RenderClear(renderer_);
  SDL_SetRenderDrawBlendMode(renderer_, SDL_BLENDMODE_BLEND);
}

void Canvas::fill_rect(float x, float y, float w, float h, Color c) {
  set(c);
  const SDL_FRect r{x, y, std::max(w, 1.0f), std::max(h, 1.0f)};
  SDL_RenderFillRectF(renderer_, &r);
}

void Canvas::rect(float x, float y, float w, float h, Color c) {
  set(c);
  const SDL_FRect r{x, y, std::max(w, 1.0f), std::max(h, 1.0f)};
  SDL_RenderDrawRectF(renderer_, &r);
}

void Canvas::line(float x0, float y0, float x1, float y1, Color c) {
  set(c);
  SDL_RenderDrawLineF(renderer_, x0, y0, x1, y1);
}

// One horizontal span per pixel row.
void Canvas::fill_circle(float cx, float cy, float r, Color c) {
  set(c);
  if (r < 1) {
    SDL_RenderDrawPointF(renderer_, cx, cy);
    return;
  }
  for (float dy = -std::floor(r); dy <= r; dy += 1) {
    const float dx = std::sqrt(std::max(r * r - dy * dy, 0.0f));
    SDL_RenderDrawLineF(renderer_, cx - dx, cy + dy, cx + dx, cy + dy);
  }
}

void Canvas::circle(float cx, float cy, float r, Color c) {
  set(c);
  const int segments = std::max(8, static_cast<int>(r));
  float px = cx + r, py = cy;
  for (int i = 1; i <= segments; ++i) {
    const float a = 6.2831853f * static_cast<float>(i) / static_cast<float>(segments);
    const float x = cx + r * std::cos(a), y = cy + r * std::sin(a);
    SDL_RenderDrawLineF(renderer_, px, py, x, y);
    px = x;
    py = y;
  }
}

int Canvas::text(int x, int y, std::string_view s, Color c, int scale) {
  rects_.clear();
  const float k = static_cast<float>(scale);
  int pen = x;
  for (char ch : s) {
    const std::uint8_t* rows = glyph(ch);
    for (int row = 0; row < kGlyphHeight; ++row) {
      for (int col = 0; col < kGlyphWidth; ++col) {
        if (rows[row] & (4 >> col)) {
          rects_.push_back({static_cast<float>(pen + col * scale), static_cast<float>(y + row * scale), k, k});
        }
      }
    }
    pen += (kGlyphWidth + 1) * scale;
  }
  set(c);
  if (!rects_.empty()) SDL_RenderFillRectsF(renderer_, rects_.data(), static_cast<int>(rects_.size()));
  return pen - x;
}

int Canvas::text_width(std::string_view s, int scale) noexcept {
  return static_cast<int>(s.size()) * (kGlyphWidth + 1) * scale;
}

}  // namespace sapling::demo
