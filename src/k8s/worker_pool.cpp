#include "k8s/worker_pool.h"

namespace gte::k8s {

WorkerPool::WorkerPool(std::size_t threads) {
  threads_.reserve(threads);
  for (std::size_t i = 0; i < threads; ++i)
    threads_.emplace_back([this] { run(); });
}

WorkerPool::~WorkerPool() {
  stop();
}

void WorkerPool::post(Task task) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      queue_.push_back(std::move(task));
      wake_.notify_one();
      return;
    }
  }
  task(true);
}

void WorkerPool::stop() {
  std::deque<Task> abandoned;
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
    abandoned.swap(queue_);
  }
  wake_.notify_all();
  for (Task& task : abandoned)
    task(true);
  for (std::thread& thread : threads_) {
    if (thread.joinable()) thread.join();
  }
  threads_.clear();
}

void WorkerPool::run() {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      task = std::move(queue_.front());
      queue_.pop_front();
    }
    task(false);
  }
}

}  // namespace gte::k8s
