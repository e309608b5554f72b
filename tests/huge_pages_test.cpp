// Large arrays on huge pages (src/detail/huge_pages.hpp): the room
// reserve_geometric() and reserve_large() make is advised, and the advice
// covers the whole pages inside an array and nothing outside it. Read back
// from the kernel's own account (/proc/self/smaps, VmFlags "hg").
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "detail/huge_pages.hpp"
#include "detail/reserve.hpp"

namespace sapling::detail {
namespace {

// Whether this system lets a program ask for huge pages at all.
bool advice_taken() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(mode, line) || line.find("[never]") != std::string::npos) return false;
  const char* setting = std::getenv("SAPLING_HUGE_PAGES");
  return setting == nullptr || std::string(setting) != "0";
}

// The VmFlags of the mapping that holds `address`, or "" if none does.
std::string vm_flags_at(const void* address) {
  const auto a = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t first = 0, last = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> first >> dash >> last && dash == '-') {
      inside = first <= a && a < last;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line.substr(8) + " ";
  }
  return "";
}

bool advised(const void* address) { return vm_flags_at(address).find(" hg ") != std::string::npos; }

TEST(HugePages, LargeRoomIsAdvised) {
  if (!advice_taken()) GTEST_SKIP() << "transparent huge pages are off here";
  std::vector<std::uint64_t> geometric;
  reserve_geometric(geometric, std::size_t{2} << 20);  // 16 MiB
  EXPECT_TRUE(advised(geometric.data() + geometric.capacity() / 2));
  std::vector<std::uint64_t> exact;
  reserve_large(exact, std::size_t{1} << 20);  // 8 MiB
  EXPECT_EQ(exact.capacity(), std::size_t{1} << 20);
  EXPECT_TRUE(advised(exact.data() + exact.capacity() / 2));
}

TEST(HugePages, AdviceStaysInsideTheArray) {
  if (!advice_taken()) GTEST_SKIP() << "transparent huge pages are off here";
  constexpr std::size_t kPage = 4096, kBytes = std::size_t{8} << 20;
  // An array from 100 bytes into the first page to 100 bytes into the last
  // but one: only the pages wholly inside it may be advised.
  void* region = mmap(nullptr, kBytes + 2 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  auto* base = static_cast<char*>(region);
  advise_huge_pages(base + 100, kBytes);
  EXPECT_FALSE(advised(base));
  EXPECT_TRUE(advised(base + kPage));
  EXPECT_TRUE(advised(base + kBytes - 1));
  EXPECT_FALSE(advised(base + kBytes));
  EXPECT_FALSE(advised(base + kBytes + kPage));
  // Below the threshold nothing is asked.
  advise_huge_pages(base + kBytes + kPage, kHugePageAdvice - 1);
  EXPECT_FALSE(advised(base + kBytes + kPage));
  munmap(region, kBytes + 2 * kPage);
}

}  // namespace
}  // namespace sapling::detail
