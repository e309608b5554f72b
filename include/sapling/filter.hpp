// Which pairs an engine wants: collision filters and static objects
// (docs/trace-format.md, "Version 2").
//
// Every object has a category and a mask, 32 bits each, and is static or
// dynamic. Two overlapping objects a and b form a pair only when
//   (a.category & b.mask) != 0 && (b.category & a.mask) != 0
//   && !(a is static && b is static).
// This is Box2D's category/mask rule, Bullet's group/mask rule, and PhysX's
// static group in one. A query (a region, a ray) with a mask reports an
// object when
//   (object.category & mask) != 0,
// static objects included. The defaults (category 1, every mask bit, dynamic)
// let every pair through, so a world that sets no filter sees the pairs of
// version 1.
//
// In the library (BroadPhase): static objects are never handed to the
// algorithm; the broad phase keeps them in a tree laid out once and pairs
// them only with the dynamic objects that move, appear or change filter, so
// static-static pairs are never computed. Category and mask are checked as
// the algorithm reports a pair, before the pair manager stores it.
#pragma once

#include <cstdint>

namespace sapling {

/// Every category bit: the default mask, and the mask of a query that
/// wants every object.
inline constexpr std::uint32_t kAllCategories = 0xffffffffu;

/// An object's collision filter.
struct Filter {
  std::uint32_t category = 1;
  std::uint32_t mask = kAllCategories;

  friend constexpr bool operator==(const Filter&, const Filter&) = default;
};

/// Whether an object moves. Static objects may still be moved or removed
/// (a door, a level streamed out), at the cost of a tree update each.
enum class Motion : std::uint8_t { kDynamic, kStatic };

/// The category/mask half of the pair rule.
constexpr bool filters_accept(Filter a, Filter b) noexcept {
  return (a.category & b.mask) != 0 && (b.category & a.mask) != 0;
}

/// The whole pair rule, for two overlapping objects.
constexpr bool may_pair(Filter a, Motion motion_a, Filter b, Motion motion_b) noexcept {
  return filters_accept(a, b) && !(motion_a == Motion::kStatic && motion_b == Motion::kStatic);
}

/// The query rule: whether a region query or a ray with `mask` reports an
/// object with filter `f`.
constexpr bool query_accepts(Filter f, std::uint32_t mask) noexcept { return (f.category & mask) != 0; }

}  // namespace sapling
