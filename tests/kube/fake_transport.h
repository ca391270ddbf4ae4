#pragma once
// A scripted ApiTransport: tests install handlers for unary requests and for watch streams, and
// read back what was requested. Streams can block until cancelled, like a quiet watch.
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "kube/api_transport.h"

namespace gte::testing {

struct RecordedRequest {
  std::string method;
  std::string path;
  std::string body;
  std::string contentType;
};

class FakeTransport final : public kube::ApiTransport {
 public:
  using SendHandler = std::function<Result<kube::HttpResponse>(const RecordedRequest&)>;
  // Called per watch with the call's index (0-based); writes chunks through `emit`.
  using StreamHandler = std::function<Result<kube::HttpResponse>(
      int call, const std::string& path, const std::function<bool(std::string_view)>& emit,
      kube::Cancellation& cancel)>;

  SendHandler onSend;
  StreamHandler onStream;
  // When set and true for a request, sendAsync records it but holds its answer until
  // answerHeld() (an API request still in flight).
  std::function<bool(const RecordedRequest&)> holdAsync;

  Result<kube::HttpResponse> send(std::string_view method, const std::string& path,
                                  const std::string& body, std::string_view contentType) override {
    RecordedRequest request{std::string(method), path, body, std::string(contentType)};
    {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
    }
    return onSend(request);
  }

  void sendAsync(std::string method, std::string path, std::string body, std::string contentType,
                 ResponseCallback done) override {
    RecordedRequest request{std::move(method), std::move(path), std::move(body),
                            std::move(contentType)};
    if (holdAsync && holdAsync(request)) {
      std::lock_guard lock(mutex_);
      requests_.push_back(request);
      held_.push_back(Held{std::move(request), std::move(done)});
      return;
    }
    done(send(request.method, request.path, request.body, request.contentType));
  }

  std::size_t heldCount() const {
    std::lock_guard lock(mutex_);
    return held_.size();
  }
  // Answers the oldest held request with onSend's answer.
  void answerHeld() {
    Held next;
    {
      std::lock_guard lock(mutex_);
      next = std::move(held_.front());
      held_.erase(held_.begin());
    }
    next.done(onSend(next.request));
  }

  Result<kube::HttpResponse> stream(const std::string& path,
                                    const std::function<bool(std::string_view)>& onChunk,
                                    kube::Cancellation& cancel) override {
    int call = 0;
    {
      std::lock_guard lock(mutex_);
      call = static_cast<int>(streamPaths_.size());
      streamPaths_.push_back(path);
    }
    changed_.notify_all();
    return onStream(call, path, onChunk, cancel);
  }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }
  std::vector<std::string> streamPaths() const {
    std::lock_guard lock(mutex_);
    return streamPaths_;
  }
  // Waits until at least `count` watches have been opened; false on timeout.
  bool waitForStreams(std::size_t count, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return streamPaths_.size() >= count; });
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<RecordedRequest> requests_;
  std::vector<std::string> streamPaths_;
  struct Held {
    RecordedRequest request;
    ResponseCallback done;
  };
  std::vector<Held> held_;
};

// Blocks like a watch with nothing to say, until cancelled; then fails as a cancelled request.
inline Result<kube::HttpResponse> blockUntilCancelled(kube::Cancellation& cancel) {
  std::mutex mutex;
  std::condition_variable wake;
  bool cancelled = false;
  kube::CancellationRegistration registration(cancel, [&] {
    std::lock_guard lock(mutex);
    cancelled = true;
    wake.notify_all();
  });
  std::unique_lock lock(mutex);
  wake.wait(lock, [&] { return cancelled; });
  return Error{ErrorCode::kUnavailable, "cancelled"};
}

inline kube::HttpResponse ok(std::string body) {
  return kube::HttpResponse{200, std::move(body)};
}

}  // namespace gte::testing
