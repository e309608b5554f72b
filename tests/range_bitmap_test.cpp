// The range bitmap (src/algorithms/dual_axis/range_bitmap.hpp) against std::set:
// random inserts and erases, then walks of random ranges (filter(), which
// also removes what its callback rejects, and window() with
// erase_window()), on universes around the word and summary boundaries (64
// and 4096 values), with validate() after every batch. A failure names the
// universe and seed.
#include "algorithms/dual_axis/range_bitmap.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace sapling::detail {
namespace {

const std::vector<std::uint32_t> kUniverses = {1, 2, 63, 64, 65, 127, 128, 4095, 4096, 4097, 64 * 64 * 3 + 5, 40000};

TEST(RangeBitmap, MatchesSet) {
  for (const std::uint32_t universe : kUniverses) {
    for (const unsigned seed : {1u, 2u}) {
      SCOPED_TRACE("universe " + std::to_string(universe) + " seed " + std::to_string(seed));
      std::mt19937 rng(seed);
      RangeBitmap bits;
      bits.reset(universe);
      std::set<std::uint32_t> ref;
      auto value = [&] { return std::uniform_int_distribution<std::uint32_t>(0, universe - 1)(rng); };
      for (int batch = 0; batch < 40; ++batch) {
        // Dense and sparse phases: more inserts early, more erases late.
        const int inserts = batch < 20 ? 50 : 5, erases = batch < 20 ? 5 : 50;
        for (int k = 0; k < inserts; ++k) {
          const std::uint32_t v = value();
          if (ref.insert(v).second) bits.insert(v);
        }
        for (int k = 0; k < erases; ++k) {
          const std::uint32_t v = value();
          if (ref.erase(v) != 0) bits.erase(v);
        }
        // filter(): every stored value of [lo, hi) in order; those whose
        // callback returns false are removed (here: every third).
        std::uint32_t lo = value(), hi = value();
        if (lo > hi) std::swap(lo, hi);
        hi += (rng() & 1);  // hi == universe at times
        std::vector<std::uint32_t> seen;
        bits.filter(lo, hi, [&](std::uint32_t v) {
          seen.push_back(v);
          return seen.size() % 3 != 0;
        });
        std::vector<std::uint32_t> expected(ref.lower_bound(lo), ref.lower_bound(hi));
        ASSERT_EQ(seen, expected);
        for (std::size_t k = 2; k < seen.size(); k += 3) ref.erase(seen[k]);
        // window(): the 64 values from lo; erase_window() removes a subset.
        const std::uint32_t w = value();
        const std::uint64_t got = bits.window(w);
        std::uint64_t want = 0;
        for (auto it = ref.lower_bound(w); it != ref.end() && *it < std::uint64_t{w} + 64; ++it) {
          want |= std::uint64_t{1} << (*it - w);
        }
        ASSERT_EQ(got, want);
        const std::uint64_t drop = got & 0x5555555555555555u;
        bits.erase_window(w, drop);
        for (int i = 0; i < 64; ++i) {
          if ((drop >> i) & 1) ref.erase(w + static_cast<std::uint32_t>(i));
        }
        ASSERT_TRUE(bits.validate());
        for (std::uint32_t v = 0; v < universe; v += 1 + universe / 500) {
          ASSERT_EQ(bits.contains(v), ref.count(v) == 1) << v;
        }
      }
    }
  }
}

}  // namespace
}  // namespace sapling::detail
