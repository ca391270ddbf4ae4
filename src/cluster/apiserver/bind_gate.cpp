#include "cluster/apiserver/bind_gate.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace gte::cluster {

BindGate::BindGate(std::size_t limit) : limit_(std::max<std::size_t>(1, limit)) {}

void BindGate::submit(Task task) {
  UniqueLock lock(mutex_);
  if (stopped_) {
    lock.unlock();
    task(true);
    return;
  }
  waiting_.push_back(std::move(task));
  pump();
}

void BindGate::release() {
  MutexLock lock(mutex_);
  if (inFlight_ > 0) --inFlight_;
  pump();
}

void BindGate::stop() {
  std::deque<Task> cancelled;
  {
    MutexLock lock(mutex_);
    stopped_ = true;
    cancelled.swap(waiting_);
  }
  for (Task& task : cancelled)
    task(true);
}

namespace {
// The gates this thread is pumping now (a task may submit to or release another gate).
thread_local std::vector<const BindGate*> pumpingHere;

// Marks `gate` as pumped by this thread for the guard's lifetime.
class PumpingHere {
 public:
  explicit PumpingHere(const BindGate* gate) : gate_(gate) { pumpingHere.push_back(gate); }
  ~PumpingHere() { pumpingHere.erase(std::find(pumpingHere.begin(), pumpingHere.end(), gate_)); }
  PumpingHere(const PumpingHere&) = delete;
  PumpingHere& operator=(const PumpingHere&) = delete;
  static bool active(const BindGate* gate) {
    return std::find(pumpingHere.begin(), pumpingHere.end(), gate) != pumpingHere.end();
  }

 private:
  const BindGate* gate_;
};
}  // namespace

void BindGate::pump() {
  if (PumpingHere::active(this)) return;
  const PumpingHere here(this);
  while (!stopped_ && inFlight_ < limit_ && !waiting_.empty()) {
    Task task = std::move(waiting_.front());
    waiting_.pop_front();
    ++inFlight_;
    const MutexUnlock unlocked(mutex_);
    task(false);
  }
}

std::size_t BindGate::inFlight() const {
  MutexLock lock(mutex_);
  return inFlight_;
}

std::size_t BindGate::waiting() const {
  MutexLock lock(mutex_);
  return waiting_.size();
}

}  // namespace gte::cluster
