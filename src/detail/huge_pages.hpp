// Large arrays on huge pages. A new world's first frame writes every
// per-object array for the first time: at a million boxes some 250 MB, and
// each 4 KiB page of it costs the kernel a fault (zeroing the page, mapping
// it, charging it): 28 ms for 48 MB on this project's machine, a fifth of
// sap's first frame. Linux's transparent huge pages map 2 MiB at a time,
// 512 times fewer faults (8 ms for the same 48 MB), and the frames after
// miss the TLB less (sap's steady frame at 1M: 3-7% faster).
//
// Where the system leaves huge pages to the program (the "madvise" mode,
// Debian's and Ubuntu's default), advise_huge_pages() asks for them on an
// array of kHugePageAdvice bytes or more; it does nothing in the "never"
// mode, nothing new in "always", nothing off Linux, and nothing once the
// environment sets SAPLING_HUGE_PAGES=0. reserve_geometric() (reserve.hpp)
// calls it on the room it makes, before any of it is touched; a few large
// arrays sized otherwise call reserve_large(). Memory: an array's last
// huge page may hold up to 2 MiB it does not use yet.
#pragma once

#include <cstddef>
#include <vector>

namespace sapling::detail {

inline constexpr std::size_t kHugePageAdvice = std::size_t{4} << 20;

/// Asks the kernel to back [data, data + bytes) with huge pages where it
/// may (see above). Never fails: advice refused is advice ignored.
void advise_huge_pages(const void* data, std::size_t bytes) noexcept;

/// advise_huge_pages() on `v`'s storage, where it is large.
template <class T, class Allocator>
void advise_huge_pages(const std::vector<T, Allocator>& v) noexcept {
  if (v.capacity() * sizeof(T) >= kHugePageAdvice) advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

/// Room for exactly `n` elements, advised onto huge pages when large: for
/// an array about to be resized to `n` and written whole.
template <class T, class Allocator>
void reserve_large(std::vector<T, Allocator>& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);
  advise_huge_pages(v);
}

}  // namespace sapling::detail
