#include "k8s/bind_gate.h"

#include <algorithm>
#include <utility>

namespace gte::k8s {

BindGate::BindGate(std::size_t limit) : limit_(std::max<std::size_t>(1, limit)) {}

void BindGate::submit(Task task) {
  std::unique_lock lock(mutex_);
  if (stopped_) {
    lock.unlock();
    task(true);
    return;
  }
  waiting_.push_back(std::move(task));
  pump(lock);
}

void BindGate::release() {
  std::unique_lock lock(mutex_);
  if (inFlight_ > 0) --inFlight_;
  pump(lock);
}

void BindGate::stop() {
  std::deque<Task> cancelled;
  {
    std::lock_guard lock(mutex_);
    stopped_ = true;
    cancelled.swap(waiting_);
  }
  for (Task& task : cancelled)
    task(true);
}

void BindGate::pump(std::unique_lock<std::mutex>& lock) {
  if (pumping_) return;
  pumping_ = true;
  while (!stopped_ && inFlight_ < limit_ && !waiting_.empty()) {
    Task task = std::move(waiting_.front());
    waiting_.pop_front();
    ++inFlight_;
    lock.unlock();
    task(false);
    lock.lock();
  }
  pumping_ = false;
}

std::size_t BindGate::inFlight() const {
  std::lock_guard lock(mutex_);
  return inFlight_;
}

std::size_t BindGate::waiting() const {
  std::lock_guard lock(mutex_);
  return waiting_.size();
}

}  // namespace gte::k8s
