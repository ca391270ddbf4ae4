#include "kube/cancellation.h"

namespace gte::kube {

void Cancellation::cancel() {
  std::vector<std::pair<int, std::function<void()>>> toRun;
  {
    std::lock_guard lock(mutex_);
    if (cancelled_) return;
    cancelled_ = true;
    toRun.swap(callbacks_);
  }
  for (auto& [id, callback] : toRun)
    callback();
}

bool Cancellation::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

int Cancellation::onCancel(std::function<void()> callback) {
  {
    std::lock_guard lock(mutex_);
    if (!cancelled_) {
      callbacks_.emplace_back(nextId_, std::move(callback));
      return nextId_++;
    }
  }
  callback();
  return -1;
}

void Cancellation::unregister(int id) {
  std::lock_guard lock(mutex_);
  std::erase_if(callbacks_, [id](const auto& entry) { return entry.first == id; });
}

}  // namespace gte::kube
