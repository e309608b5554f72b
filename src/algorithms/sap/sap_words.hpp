// sap's endpoint words and their order, shared by the endpoint arrays'
// walk and merge (sap_endpoints.cpp) and the single-pass batch update
// (sap_batch.cpp). A word is key << 32 | flag << 31 | owner: the sortable
// key of the coordinate (float_key), the min/max flag, the owner's slot.
// Words are ordered by rank (key, flag), the upper 33 bits: at equal keys a
// min comes before a max (closed intervals); the owner plays no part.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>

#include "algorithms/sap/sap_endpoints.hpp"
#include "sapling/float_key.hpp"

namespace sapling::detail::sap_words {

using Endpoint = SapEndpoints::Endpoint;

constexpr Endpoint kMaxFlag = Endpoint{1} << 31;
constexpr Endpoint kOwnerMask = kMaxFlag - 1;

constexpr Endpoint make_endpoint(std::uint32_t key, Slot owner, bool is_max) noexcept {
  return (Endpoint{key} << 32) | (is_max ? kMaxFlag : 0) | owner;
}
constexpr std::uint32_t endpoint_key(Endpoint e) noexcept { return static_cast<std::uint32_t>(e >> 32); }
constexpr Slot endpoint_owner(Endpoint e) noexcept { return static_cast<Slot>(e & kOwnerMask); }
/// 0 for a min, 1 for a max.
constexpr std::uint32_t endpoint_kind(Endpoint e) noexcept { return static_cast<std::uint32_t>(e >> 31) & 1; }
/// Where pos_ keeps the index of this endpoint: 2 * owner + kind.
constexpr std::uint32_t pos_index(Endpoint e) noexcept { return std::rotl(static_cast<std::uint32_t>(e), 1); }
/// The smallest and largest words of e's rank (key, flag): comparing a word
/// with these compares ranks, whatever the owner bits.
constexpr Endpoint rank_floor(Endpoint e) noexcept { return e & ~kOwnerMask; }
constexpr Endpoint rank_ceiling(Endpoint e) noexcept { return e | kOwnerMask; }
constexpr bool rank_less(Endpoint a, Endpoint b) noexcept { return (a >> 31) < (b >> 31); }

// Sentinels (appendix B): ranks below and above every coordinate's, the
// infinities included, so the walks need no bounds checks.
constexpr Endpoint kLowSentinel = 0;
constexpr Endpoint kHighSentinel = ~Endpoint{0};
static_assert(float_key(-std::numeric_limits<float>::infinity()) > 0);
static_assert(float_key(std::numeric_limits<float>::infinity()) < 0xffffffffu);

/// Cross bounds that no live entry has (min above max): marks the entries
/// of removed boxes until their axis is compacted.
constexpr std::uint32_t kDeadCrossMin = 0xffffffffu;
constexpr std::uint32_t kDeadCrossMax = 0;

/// Whether entry e is a `kind` endpoint whose cross bounds overlap [lo, hi]
/// (closed: equal keys overlap). One branch for the caller: bit 63 collects
/// the borrows of e.cross_max - lo and hi - e.cross_min and a kind mismatch.
inline bool kind_and_cross_overlap(const SapEndpoints::Entry& e, std::uint32_t kind, std::uint32_t lo,
                                   std::uint32_t hi) noexcept {
  const std::uint64_t misses =
      (std::uint64_t{e.cross_max} - lo) | (std::uint64_t{hi} - e.cross_min) | (((e.word >> 31) ^ kind) << 63);
  return (misses >> 63) == 0;
}

}  // namespace sapling::detail::sap_words
