// Ordered parallel work: a range of work items (cells, strips, chunks of
// boxes) cut into tasks whose number and boundaries depend on the input
// only, never on the thread count; the tasks run on a TaskSystem, or in
// order on the calling thread when there is none; and their outputs are
// appended in task order. So the output is identical on any thread count.
//
// Task systems require that tasks do not throw (an engine's job system may
// not expect it; ThreadPool would terminate). run_tasks() therefore catches
// what a task throws (std::bad_alloc, typically), lets every task finish,
// and rethrows the exception of the lowest-numbered failed task on the
// calling thread once the task system has returned.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <vector>

#include "sapling/task_system.hpp"

namespace sapling::detail {

/// Runs task(t) for every t in [0, count): on `tasks` when it is set and
/// there is more than one task, else in order on the calling thread. The
/// first exception (of the lowest t) is rethrown after every task finished.
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
  /// About `per_task` units of weight per task, at least one task and at
  /// most min(most, items); before(i) is the weight of items [0, i) (non-
  /// decreasing), `total` that of all. Task t starts at the first item i
  /// with before(i) >= t * total / tasks.
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

/// Runs task(t, sink) for every t in [0, count) so that `out` receives the
/// tasks' outputs in task order: with a task system running more than one
/// task at once, each task writes into its own buffer (buffers[t], cleared
/// first; `buffers` grows to `count`), which append(buffers, out) then
/// appends in task order (`buffers` a span of the `count` used); otherwise the tasks run in order straight into
/// `out` (sink is `out`), with no copy. Exceptions as run_tasks().
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
    to.reserve(total);
    for (const std::vector<T>& part : parts) to.insert(to.end(), part.begin(), part.end());
  });
}

}  // namespace sapling::detail
