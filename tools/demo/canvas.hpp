// Where the demo draws: an SDL surface with SDL's software renderer, the
// same pixels in a window and headless (no display, no GPU needed).
#pragma once

#include <SDL.h>

#include <cstdint>
#include <string_view>
#include <vector>

namespace sapling::demo {

/// An RGBA colour.
struct Color {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;  ///< channels; a = 255 is opaque
};

class Canvas {
 public:
  /// A width x height canvas; throws std::runtime_error with SDL's reason if SDL cannot make one.
  Canvas(int width, int height);
  ~Canvas();
  Canvas(const Canvas&) = delete;
  Canvas& operator=(const Canvas&) = delete;

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  /// The pixels, ARGB8888.
  SDL_Surface* surface() const noexcept { return surface_; }

  void clear(Color c);
  void fill_rect(float x, float y, float w, float h, Color c);
  void rect(float x, float y, float w, float h, Color c);
  void line(float x0, float y0, float x1, float y1, Color c);
  void fill_circle(float cx, float cy, float r, Color c);
  void circle(float cx, float cy, float r, Color c);
  /// Text in the built-in font (font.hpp), each font pixel `scale` pixels wide; returns the width drawn.
  int text(int x, int y, std::string_view s, Color c, int scale = 2);
  /// The width text() would draw.
  static int text_width(std::string_view s, int scale = 2) noexcept;

 private:
  void set(Color c);

  int width_, height_;
  SDL_Surface* surface_ = nullptr;
  SDL_Renderer* renderer_ = nullptr;
  std::vector<SDL_FRect> rects_;  // scratch: a text's pixels, drawn in one call
};

}  // namespace sapling::demo
