// The thread pool runs every task of a batch exactly once, batch after
// batch, and the serial fallback does the same in order. Run under TSan in CI.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "sapling/task_system.hpp"

namespace sapling {
namespace {

void expect_each_task_once(TaskSystem& tasks) {
  for (std::size_t count : {0u, 1u, 2u, 3u, 17u, 1000u}) {
    std::vector<std::atomic<int>> runs(count);
    auto task = [&](std::size_t t) { runs[t].fetch_add(1, std::memory_order_relaxed); };
    tasks.run(count, TaskRef(task));
    for (std::size_t t = 0; t < count; ++t) ASSERT_EQ(runs[t].load(), 1) << "task " << t << " of " << count;
  }
}

TEST(TaskSystem, SerialRunsInOrder) {
  SerialTasks serial;
  std::vector<std::size_t> order;
  auto task = [&](std::size_t t) { order.push_back(t); };
  serial.run(5, TaskRef(task));
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(serial.concurrency(), 1u);
  expect_each_task_once(serial);
}

TEST(TaskSystem, ThreadPoolRunsEachTaskOnce) {
  for (unsigned threads : {1u, 2u, 4u}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.concurrency(), threads);
    for (int batch = 0; batch < 50; ++batch) expect_each_task_once(pool);
  }
}

TEST(TaskSystem, ThreadPoolSumsInParallel) {
  ThreadPool pool(3);
  std::vector<std::uint64_t> partial(64, 0);
  auto task = [&](std::size_t t) {
    for (std::uint64_t i = 0; i < 10000; ++i) partial[t] += i * (t + 1);
  };
  pool.run(partial.size(), TaskRef(task));
  std::uint64_t total = 0;
  for (std::uint64_t p : partial) total += p;
  EXPECT_EQ(total, std::uint64_t{49995000} * (64 * 65 / 2));
}

}  // namespace
}  // namespace sapling
