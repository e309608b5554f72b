// Ordered parallel work: work items (cells, strips, chunks of boxes) cut
// into tasks fixed by the input alone, run on a TaskSystem or in order on
// the calling thread, their outputs appended in task order: the same output
// on any thread count. Tasks must not throw into a task system (ThreadPool
// would terminate), so a task's exception (std::bad_alloc, typically) is
// caught, every task finishes, and the lowest failed task's is rethrown.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <vector>

#include "detail/reserve.hpp"
#include "sapling/task_system.hpp"

namespace sapling::detail {

/// Runs task(t) for every t in [0, count): on `tasks` if set and count > 1,
/// else in order on the calling thread.
template <class Task>
void run_tasks(TaskSystem* tasks, std::size_t count, Task&& task) {
  if (tasks == nullptr || count <= 1) {
    for (std::size_t t = 0; t < count; ++t) task(t);
    return;
  }
  std::mutex mutex;
  std::exception_ptr error;
  std::size_t error_task = count;
  auto guarded = [&](std::size_t t) {
    try {
      task(t);
    } catch (...) {
      std::lock_guard lock(mutex);
      if (t < error_task) error = std::current_exception(), error_task = t;
    }
  };
  tasks->run(count, TaskRef(guarded));
  if (error) std::rethrow_exception(error);
}

/// Work items [0, items) cut into tasks of consecutive items.
class TaskPlan {
 public:
  /// total / per_task tasks, at least 1 and at most min(most, items); task t
  /// starts at the first item i with before(i) >= t * total / tasks, where
  /// before(i) (non-decreasing) weighs items [0, i) and `total` all.
  template <class Before>
  void split(std::uint32_t items, std::uint64_t total, Before before, std::uint64_t per_task, std::uint32_t most) {
    const std::uint64_t count = std::clamp<std::uint64_t>(total / per_task, 1, std::max(1u, std::min(most, items)));
    first_.clear();
    first_.push_back(0);
    std::uint32_t i = 0;
    for (std::uint64_t t = 1; t < count; ++t) {
      while (i < items && before(i) * count < t * total) ++i;
      first_.push_back(i);
    }
    first_.push_back(items);
  }

  std::size_t size() const noexcept { return first_.size() - 1; }
  /// Task t's items: [first(t), end(t)).
  std::uint32_t first(std::size_t t) const noexcept { return first_[t]; }
  std::uint32_t end(std::size_t t) const noexcept { return first_[t + 1]; }
  std::size_t memory_bytes() const noexcept { return first_.capacity() * sizeof(std::uint32_t); }

 private:
  std::vector<std::uint32_t> first_{0, 0};
};

/// Runs task(t, sink) for every t in [0, count), `out` receiving the outputs
/// in task order: with a task system running tasks at once, task t writes
/// into buffers[t] (cleared first), and append(the count buffers, out) runs
/// after; otherwise the tasks run in order with `out` as the sink (no copy).
template <class Buffer, class Out, class Task, class Append>
void run_ordered(TaskSystem* tasks, std::size_t count, std::vector<Buffer>& buffers, Out& out, Task&& task,
                 Append&& append) {
  if (tasks == nullptr || tasks->concurrency() <= 1 || count <= 1) {
    for (std::size_t t = 0; t < count; ++t) task(t, out);
    return;
  }
  if (buffers.size() < count) buffers.resize(count);
  run_tasks(tasks, count, [&](std::size_t t) {
    buffers[t].clear();
    task(t, buffers[t]);
  });
  append(std::span<const Buffer>(buffers.data(), count), out);
}

/// The same for vectors: each buffer is appended to `out`.
template <class T, class Task>
void run_ordered(TaskSystem* tasks, std::size_t count, std::vector<std::vector<T>>& buffers, std::vector<T>& out,
                 Task&& task) {
  run_ordered(tasks, count, buffers, out, task, [](std::span<const std::vector<T>> parts, std::vector<T>& to) {
    std::size_t total = to.size();
    for (const std::vector<T>& part : parts) total += part.size();
    reserve_geometric(to, total);
    for (const std::vector<T>& part : parts) to.insert(to.end(), part.begin(), part.end());
  });
}

}  // namespace sapling::detail
