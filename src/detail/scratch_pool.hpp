// Scratch space for tasks that may run at once: a task takes an object,
// works in it, and gives it back, so a parallel sweep holds as many as ran
// at the same time (at most the task system's concurrency), not one per
// task. Objects are kept between calls, with their capacity. The object a
// task gets depends on timing, so a task must not depend on what an earlier
// task left in it (each sweep re-initialises what it reads).
#pragma once

#include <memory>
#include <mutex>
#include <vector>

namespace sapling::detail {

template <class T>
class ScratchPool {
 public:
  /// An object no other task holds: a free one, or a new one.
  T& take() {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
      all_.push_back(std::make_unique<T>());
      return *all_.back();
    }
    T* const t = free_.back();
    free_.pop_back();
    return *t;
  }

  /// Gives back an object from take().
  void give(T& t) {
    std::lock_guard lock(mutex_);
    free_.push_back(&t);
  }

  /// Every object made so far (for memory_bytes() and validate(); not while tasks run).
  template <class F>
  void for_each(F&& f) const {
    for (const std::unique_ptr<T>& t : all_) f(*t);
  }

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<T>> all_;
  std::vector<T*> free_;
};

}  // namespace sapling::detail
