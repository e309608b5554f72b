// Writes a canvas's pixels to a PNG file with libpng (headless frames).
#pragma once

#include <SDL.h>

#include <string>

namespace sapling::demo {

/// Writes an ARGB8888 surface as an 8-bit RGB PNG; "" on success, else the reason.
std::string write_png(const std::string& path, SDL_Surface* surface);

}  // namespace sapling::demo
