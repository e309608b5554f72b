// The demo's text: a 3x5 bitmap font drawn pixel by pixel (no font library).
// Upper case, digits and the punctuation the overlays use; lower case is
// drawn as upper case, anything else as a blank.
#pragma once

#include <cstdint>

namespace sapling::demo {

/// Glyph cell: 3 columns by 5 rows, drawn with one column and one row of spacing.
inline constexpr int kGlyphWidth = 3;
inline constexpr int kGlyphHeight = 5;

/// The glyph of `c` as 5 rows of 3 bits, the top row first, bit 2 the left column.
const std::uint8_t* glyph(char c) noexcept;

}  // namespace sapling::demo
