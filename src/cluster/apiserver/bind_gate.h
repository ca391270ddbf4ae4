#pragma once
// Bounds the binds in flight to the API server (--bind-concurrency): at most `limit` hold a slot,
// the rest wait in arrival order. No threads of its own: a waiting task starts on the thread that
// frees a slot (an API-client completion) or submits it, so a task must only start asynchronous
// work, never wait on it.
#include <cstddef>
#include <deque>
#include <functional>

#include "base/mutex.h"

namespace gte::cluster {

class BindGate {
 public:
  // `cancelled` is true when the gate stopped before the task got a slot; such a task holds no
  // slot and must not call release().
  using Task = std::function<void(bool cancelled)>;

  explicit BindGate(std::size_t limit);
  BindGate(const BindGate&) = delete;
  BindGate& operator=(const BindGate&) = delete;

  // Runs `task` now when a slot is free, else when one frees up. After stop(), runs it at once
  // with cancelled = true.
  void submit(Task task);
  // The task holding a slot is done with it: the next waiting task starts.
  void release();
  // Runs every waiting task with cancelled = true; later submits are cancelled at once. Tasks
  // holding a slot finish on their own.
  void stop();

  std::size_t inFlight() const;
  std::size_t waiting() const;

 private:
  // Starts waiting tasks while slots are free. Threads pump side by side (starting a Binding can
  // take milliseconds when it opens a TLS connection, and one thread starting them all made a
  // burst's binds queue behind each other), but never re-entrantly: a task that releases its slot
  // before returning does not recurse, the loop already running on its thread picks up the next.
  // Called with mutex_ held; releases it while a task starts.
  void pump() GTE_REQUIRES(mutex_);

  const std::size_t limit_;
  mutable Mutex mutex_;
  std::deque<Task> waiting_ GTE_GUARDED_BY(mutex_);
  std::size_t inFlight_ GTE_GUARDED_BY(mutex_) = 0;
  bool stopped_ GTE_GUARDED_BY(mutex_) = false;
};

}  // namespace gte::cluster
