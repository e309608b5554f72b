// The hashes of `sapling replay --report hash`: FNV-1a 64 over the sorted
// pair list as bytes, each pair `a` then `b`, each a little-endian uint32
// (docs/trace-format.md, "Command line"), and over a query's ascending ids,
// each a little-endian uint32 ("Version 2", "Reports").
//
// FNV-1a is a chain of one multiply per byte, so its speed is the multiply
// latency; the bytes are taken with shifts rather than by reinterpreting
// memory, which keeps the result independent of the host's byte order and
// lets the compiler unroll the eight steps of a pair.
#include "sapling/trace.hpp"

namespace sapling {
namespace {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ull;

constexpr std::uint64_t mix_u32(std::uint64_t h, std::uint32_t v) noexcept {
  h = (h ^ (v & 0xffu)) * kFnvPrime;
  h = (h ^ ((v >> 8) & 0xffu)) * kFnvPrime;
  h = (h ^ ((v >> 16) & 0xffu)) * kFnvPrime;
  h = (h ^ (v >> 24)) * kFnvPrime;
  return h;
}

}  // namespace

std::uint64_t pair_set_hash(std::span<const Pair> sorted_pairs) noexcept {
  std::uint64_t h = kFnvOffset;
  for (const Pair& p : sorted_pairs) h = mix_u32(mix_u32(h, p.a), p.b);
  return h;
}

std::uint64_t id_list_hash(std::span<const Id> sorted_ids) noexcept {
  std::uint64_t h = kFnvOffset;
  for (const Id id : sorted_ids) h = mix_u32(h, id);
  return h;
}

}  // namespace sapling
