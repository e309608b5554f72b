// The default thread pool (task_system.hpp). Tasks are coarse (a chunk of
// a sweep), so one mutex-protected counter is cheap enough; the calling
// thread takes tasks too instead of sleeping.
#include "sapling/task_system.hpp"

#include <system_error>
#include <utility>

namespace sapling {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min(threads, kMaxThreads);
  try {
    workers_.reserve(threads - 1);
    for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
  } catch (const std::system_error&) {
    // The system would not start another thread: run with those started.
  } catch (...) {
    stop();  // a destructor does not run after a throwing constructor
    throw;
  }
}

ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::stop() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
}

void ThreadPool::run(std::size_t count, TaskRef task) {
  if (count == 0) return;
  if (workers_.empty() || count == 1) {
    for (std::size_t t = 0; t < count; ++t) task(t);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    task_ = &task;
    count_ = count;
    next_ = 0;
    finished_ = 0;
    ++batch_;
  }
  wake_.notify_all();
  drain();
  std::unique_lock lock(mutex_);
  done_.wait(lock, [this] { return finished_ == count_; });
  task_ = nullptr;
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void ThreadPool::drain() {
  std::unique_lock lock(mutex_);
  while (task_ != nullptr && next_ < count_) {
    const std::size_t t = next_++;
    const TaskRef* task = task_;
    lock.unlock();
    std::exception_ptr failure;
    try {
      (*task)(t);
    } catch (...) {
      failure = std::current_exception();
    }
    lock.lock();
    if (failure && !failure_) failure_ = std::move(failure);
    if (++finished_ == count_) done_.notify_all();
  }
}

void ThreadPool::work() {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || (batch_ != seen && task_ != nullptr); });
      if (stop_) return;
      seen = batch_;
    }
    drain();
  }
}

}  // namespace sapling
