// Huge pages for large arrays (huge_pages.hpp).
#include "detail/huge_pages.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace sapling::detail {

namespace {
bool wanted() noexcept {
  static const bool on = [] {
    const char* setting = std::getenv("SAPLING_HUGE_PAGES");
    return setting == nullptr || std::strcmp(setting, "0") != 0;
  }();
  return on;
}
}  // namespace

void advise_huge_pages(const void* data, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes < kHugePageAdvice || !wanted()) return;
  // madvise() takes whole pages: the ones inside the range, so that the
  // advice never reaches memory the array does not own.
  constexpr std::uintptr_t kPage = 4096;
  const auto first = (reinterpret_cast<std::uintptr_t>(data) + kPage - 1) & ~(kPage - 1);
  const auto last = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(kPage - 1);
  if (last > first) static_cast<void>(madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE));
#else
  static_cast<void>(data);
  static_cast<void>(bytes);
#endif
}

}  // namespace sapling::detail
