// The contender catalogue: sapling's contenders, then each peer compiled in;
// the query peers by name.
#include <algorithm>
#include <deque>

#include "harness/contender.hpp"
#include "harness/peers.hpp"

namespace sapling::bench {

const std::vector<ContenderInfo>& contender_catalogue() {
  static const std::vector<ContenderInfo> catalogue = [] {
    std::vector<ContenderInfo> list;
    add_sapling_contenders(list);
#if SAPLING_BENCH_HAVE_CGAL
    add_cgal_contenders(list);
#endif
#if SAPLING_BENCH_HAVE_BULLET
    add_bullet_contenders(list);
#endif
#if SAPLING_BENCH_HAVE_FCL
    add_fcl_contenders(list);
#endif
#if SAPLING_BENCH_HAVE_BOX2D
    add_box2d_contenders(list);
#endif
#if SAPLING_BENCH_HAVE_PHYSX
    add_physx_contenders(list);
#endif
    return list;
  }();
  return catalogue;
}

const ContenderInfo* find_contender(const std::string& name) {
  for (const ContenderInfo& info : contender_catalogue()) {
    if (info.name == name) return &info;
  }
  // Made on demand, kept for the process (the runner holds pointers).
  static std::deque<ContenderInfo> with_settings;
  for (const ContenderInfo& info : with_settings) {
    if (info.name == name) return &info;
  }
  std::optional<ContenderInfo> made = sapling_contender_with_settings(name);
  if (!made) return nullptr;
  return &with_settings.emplace_back(std::move(*made));
}

std::unique_ptr<QueryPeer> make_query_peer([[maybe_unused]] const std::string& name) {
#if SAPLING_BENCH_HAVE_BULLET
  if (name == "bullet-dbvt") return make_bullet_query_peer();
#endif
#if SAPLING_BENCH_HAVE_BOX2D
  if (name == "box2d") return make_box2d_query_peer();
#endif
  return nullptr;
}

std::vector<std::string> peer_libraries() {
  std::vector<std::string> libs;
#if SAPLING_BENCH_HAVE_CGAL
  libs.push_back("CGAL " + cgal_version());
#endif
#if SAPLING_BENCH_HAVE_BULLET
  libs.push_back("Bullet " + bullet_version());
#endif
#if SAPLING_BENCH_HAVE_FCL
  libs.push_back("FCL " + fcl_version());
#endif
#if SAPLING_BENCH_HAVE_BOX2D
  libs.push_back("Box2D " + box2d_version());
#endif
#if SAPLING_BENCH_HAVE_PHYSX
  libs.push_back("PhysX " + physx_version());
#endif
  return libs;
}

namespace detail {

void gather(const Scenario& scenario, std::span<const Id> ids, std::vector<Box3>& out) {
  const std::span<const Box3> boxes = scenario.boxes();
  out.resize(ids.size());
  for (std::size_t k = 0; k < ids.size(); ++k) out[k] = boxes[ids[k]];
}

void sort_pairs(std::vector<Pair>& pairs) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
}

}  // namespace detail

}  // namespace sapling::bench
