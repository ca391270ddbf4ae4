#pragma once
// Starts the real extender binary on a free loopback port for HTTP tests, and stops it (SIGTERM,
// then SIGKILL after a deadline) when the test ends, also on failure.
#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gte::testing {

class ExtenderProcess {
 public:
  // `extraArgs` follow `serve --listen 127.0.0.1:<port> --drain-period 0s` (a later flag wins;
  // `--listen 127.0.0.1:0` takes the port the extender's listening line reports). Waits until
  // /healthz answers (or ~15 s).
  explicit ExtenderProcess(std::vector<std::string> extraArgs);
  ~ExtenderProcess();
  ExtenderProcess(const ExtenderProcess&) = delete;
  ExtenderProcess& operator=(const ExtenderProcess&) = delete;

  std::uint16_t port() const { return port_; }
  bool running() const;
  // Everything it wrote to stderr so far (its log).
  std::string log() const;
  // SIGTERM and wait; returns the exit status (or -1).
  int terminate();
  pid_t pid() const { return pid_; }
  // Sends a signal and returns at once.
  void signal(int sig);
  // Waits up to ~10 s for the process to exit; returns its exit status, or -1 if it did not.
  int waitExit();

 private:
  pid_t pid_ = -1;
  mutable bool exited_ = false;  // reaped by running(); the pid must not be signalled again
  mutable int exitStatus_ = 0;
  std::uint16_t port_ = 0;
  std::string logPath_;
};

// The extender binary under test: $GTE_BINARY, else build/bin next to the test executables.
std::string extenderBinary();

}  // namespace gte::testing
