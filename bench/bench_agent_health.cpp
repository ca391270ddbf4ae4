// The node agent's pass with the health signals (docs/agent.md, "Health"; docs/performance.md):
// discovery, NVLink error counters, XID drain, PCIe, clocks and ECC through the real dlopen path
// against the fake libnvidia-ml.so.1 of the tests, on its 8-GPU HGX H100 (18 NVLinks per GPU),
// then the labels it publishes. Prints the median CPU time per pass over `rounds` rounds of
// `passes` passes, and the NVML calls one pass makes (the fake counts them).
//
//   build/bin/bench_agent_health [FAKE_LIBNVIDIA_ML] [rounds] [passes]
// (default: the fake the build puts in build/fake-nvml/).
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "agent/nvml_health.h"
#include "agent/publishable_labels.h"
#include "policy/default_policy.h"

namespace {

double cpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  // Default: the fake the build puts beside bin/ (build/fake-nvml/libnvidia-ml.so.1).
  std::string library = argc > 1 ? argv[1] : std::string();
  if (library.empty()) {
    std::error_code error;
    const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
    library = (self.parent_path().parent_path() / "fake-nvml" / "libnvidia-ml.so.1").string();
  }
  const int rounds = argc > 2 ? std::max(1, std::atoi(argv[2])) : 9;
  const int passes = argc > 3 ? std::max(1, std::atoi(argv[3])) : 200;
  const std::filesystem::path control = std::filesystem::temp_directory_path() /
                                        ("gte-bench-agent-health-" + std::to_string(::getpid()));
  // Every counter moving a little each pass: the rates are computed, no threshold is reached.
  std::ofstream(control) << "replay 0 0 1\nrecovery 3 2 0\n";
  ::setenv("GTE_FAKE_NVML_MACHINE", "hgx-h100", 1);
  ::setenv("GTE_FAKE_NVML_HEALTH", control.c_str(), 1);

  using namespace std::chrono_literals;
  gte::agent::HealthClock::time_point now{};
  gte::agent::NvmlHealthSource source(library, {2, 100, 3600s}, {}, [&now] { return now; });
  const gte::Policy policy = gte::defaultPolicy();
  const auto pass = [&] {
    now += 1min;
    auto discovery = source.discover();
    if (!discovery.ok()) {
      std::fprintf(stderr, "pass failed: %s\n", discovery.error().message.c_str());
      std::exit(1);
    }
    auto labels = gte::agent::publishableLabels(*discovery, 1764670000, policy);
    if (!labels.ok()) std::exit(1);
  };
  pass();  // opens NVML, registers the event set: the first pass is not the steady state

  void* fake = dlopen(library.c_str(), RTLD_NOW | RTLD_NOLOAD);
  const auto calls =
      fake != nullptr ? reinterpret_cast<unsigned long long (*)()>(dlsym(fake, "gteFakeNvmlCalls"))
                      : nullptr;
  if (calls != nullptr) {
    const unsigned long long before = calls();
    pass();
    std::printf("NVML calls per pass (hgx-h100, 8 GPUs, 18 NVLinks each): %llu\n",
                calls() - before);
  }
  std::vector<double> perPassMs;
  for (int r = 0; r < rounds; ++r) {
    const double start = cpuSeconds();
    for (int p = 0; p < passes; ++p)
      pass();
    perPassMs.push_back((cpuSeconds() - start) * 1000.0 / passes);
  }
  std::sort(perPassMs.begin(), perPassMs.end());
  std::printf(
      "CPU per pass, discovery + health + labels: median %.3f ms (min %.3f, max %.3f; "
      "%d rounds of %d passes)\n",
      perPassMs[perPassMs.size() / 2], perPassMs.front(), perPassMs.back(), rounds, passes);
  std::filesystem::remove(control);
  return 0;
}
