#pragma once
// List+watch of one resource kind into a ReflectorSink, on its own thread (it blocks on network
// reads, which must never happen on cpprest's pool threads). The loop, as client-go's Reflector:
//   list (paged) -> resourceVersion -> watch from it with bookmarks -> apply events -> re-watch
//   from the newest resourceVersion when the server ends the watch (timeoutSeconds)
//   -> on 410 Gone (HTTP or ERROR event) re-list -> on any failure wait a jittered exponential
//   backoff, so an API server that is down is retried calmly, never in a busy loop.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "kube/api_transport.h"
#include "kube/backoff.h"
#include "kube/reflector_sink.h"

namespace gte::kube {

struct ReflectorOptions {
  std::string resource = "pods";  // for log lines and health messages
  std::string path;               // collection path, e.g. "/api/v1/pods"
  std::string fieldSelector;      // optional server-side filter
  std::size_t pageSize = 500;
  // Each watch asks the server to end it after a random duration in [min, 2*min), as client-go
  // does, spreading reconnects of many watchers over time.
  std::chrono::seconds minWatchTimeout{300};
  BackoffOptions backoff;
  // healthy() turns false when every attempt has failed for this long...
  std::chrono::milliseconds failureGrace{std::chrono::seconds(60)};
  // ...or when nothing at all (event, bookmark, list, watch start) has arrived for this long.
  std::chrono::milliseconds stuckAfter{std::chrono::minutes(5)};
};

class Reflector {
 public:
  Reflector(std::shared_ptr<ApiTransport> transport, std::shared_ptr<ReflectorSink> sink,
            ReflectorOptions options);
  ~Reflector();  // stop() with the default deadline
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void start();
  // Cancels the in-flight request and waits up to `deadline` for the thread; past it the thread is
  // detached (it owns everything it touches, so that is safe) and false is returned.
  bool stop(std::chrono::milliseconds deadline = std::chrono::seconds(5));

  // The first full list has been delivered to the sink.
  bool synced() const;
  // False (with the reason in *why) per ReflectorOptions::failureGrace / stuckAfter.
  bool healthy(std::string* why) const;
  // Number of completed full lists (1 after startup; more after 410 Gone). For tests and metrics.
  std::uint64_t lists() const;
  // Failed list or watch attempts (each followed by a backoff), for metrics.
  std::uint64_t failures() const;
  // List items and watch events skipped because their object did not read or the sink refused it
  // (each logged), for metrics.
  std::uint64_t skipped() const;

 private:
  struct Loop;
  std::shared_ptr<Loop> loop_;
  std::thread thread_;
};

}  // namespace gte::kube
