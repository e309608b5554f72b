// One segmented cell (src/algorithms/multi_sap/segmented_cell.hpp) against a plain
// vector model: random insertions, erasures, slides left and right and tidy
// passes on coordinates snapped to a coarse grid (ties, touching and
// zero-width boxes, infinities), chunks of 2 to 7 entries, valid() and the
// whole content in order after every step, and every query against a brute
// scan of the model. A failure names the seed.
#include "algorithms/multi_sap/segmented_cell.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace sapling::detail {
namespace {

struct Entry {
  std::array<float, 3> min;
  std::array<float, 3> max;
  Slot slot;
  std::uint32_t tag;
};
using Cell = SegmentedCell<Entry>;

constexpr float kInf = std::numeric_limits<float>::infinity();

Box3 box_of(const Entry& e) { return Box3{e.min, e.max}; }

class Model {
 public:
  explicit Model(std::uint64_t seed) : rng_(seed) {}

  // A box of snapped coordinates, now and then infinite on x.
  Box3 box() {
    Box3 b;
    for (int k = 0; k < 3; ++k) {
      b.min[k] = float(pick(0, 12));
      b.max[k] = b.min[k] + float(pick(0, 3));
    }
    if (pick(0, 30) == 0) b.max[0] = kInf;
    if (pick(0, 30) == 0) b.min[0] = -kInf;
    return b;
  }
  int pick(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::vector<Entry> entries;  // any order
  std::mt19937_64 rng_;
};

void expect_same(const Cell& cell, const Model& model) {
  ASSERT_TRUE(cell.valid());
  ASSERT_EQ(cell.size(), model.entries.size());
  std::vector<Slot> got, want;
  float last = -kInf;
  cell.for_each([&](const Entry& e) {
    EXPECT_LE(last, e.min[0]);
    last = e.min[0];
    got.push_back(e.slot);
  });
  for (const Entry& e : model.entries) want.push_back(e.slot);
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  ASSERT_EQ(got, want);
  cell.for_each([&](const Entry& e) {
    const auto it =
        std::find_if(model.entries.begin(), model.entries.end(), [&](const Entry& m) { return m.slot == e.slot; });
    EXPECT_EQ(box_of(*it), box_of(e));
  });
}

void expect_queries(const Cell& cell, Model& model) {
  for (int q = 0; q < 4; ++q) {
    const Box3 b = model.box();
    std::vector<Slot> got, want;
    // `from`: the least min x an overlapping entry can have (the widest
    // entry's reach back from b), as CellGrid passes it; or no bound.
    double widest = 0;
    for (const Entry& e : model.entries) widest = std::max(widest, double(e.max[0]) - double(e.min[0]));
    const double from = q % 2 == 0 || !(widest < kInf) ? -double(kInf) : double(b.min[0]) - widest - 1;
    cell.query(b, from, [&](const Entry& e) { got.push_back(e.slot); });
    for (const Entry& e : model.entries) {
      if (overlaps(box_of(e), b)) want.push_back(e.slot);
    }
    std::sort(got.begin(), got.end());
    std::sort(want.begin(), want.end());
    ASSERT_EQ(got, want) << "query " << b.min[0] << ".." << b.max[0];
  }
}

TEST(SegmentedCell, MatchesAModelUnderRandomChanges) {
  for (std::uint32_t capacity = 2; capacity <= 7; ++capacity) {
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE("chunk " + std::to_string(capacity) + ", seed " + std::to_string(seed));
      Model model(seed * 131 + capacity);
      Cell cell(capacity);
      Slot next = 0;
      for (int step = 0; step < 400; ++step) {
        const int what = model.pick(0, 9);
        if (what <= 3 || model.entries.empty()) {  // insertion
          const Box3 b = model.box();
          const Entry e{b.min, b.max, next++, 0};
          cell.insert(e);
          model.entries.push_back(e);
        } else if (what <= 5) {  // erasure
          const std::size_t i = std::size_t(model.pick(0, int(model.entries.size()) - 1));
          const Entry& e = model.entries[i];
          cell.erase_at(cell.locate(e.min[0], e.slot));
          model.entries.erase(model.entries.begin() + std::ptrdiff_t(i));
        } else {  // a move: left (a cover of old and new) then right (the new box)
          const std::size_t i = std::size_t(model.pick(0, int(model.entries.size()) - 1));
          Entry& e = model.entries[i];
          const Box3 now = model.box();
          Entry cover = e;
          for (int k = 0; k < 3; ++k) {
            cover.min[k] = std::min(e.min[k], now.min[k]);
            cover.max[k] = std::max(e.max[k], now.max[k]);
          }
          cell.slide_left(cell.locate(e.min[0], e.slot), cover);
          ASSERT_TRUE(cell.valid());
          cell.slide_right(cell.locate(cover.min[0], e.slot), now);
          e.min = now.min;
          e.max = now.max;
        }
        if (model.pick(0, 7) == 0) cell.tidy();
        expect_same(cell, model);
        expect_queries(cell, model);
        if (::testing::Test::HasFailure()) return;
      }
      // Everything out, the chunks given back to the pool.
      while (!model.entries.empty()) {
        const Entry e = model.entries.back();
        model.entries.pop_back();
        cell.erase_at(cell.locate(e.min[0], e.slot));
      }
      cell.tidy();
      expect_same(cell, model);
      EXPECT_TRUE(cell.empty());
    }
  }
}

// Addresses compare as the list order, and a batch of slides right and
// erasures applied from the largest address down finds each address valid
// (multi-sap's last step in a cell).
TEST(SegmentedCell, BatchFromTheLargestAddressDown) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Model model(seed);
    Cell cell(3);
    for (Slot s = 0; s < 40; ++s) {
      const Box3 b = model.box();
      cell.insert(Entry{b.min, b.max, s, 0});
      model.entries.push_back(Entry{b.min, b.max, s, 0});
    }
    // Addresses increase along the order.
    std::vector<std::uint32_t> in_order;
    cell.for_each([&](const Entry& e) { in_order.push_back(cell.address_of(e)); });
    EXPECT_TRUE(std::is_sorted(in_order.begin(), in_order.end()));
    // A third of the entries move right, a third leave.
    struct Op {
      std::uint32_t at;
      std::size_t i;
      bool leaves;
    };
    std::vector<Op> ops;
    for (std::size_t i = 0; i < model.entries.size(); ++i) {
      const Entry& e = model.entries[i];
      if (i % 3 != 2) ops.push_back(Op{cell.locate(e.min[0], e.slot), i, i % 3 == 0});
    }
    std::sort(ops.begin(), ops.end(), [](const Op& a, const Op& b) { return a.at > b.at; });
    std::vector<bool> gone(model.entries.size(), false);
    for (const Op& op : ops) {
      Entry& e = model.entries[op.i];
      ASSERT_EQ(cell.at(op.at).slot, e.slot);
      if (op.leaves) {
        cell.erase_at(op.at);
        gone[op.i] = true;
      } else {
        Box3 now = box_of(e);
        now.min[0] += float(model.pick(0, 4));
        now.max[0] = std::max(now.max[0], now.min[0]) + 1;
        cell.slide_right(op.at, now);
        e.min = now.min;
        e.max = now.max;
      }
    }
    std::vector<Entry> kept;
    for (std::size_t i = 0; i < model.entries.size(); ++i) {
      if (!gone[i]) kept.push_back(model.entries[i]);
    }
    model.entries = kept;
    cell.tidy();
    expect_same(cell, model);
    expect_queries(cell, model);
  }
}

}  // namespace
}  // namespace sapling::detail
