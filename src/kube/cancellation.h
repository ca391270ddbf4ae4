#pragma once
// A one-shot cancellation signal shared by the owner of a long operation (stop()) and the operation
// itself (an in-flight watch). The transport registers a callback that aborts its request, so a
// blocked read returns promptly instead of waiting for the server's watch timeout.
#include <functional>
#include <mutex>
#include <vector>

namespace gte::kube {

class Cancellation {
 public:
  // Runs every registered callback once; later registrations run immediately.
  void cancel();
  bool cancelled() const;
  // Returns an id for unregister(). The callback runs on the cancelling thread, outside the lock.
  int onCancel(std::function<void()> callback);
  void unregister(int id);

 private:
  mutable std::mutex mutex_;
  bool cancelled_ = false;
  int nextId_ = 0;
  std::vector<std::pair<int, std::function<void()>>> callbacks_;
};

// Unregisters a callback when the operation it guards ends.
class CancellationRegistration {
 public:
  CancellationRegistration(Cancellation& cancellation, std::function<void()> callback)
      : cancellation_(cancellation), id_(cancellation.onCancel(std::move(callback))) {}
  ~CancellationRegistration() { cancellation_.unregister(id_); }
  CancellationRegistration(const CancellationRegistration&) = delete;
  CancellationRegistration& operator=(const CancellationRegistration&) = delete;

 private:
  Cancellation& cancellation_;
  int id_;
};

}  // namespace gte::kube
