// The registry's facts about each built-in algorithm (registry.hpp) are the
// ones every other place shows, and they are true:
// - README's tables and docs/algorithms/README.md show each algorithm's
//   AlgorithmInfo::when word for word, the product in README's first table
//   and the reference shelf in the one below it;
// - auto's candidates are the product line, with the registry's facts;
// - an algorithm said to recompute reports every pair anew in every frame
//   (Reported::kEveryPair), and one said to track reports changes in a
//   frame of small moves.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "algorithms/auto/candidates.hpp"
#include "sapling/registry.hpp"

namespace sapling {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Row {
  std::string when;
  std::size_t at;  // offset in the file
};

// The rows "| `name` | ... | when |" of a Markdown file, by name.
std::map<std::string, Row> table_rows(const std::string& text) {
  std::map<std::string, Row> rows;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(at, end - at);
    if (line.rfind("| `", 0) == 0 && line.size() > 4 && line.substr(line.size() - 2) == " |") {
      const std::string name = line.substr(3, line.find('`', 3) - 3);
      const std::size_t last = line.rfind(" | ", line.size() - 3);
      rows[name] = {line.substr(last + 3, line.size() - 2 - (last + 3)), at};
    }
    at = end + 1;
  }
  return rows;
}

TEST(RegistryFacts, EveryBuiltInSaysWhenToChooseIt) {
  for (const AlgorithmInfo& info : algorithms()) EXPECT_FALSE(info.when.empty()) << info.name;
}

TEST(RegistryFacts, ReadmeShowsTheRegistrysWhenAndShelves) {
  const std::string readme = read_file(SAPLING_SOURCE_DIR "/README.md");
  ASSERT_FALSE(readme.empty());
  const std::size_t shelf = readme.find("The reference shelf (`src/reference/`)");
  ASSERT_NE(shelf, std::string::npos);
  const std::map<std::string, Row> rows = table_rows(readme);
  for (const AlgorithmInfo& info : algorithms()) {
    const auto row = rows.find(info.name);
    ASSERT_NE(row, rows.end()) << info.name << " has no row in README's tables";
    EXPECT_EQ(row->second.when, info.when) << info.name;
    EXPECT_EQ(row->second.at < shelf, info.product) << info.name << " is in the wrong table";
  }
}

TEST(RegistryFacts, AlgorithmsPageShowsTheRegistrysWhen) {
  const std::map<std::string, Row> rows = table_rows(read_file(SAPLING_SOURCE_DIR "/docs/algorithms/README.md"));
  for (const AlgorithmInfo& info : algorithms()) {
    const auto row = rows.find(info.name);
    ASSERT_NE(row, rows.end()) << info.name << " has no row in docs/algorithms/README.md";
    EXPECT_EQ(row->second.when, info.when) << info.name;
  }
}

TEST(RegistryFacts, AutosCandidatesAreTheProductLine) {
  const detail::Candidates candidates = detail::product_line();
  for (const AlgorithmInfo& info : algorithms()) {
    const detail::Candidate* c = candidates.find(info.name);
    EXPECT_EQ(c != nullptr, info.product && info.name != "auto") << info.name;
    if (c != nullptr) {
      EXPECT_EQ(c->recomputes, info.recomputes) << info.name;
    }
  }
}

// A world of 300 boxes, then frames moving 3 of them a little: what each
// update() says it reported.
std::vector<Reported> reported_by(const AlgorithmInfo& info) {
  Options options;
  std::unique_ptr<Algorithm> algorithm = info.make(options);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> corner(0.0f, 30.0f);
  constexpr Slot kObjects = 300;
  std::vector<Box3> boxes(kObjects);
  std::vector<Slot> slots(kObjects);
  std::vector<Id> ids(kObjects);
  for (Slot s = 0; s < kObjects; ++s) {
    const float x = corner(rng), y = corner(rng), z = corner(rng);
    boxes[s] = Box3{{x, y, z}, {x + 1.0f, y + 1.0f, z + 1.0f}};
    slots[s] = s;
    ids[s] = s + 1;
  }
  PairManager pairs;
  std::vector<Pair> created, deleted;
  std::vector<Reported> said;
  said.push_back(algorithm->update(FrameOps{{}, {}, {}, slots, boxes, boxes, {}}, ids, pairs));
  pairs.end_frame(created, deleted);
  for (int frame = 0; frame < 6; ++frame) {
    std::vector<Slot> moved{static_cast<Slot>(frame), static_cast<Slot>(frame + 100), static_cast<Slot>(frame + 200)};
    std::vector<Box3> to;
    for (const Slot s : moved) {
      Box3 b = boxes[s];
      for (int k = 0; k < 3; ++k) b.min[k] += 0.01f, b.max[k] += 0.01f;
      to.push_back(b);
    }
    said.push_back(algorithm->update(FrameOps{{}, moved, to, {}, {}, boxes, {}}, ids, pairs));
    pairs.end_frame(created, deleted);
    for (std::size_t k = 0; k < moved.size(); ++k) boxes[moved[k]] = to[k];
  }
  return said;
}

TEST(RegistryFacts, RecomputingMeansReportingEveryPairEveryFrame) {
  for (const AlgorithmInfo& info : algorithms()) {
    const std::vector<Reported> said = reported_by(info);
    const std::size_t every = std::count(said.begin() + 1, said.end(), Reported::kEveryPair);
    if (info.recomputes) {
      EXPECT_EQ(every, said.size() - 1) << info.name << " is said to recompute";
    } else {
      EXPECT_LT(every, said.size() - 1) << info.name << " is said to track changes";
    }
  }
}

}  // namespace
}  // namespace sapling
