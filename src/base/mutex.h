#pragma once
// A std::mutex that clang's thread-safety analysis knows (base/thread_annotations.h), and its
// locks. Members it guards are declared GTE_GUARDED_BY(it); clang builds check every access.
//
//   gte::Mutex mutex_;
//   int count_ GTE_GUARDED_BY(mutex_) = 0;
//   void bump() { gte::MutexLock lock(mutex_); ++count_; }
//
// A condition variable waits on a gte::UniqueLock through std::condition_variable_any (which
// calls its lock() and unlock()); a predicate that reads guarded members is a lambda declared
// GTE_REQUIRES(the mutex): `cv_.wait(lock, [this]() GTE_REQUIRES(mutex_) { return done_; })`.
#include <mutex>

#include "base/thread_annotations.h"

namespace gte {

class GTE_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void lock() GTE_ACQUIRE() { mutex_.lock(); }
  void unlock() GTE_RELEASE() { mutex_.unlock(); }
  bool try_lock() GTE_TRY_ACQUIRE(true) { return mutex_.try_lock(); }

 private:
  std::mutex mutex_;
};

// Holds the mutex for its scope, as std::lock_guard.
class GTE_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) GTE_ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~MutexLock() GTE_RELEASE() { mutex_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mutex_;
};

// Holds the mutex from construction, may release and take it again (unlock(), lock()), and
// releases it at the end of its scope if held then, as std::unique_lock. What
// std::condition_variable_any waits on.
class GTE_SCOPED_CAPABILITY UniqueLock {
 public:
  explicit UniqueLock(Mutex& mutex) GTE_ACQUIRE(mutex) : mutex_(mutex) {
    mutex_.lock();
    held_ = true;
  }
  ~UniqueLock() GTE_RELEASE() {
    if (held_) mutex_.unlock();
  }
  UniqueLock(const UniqueLock&) = delete;
  UniqueLock& operator=(const UniqueLock&) = delete;

  void lock() GTE_ACQUIRE() {
    mutex_.lock();
    held_ = true;
  }
  void unlock() GTE_RELEASE() {
    held_ = false;
    mutex_.unlock();
  }

 private:
  Mutex& mutex_;
  bool held_ = false;
};

// The opposite of MutexLock: releases a mutex the caller holds for its scope and takes it again
// at the end (also when an exception leaves the scope). For a GTE_REQUIRES helper that calls out
// without the lock.
class GTE_SCOPED_CAPABILITY MutexUnlock {
 public:
  explicit MutexUnlock(Mutex& mutex) GTE_RELEASE(mutex) : mutex_(mutex) { mutex_.unlock(); }
  // GTE_RELEASE, though it locks: clang ends every scoped capability by releasing the scope, and
  // one that released a mutex in its constructor takes that mutex back.
  ~MutexUnlock() GTE_RELEASE() { mutex_.lock(); }
  MutexUnlock(const MutexUnlock&) = delete;
  MutexUnlock& operator=(const MutexUnlock&) = delete;

 private:
  Mutex& mutex_;
};

}  // namespace gte
