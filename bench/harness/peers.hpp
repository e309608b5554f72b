// The peer libraries' contenders, each in its own file (peer_<name>.cpp),
// compiled only with SAPLING_BENCH_PEERS=ON and when CMake found the
// library (PhysX: when SAPLING_PHYSX_ROOT names its tree);
// SAPLING_BENCH_HAVE_<NAME> says which were.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/contender.hpp"

namespace sapling::bench {

/// sapling's own contenders (sapling_contenders.cpp).
void add_sapling_contenders(std::vector<ContenderInfo>& out);
/// "NAME:SETTINGS": a registered algorithm with settings other than its
/// defaults (BroadPhase::create), or nothing if NAME is not one.
std::optional<ContenderInfo> sapling_contender_with_settings(const std::string& spec);

#if SAPLING_BENCH_HAVE_CGAL
/// "cgal": CGAL::box_self_intersection_d (closed boxes), recomputed each frame;
/// "cgal-bipartite": CGAL::box_intersection_d between the two sets.
void add_cgal_contenders(std::vector<ContenderInfo>& out);
std::string cgal_version();
#endif

#if SAPLING_BENCH_HAVE_BULLET
/// "bullet-dbvt": btDbvtBroadphase; "bullet-axis-sweep": bt32BitAxisSweep3.
void add_bullet_contenders(std::vector<ContenderInfo>& out);
/// The query peer "bullet-dbvt": a btDbvtBroadphase holding the world.
std::unique_ptr<QueryPeer> make_bullet_query_peer();
std::string bullet_version();
#endif

#if SAPLING_BENCH_HAVE_FCL
/// "fcl-dtree": DynamicAABBTreeCollisionManager; "fcl-ssap": SSaPCollisionManager.
void add_fcl_contenders(std::vector<ContenderInfo>& out);
std::string fcl_version();
#endif

#if SAPLING_BENCH_HAVE_BOX2D
/// "box2d": b2BroadPhase (b2DynamicTree plus its move buffer), 2D scenes only.
void add_box2d_contenders(std::vector<ContenderInfo>& out);
/// The query peer "box2d": a b2DynamicTree holding the world in the plane.
std::unique_ptr<QueryPeer> make_box2d_query_peer();
std::string box2d_version();
#endif

#if SAPLING_BENCH_HAVE_PHYSX
/// "physx-abp", "physx-mbp", "physx-sap": PhysX 5's PxBroadPhase (built from
/// a PhysX tree given as SAPLING_PHYSX_ROOT; shared/peers/README.md).
void add_physx_contenders(std::vector<ContenderInfo>& out);
std::string physx_version();
#endif

}  // namespace sapling::bench
