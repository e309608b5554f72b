// The ordered task planner (src/detail/task_plan.hpp): task boundaries cover
// the items in order and follow the weights; run_ordered() gives the same
// output serially and on ThreadPools of 1..4 threads; and a task that throws
// (std::bad_alloc) neither ends the process nor stops the other tasks: the
// lowest failed task's exception comes back on the calling thread.
#include "detail/task_plan.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <new>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace sapling::detail {
namespace {

TEST(TaskPlan, SplitCoversTheItemsByWeight) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const std::uint32_t items = 1 + rng() % 300;
    std::vector<std::uint64_t> before(items + 1, 0);
    for (std::uint32_t i = 0; i < items; ++i) before[i + 1] = before[i] + (rng() % 4 == 0 ? rng() % 5000 : rng() % 50);
    const std::uint64_t per_task = 1 + rng() % 2000;
    const std::uint32_t most = 1 + rng() % 64;
    TaskPlan plan;
    plan.split(
        items, before[items], [&](std::uint32_t i) { return before[i]; }, per_task, most);
    const std::uint64_t count = plan.size();
    EXPECT_GE(count, 1u);
    EXPECT_LE(count, std::min<std::uint64_t>(most, items));
    EXPECT_EQ(count, std::clamp<std::uint64_t>(before[items] / per_task, 1, std::min(most, items)));
    EXPECT_EQ(plan.first(0), 0u);
    EXPECT_EQ(plan.end(count - 1), items);
    for (std::size_t t = 0; t < count; ++t) {
      EXPECT_LE(plan.first(t), plan.end(t));
      // Task t starts at the first item with before(i) >= t * total / count.
      const std::uint32_t f = plan.first(t);
      if (t > 0) {
        EXPECT_GE(before[f] * count, t * before[items]) << "task " << t;
        if (f > 0) {
          EXPECT_LT(before[f - 1] * count, t * before[items]) << "task " << t;
        }
      }
    }
  }
}

// Items 0..n-1 of weights w(i), every task emitting its items' values: the
// same list on any thread count, and equal to a serial run.
std::vector<std::uint64_t> ordered_run(TaskSystem* tasks, std::uint32_t items) {
  std::vector<std::uint64_t> before(items + 1, 0);
  for (std::uint32_t i = 0; i < items; ++i) before[i + 1] = before[i] + (i * 2654435761u) % 97;
  TaskPlan plan;
  plan.split(
      items, before[items], [&](std::uint32_t i) { return before[i]; }, 100, 64);
  std::vector<std::vector<std::uint64_t>> buffers;
  std::vector<std::uint64_t> out{42};  // appended to, not replaced
  run_ordered(tasks, plan.size(), buffers, out, [&](std::size_t t, std::vector<std::uint64_t>& sink) {
    for (std::uint32_t i = plan.first(t); i < plan.end(t); ++i) {
      for (std::uint64_t k = 0; k < before[i + 1] - before[i]; ++k) sink.push_back(std::uint64_t{i} << 32 | k);
    }
  });
  return out;
}

TEST(TaskPlan, SameOutputOnAnyThreadCount) {
  for (const std::uint32_t items : {1u, 2u, 10u, 1000u, 20000u}) {
    SCOPED_TRACE("items " + std::to_string(items));
    const std::vector<std::uint64_t> serial = ordered_run(nullptr, items);
    std::uint64_t expected_size = 1;
    for (std::uint32_t i = 0; i < items; ++i) expected_size += (i * 2654435761u) % 97;
    EXPECT_EQ(serial.size(), expected_size);
    SerialTasks one;
    EXPECT_EQ(ordered_run(&one, items), serial);
    for (unsigned threads = 1; threads <= 4; ++threads) {
      ThreadPool pool(threads);
      for (int repeat = 0; repeat < 3; ++repeat) EXPECT_EQ(ordered_run(&pool, items), serial) << threads << " threads";
    }
  }
}

TEST(TaskPlan, CustomSinkAndAppend) {
  // unisize's way: a callable sink, buffers appended by a function of all of them.
  ThreadPool pool(3);
  for (TaskSystem* tasks : {static_cast<TaskSystem*>(nullptr), static_cast<TaskSystem*>(&pool)}) {
    struct Buffer {
      std::vector<int> v;
      void operator()(int x) { v.push_back(x); }
      void clear() { v.clear(); }
    };
    std::vector<int> got;
    auto report = [&](int x) { got.push_back(x); };
    std::vector<Buffer> buffers;
    run_ordered(
        tasks, 50, buffers, report,
        [](std::size_t t, auto& sink) {
          for (int k = 0; k < 3; ++k) sink(static_cast<int>(t) * 3 + k);
        },
        [](std::span<const Buffer> parts, decltype(report)& to) {
          for (const Buffer& b : parts)
            for (const int x : b.v) to(x);
        });
    std::vector<int> expected(150);
    std::iota(expected.begin(), expected.end(), 0);
    EXPECT_EQ(got, expected);
  }
}

TEST(TaskPlan, ThrowingTaskIsRethrownAfterAllFinish) {
  for (unsigned threads = 1; threads <= 4; ++threads) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    ThreadPool pool(threads);
    for (int repeat = 0; repeat < 20; ++repeat) {
      std::atomic<int> finished{0};
      std::vector<std::vector<int>> buffers;
      std::vector<int> out;
      bool caught = false;
      try {
        run_ordered(&pool, 16, buffers, out, [&](std::size_t t, std::vector<int>& sink) {
          if (t == 5 || t == 11) throw std::bad_alloc();
          sink.push_back(static_cast<int>(t));
          ++finished;
        });
      } catch (const std::bad_alloc&) {
        caught = true;
      }
      EXPECT_TRUE(caught);
      if (threads > 1) {
        EXPECT_EQ(finished.load(), 14);  // every other task ran to the end
      }
      // The pool still works.
      out.clear();
      run_ordered(&pool, 8, buffers, out, [](std::size_t t, std::vector<int>& sink) { sink.push_back(int(t)); });
      EXPECT_EQ(out, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    }
  }
}

TEST(TaskPlan, LowestFailedTaskWins) {
  ThreadPool pool(4);
  for (int repeat = 0; repeat < 20; ++repeat) {
    try {
      run_tasks(&pool, 32, [](std::size_t t) {
        if (t % 7 == 3) throw std::runtime_error(std::to_string(t));
      });
      ADD_FAILURE() << "nothing thrown";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "3");
    }
  }
}

TEST(TaskPlan, SerialRunStopsAtTheThrow) {
  int ran = 0;
  EXPECT_THROW(run_tasks(nullptr, 10,
                         [&](std::size_t t) {
                           if (t == 4) throw std::bad_alloc();
                           ++ran;
                         }),
               std::bad_alloc);
  EXPECT_EQ(ran, 4);
}

}  // namespace
}  // namespace sapling::detail
