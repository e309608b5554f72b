// The global operator new, replaced for the tests: it counts allocations
// (the allocation test: none per call once warm) and the bytes they hold
// (glibc's usable sizes: the memory accounting test), and, on demand, throws
// std::bad_alloc on the n-th after fail_allocation_after(n) (the
// out-of-memory tests and the ops fuzzer). Include it in exactly one
// translation unit of a program (it defines the replaceable operators).
// The nothrow forms are replaced too, so that whatever allocates with them
// (libFuzzer does) frees with the same allocator.
#pragma once

#include <atomic>
#include <cstdlib>
#include <new>

#if defined(__GLIBC__)
#include <malloc.h>
#define SAPLING_COUNTS_BYTES 1
#endif

namespace sapling::testing_allocator {
// Allocations so far (operator new and new[], not the nothrow forms).
inline std::atomic<std::size_t> allocations{0};
// Allocations left before one fails; negative: never.
inline std::atomic<long> allocations_left{-1};
// Whether an armed failure happened since it was last cleared.
inline std::atomic<bool> failed{false};
// Bytes held by live allocations of every form (malloc_usable_size), where
// SAPLING_COUNTS_BYTES is defined; 0 elsewhere.
inline std::atomic<long long> live_bytes{0};

inline void* counted(void* p) noexcept {
#if defined(SAPLING_COUNTS_BYTES)
  if (p != nullptr) live_bytes.fetch_add(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed);
#endif
  return p;
}
inline void release(void* p) noexcept {
#if defined(SAPLING_COUNTS_BYTES)
  if (p != nullptr) live_bytes.fetch_sub(static_cast<long long>(malloc_usable_size(p)), std::memory_order_relaxed);
#endif
  std::free(p);
}

inline void fail_allocation_after(long n) { allocations_left = n; }
inline void never_fail() { allocations_left = -1; }

inline void* allocate(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (allocations_left.load(std::memory_order_relaxed) >= 0 && allocations_left.fetch_sub(1) == 0) {
    failed = true;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(size == 0 ? 1 : size)) return counted(p);
  throw std::bad_alloc();
}
}  // namespace sapling::testing_allocator

void* operator new(std::size_t size) { return sapling::testing_allocator::allocate(size); }
void* operator new[](std::size_t size) { return sapling::testing_allocator::allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  return sapling::testing_allocator::counted(std::malloc(size == 0 ? 1 : size));
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return sapling::testing_allocator::counted(std::malloc(size == 0 ? 1 : size));
}
void operator delete(void* p) noexcept { sapling::testing_allocator::release(p); }
void operator delete(void* p, std::size_t) noexcept { sapling::testing_allocator::release(p); }
void operator delete[](void* p) noexcept { sapling::testing_allocator::release(p); }
void operator delete[](void* p, std::size_t) noexcept { sapling::testing_allocator::release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { sapling::testing_allocator::release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { sapling::testing_allocator::release(p); }
