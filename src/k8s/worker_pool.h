#pragma once
// A few threads of our own for work that blocks on the network (bind: up to four API calls). The
// HTTP server's handlers run on cpprest's pool, which also completes the API client's I/O: blocking
// those threads on API calls can starve the pool and deadlock it, so such work is posted here and
// answered from a callback instead.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gte::k8s {

class WorkerPool {
 public:
  // `cancelled` is true when the pool stopped before the task could run.
  using Task = std::function<void(bool cancelled)>;

  explicit WorkerPool(std::size_t threads);
  ~WorkerPool();  // stop()
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // After stop() the task runs at once on the caller's thread with cancelled = true.
  void post(Task task);
  // Lets running tasks finish, runs queued ones with cancelled = true, joins the threads.
  void stop();

 private:
  void run();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Task> queue_;  // GUARDED_BY(mutex_)
  bool stopping_ = false;   // GUARDED_BY(mutex_)
  std::vector<std::thread> threads_;
};

}  // namespace gte::k8s
