// Region queries (BroadPhase::query): every registered algorithm, on every
// trace kind of the differential suite in 2D and 3D, answers queries after
// each frame exactly as the oracle's test of every live box does
// (oracle.hpp): boxes of the scene grown and shrunk, points, flat boxes,
// infinite and +-FLT_MAX boxes, boxes from the special values (signed
// zeros, denormals). Also the batched form, refusals (an invalid box names
// its index, the output is emptied), and operations staged since the last
// update() staying unseen.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "oracle.hpp"
#include "same_as_brute.hpp"
#include "sapling/broad_phase.hpp"
#include "sapling/registry.hpp"
#include "trace_generators.hpp"

namespace sapling {
namespace {

using testgen::Rng;

std::vector<std::string> algorithm_names() {
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : algorithms()) names.push_back(info.name);
  names.push_back("multi-sap:mode=witness");
  return names;
}

// A query box: around a live box, or from the special values.
Box3 query_box(Rng& r, const oracle::World& live, int dims) {
  static const std::vector<float> kSpecial = testgen::special_values();
  Box3 q;
  switch (live.size() == 0 ? 4 : r.below(6)) {
    case 0:
    case 1: {  // a live box, grown or shrunk on each axis
      auto it = live.objects().begin();
      std::advance(it, static_cast<long>(r.below(live.size())));
      q = it->second.box;
      for (int k = 0; k < 3; ++k) {
        const float grow = r.uniform(-0.4, 2.0);
        const float w = q.max[k] - q.min[k];
        const float lo = q.min[k] - grow * w, hi = q.max[k] + grow * w;
        if (lo <= hi) q.min[k] = lo, q.max[k] = hi;  // NaN and inverted kept out
      }
      break;
    }
    case 2: {  // a live box's corner, as a point
      auto it = live.objects().begin();
      std::advance(it, static_cast<long>(r.below(live.size())));
      q = Box3{it->second.box.min, it->second.box.min};
      break;
    }
    case 3:  // everything
      q = Box3{{-testgen::kInf, -testgen::kInf, -testgen::kInf}, {testgen::kInf, testgen::kInf, testgen::kInf}};
      break;
    default:
      q = testgen::pool_box(r, kSpecial);
  }
  if (dims == 2) q.min[2] = q.max[2] = 0.0f;
  return q;
}

class QueryTest : public ::testing::TestWithParam<std::string> {};

TEST_P(QueryTest, SameAsTestingEveryBox) {
  for (const testgen::TraceKind kind : testgen::kAllTraceKinds) {
    for (const int dims : {2, 3}) {
      SCOPED_TRACE(std::string(testgen::trace_kind_name(kind)) + " " + std::to_string(dims) + "d");
      const Trace trace = testgen::make_trace(kind, testgen::GenParams{.dims = dims, .seed = 4});
      auto bp = BroadPhase::create(GetParam(), Options{.dims = dims});
      ASSERT_NE(bp, nullptr);
      oracle::World live(dims);
      Rng r(static_cast<std::uint64_t>(dims) * 977 + static_cast<std::uint64_t>(kind));
      std::vector<Id> got;
      bool refused = false;
      for (std::size_t f = 0; f < trace.frames.size() && !refused; ++f) {
        const TraceFrame& frame = trace.frames[f];
        ASSERT_TRUE(bp->remove(frame.removed).ok());
        if (!testgen::stage_boxes(*bp, false, dims, frame.moved, frame.moved_boxes).ok() ||
            !testgen::stage_boxes(*bp, true, dims, frame.added, frame.added_boxes).ok()) {
          refused = true;  // unisize: boxes of another size
          break;
        }
        bp->update();
        live.apply(frame);
        for (int k = 0; k < 8; ++k) {
          const Box3 q = query_box(r, live, dims);
          ASSERT_TRUE(bp->query(q, got).ok());
          ASSERT_EQ(got, live.query(q)) << "frame " << f << " query " << k << ": " << q.min[0] << " " << q.min[1] << " "
                                        << q.min[2] << " .. " << q.max[0] << " " << q.max[1] << " " << q.max[2];
        }
      }
    }
  }
}

TEST_P(QueryTest, BatchedRefusedAndStagedUnseen) {
  auto bp = BroadPhase::create(GetParam());
  ASSERT_NE(bp, nullptr);
  const std::vector<Id> ids = {5, 9, 2};
  const std::vector<Box3> boxes = {testgen::cube(0, 0, 0, 1), testgen::cube(0.5f, 0.5f, 0.5f, 1),
                                   testgen::cube(10, 10, 10, 1)};
  ASSERT_TRUE(bp->add(ids, boxes).ok());
  std::vector<Id> out = {42};
  ASSERT_TRUE(bp->query(testgen::cube(0, 0, 0, 20), out).ok());
  EXPECT_TRUE(out.empty()) << "operations staged since the last update() are not seen";
  bp->update();
  ASSERT_TRUE(bp->query(testgen::cube(0, 0, 0, 20), out).ok());
  EXPECT_EQ(out, (std::vector<Id>{2, 5, 9}));
  ASSERT_TRUE(bp->remove(Id{5}).ok());  // staged: still seen until update()
  ASSERT_TRUE(bp->query(testgen::cube(0, 0, 0, 1), out).ok());
  EXPECT_EQ(out, (std::vector<Id>{5, 9}));
  bp->update();

  std::vector<Id> all;
  std::vector<std::size_t> offsets;
  const std::vector<Box3> queries = {testgen::cube(0, 0, 0, 1), testgen::cube(100, 0, 0, 1),
                                     testgen::cube(1.5f, 1.5f, 1.5f, 9)};
  ASSERT_TRUE(bp->query_many(queries, all, offsets).ok());
  EXPECT_EQ(offsets, (std::vector<std::size_t>{0, 1, 1, 3}));
  EXPECT_EQ(all, (std::vector<Id>{9, 2, 9}));

  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<Box3> bad = {testgen::cube(0, 0, 0, 1), Box3{{0, 0, 0}, {1, nan, 1}}, Box3{{2, 0, 0}, {1, 1, 1}}};
  const Status s = bp->query_many(bad, all, offsets);
  EXPECT_EQ(s.code(), StatusCode::kInvalidBox);
  EXPECT_EQ(s.operation(), Operation::kQuery);
  EXPECT_EQ(s.index(), 1u);
  EXPECT_EQ(s.message(), "query box 1: invalid box: max.y is NaN");
  EXPECT_TRUE(all.empty());
  EXPECT_TRUE(offsets.empty());
  out = {1};
  const Status one = bp->query(bad[2], out);
  EXPECT_EQ(one.message(), "query box 0: invalid box: min.x > max.x");
  EXPECT_TRUE(out.empty());
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string out = info.param;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllAlgorithms, QueryTest, ::testing::ValuesIn(algorithm_names()), param_name);

}  // namespace
}  // namespace sapling
