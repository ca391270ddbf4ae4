// The --bind-concurrency gate: at most `limit` binds hold a slot, the rest wait in arrival order;
// a task that finishes at once does not recurse; a slow task starting on one thread does not hold
// back tasks other threads submit; stop() cancels the waiting.
#include "cluster/apiserver/bind_gate.h"

#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

using gte::cluster::BindGate;

TEST_CASE("bind gate: a limit of slots, the rest wait in arrival order") {
  BindGate gate(2);
  std::vector<int> started;
  for (int i = 0; i < 5; ++i) {
    gate.submit([&started, i](bool cancelled) {
      if (!cancelled) started.push_back(i);
    });
  }
  CHECK(started == std::vector<int>{0, 1});
  CHECK(gate.inFlight() == 2);
  CHECK(gate.waiting() == 3);
  gate.release();
  CHECK(started == std::vector<int>{0, 1, 2});
  gate.release();
  gate.release();
  CHECK(started == std::vector<int>{0, 1, 2, 3, 4});
  CHECK(gate.waiting() == 0);
}

// An API client that fails at once completes each bind inside its own start: 100,000 of them
// must run one after the other on the loop, not nest 100,000 calls deep.
TEST_CASE("bind gate: tasks that release their slot at once do not recurse") {
  BindGate gate(1);
  int depth = 0;
  int deepest = 0;
  int done = 0;
  std::function<void(bool)> task = [&](bool) {
    deepest = std::max(deepest, ++depth);
    ++done;
    gate.release();
    --depth;
  };
  gate.submit([&](bool) { /* holds the slot until released below */ });
  for (int i = 0; i < 100'000; ++i)
    gate.submit(task);
  gate.release();
  CHECK(done == 100'000);
  CHECK(deepest == 1);
  CHECK(gate.inFlight() == 0);
}

// A Binding that opens a TLS connection can take milliseconds to start. Thread A is inside such a
// start; thread B's bind, with slots free, starts at once instead of waiting for A's loop.
TEST_CASE("bind gate: a slow start on one thread does not hold back another thread") {
  BindGate gate(4);
  std::promise<void> releaseA;
  std::promise<void> aStarted;
  std::thread a([&] {
    gate.submit([&](bool) {
      aStarted.set_value();
      releaseA.get_future().wait();
    });
  });
  aStarted.get_future().wait();
  std::atomic<bool> bStarted{false};
  std::thread b([&] { gate.submit([&](bool) { bStarted = true; }); });
  b.join();
  CHECK(bStarted.load());
  CHECK(gate.inFlight() == 2);
  releaseA.set_value();
  a.join();
}

TEST_CASE("bind gate: stop cancels the waiting, and later submits at once") {
  BindGate gate(1);
  std::vector<bool> outcomes;
  gate.submit([&](bool cancelled) { outcomes.push_back(cancelled); });
  gate.submit([&](bool cancelled) { outcomes.push_back(cancelled); });
  gate.stop();
  gate.submit([&](bool cancelled) { outcomes.push_back(cancelled); });
  CHECK(outcomes == std::vector<bool>{false, true, true});
}
