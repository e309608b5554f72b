// PNG output through libpng (png_writer.hpp).
#include "png_writer.hpp"

#include <png.h>

#include <cstdio>
#include <cstring>
#include <vector>

namespace sapling::demo {

std::string write_png(const std::string& path, SDL_Surface* surface) {
  if (surface->format->format != SDL_PIXELFORMAT_ARGB8888) return "write_png: the surface is not ARGB8888";
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return "cannot write " + path + ": " + std::strerror(errno);
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info) {
    png_destroy_write_struct(&png, nullptr);
    std::fclose(file);
    return "libpng: out of memory";
  }
  const int w = surface->w, h = surface->h;
  std::vector<png_byte> row(static_cast<std::size_t>(w) * 3);
  // libpng reports errors by longjmp; nothing here needs destructors between setjmp and the calls.
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(file);
    return "libpng failed writing " + path;
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, static_cast<png_uint_32>(w), static_cast<png_uint_32>(h), 8, PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  SDL_LockSurface(surface);
  for (int y = 0; y < h; ++y) {
    const auto* src = reinterpret_cast<const Uint32*>(static_cast<const Uint8*>(surface->pixels) + y * surface->pitch);
    for (int x = 0; x < w; ++x) {
      row[3 * x + 0] = static_cast<png_byte>(src[x] >> 16);
      row[3 * x + 1] = static_cast<png_byte>(src[x] >> 8);
      row[3 * x + 2] = static_cast<png_byte>(src[x]);
    }
    png_write_row(png, row.data());
  }
  SDL_UnlockSurface(surface);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  if (std::fclose(file) != 0) return "cannot close " + path;
  return "";
}

}  // namespace sapling::demo
