// How sapling runs work in parallel. An engine implements TaskSystem with its
// own job system; sapling ships a thread pool and a serial fallback.
//
// Determinism: sapling splits work into tasks whose number and boundaries
// depend on the input only, never on concurrency(), and combines their
// results in task order, so output is identical for any thread count.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace sapling {

/// A non-owning reference to a callable `void(std::size_t)`: what a task
/// system runs. Cheap to copy, never allocates; valid while the callable is.
class TaskRef {
 public:
  template <class F>
  TaskRef(F& f) noexcept  // NOLINT(google-explicit-constructor): meant to wrap lambdas implicitly
      : object_(&f), call_([](void* o, std::size_t t) { (*static_cast<F*>(o))(t); }) {}
  void operator()(std::size_t t) const { call_(object_, t); }

 private:
  void* object_;
  void (*call_)(void*, std::size_t);
};

class TaskSystem {
 public:
  virtual ~TaskSystem() = default;
  /// Runs `task(t)` for every t in [0, count), in any order and possibly in
  /// parallel, and returns when all have finished. Called from one thread
  /// at a time. sapling's tasks do not throw, except std::bad_alloc (and
  /// the pair budget's refusal) when memory runs short; a task system
  /// should then let the other tasks finish and rethrow one of those
  /// exceptions from run(), as ThreadPool does.
  virtual void run(std::size_t count, TaskRef task) = 0;
  /// How many tasks may run at once (1 for serial).
  virtual unsigned concurrency() const noexcept = 0;
};

/// Runs every task on the calling thread, in order.
class SerialTasks final : public TaskSystem {
 public:
  void run(std::size_t count, TaskRef task) override {
    for (std::size_t t = 0; t < count; ++t) task(t);
  }
  unsigned concurrency() const noexcept override { return 1; }
};

/// A fixed pool of worker threads; the calling thread works too, so a pool
/// of `threads` uses threads - 1 workers.
class ThreadPool final : public TaskSystem {
 public:
  /// The most threads a pool runs (Options::threads is refused above it).
  static constexpr unsigned kMaxThreads = 256;

  /// `threads` = 0 means std::thread::hardware_concurrency(); more than
  /// kMaxThreads means kMaxThreads. When the system refuses to start a
  /// thread (a process or memory limit), the pool keeps the workers it
  /// started and runs with fewer threads: concurrency() tells how many.
  /// Throws only std::bad_alloc, after stopping what it started.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool() override;
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Runs the tasks; if any throws, the others still run, and the first
  /// exception caught is rethrown here once all have finished.
  void run(std::size_t count, TaskRef task) override;
  /// The threads the pool runs on: its workers and the caller.
  unsigned concurrency() const noexcept override { return static_cast<unsigned>(workers_.size()) + 1; }

 private:
  void work();
  void drain();  // runs tasks of the current batch until none is left
  void stop();   // stops and joins the workers

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const TaskRef* task_ = nullptr;
  std::size_t count_ = 0, next_ = 0, finished_ = 0;
  std::uint64_t batch_ = 0;
  std::exception_ptr failure_;  // the first exception a task of the batch threw
  bool stop_ = false;
};

}  // namespace sapling
