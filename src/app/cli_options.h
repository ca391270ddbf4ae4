#pragma once
// Command-line parsing for `gpu-topology-extender serve|version`. Pure, so every flag and every
// error message is unit-tested.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"

namespace gte::app {

enum class Command { kServe, kVersion, kHelp };

enum class ClusterSource { kNone, kKubeconfig, kInCluster, kClusterFile };

struct ServeOptions {
  std::string host = "0.0.0.0";
  std::uint16_t port = 8888;
  std::string pathPrefix = "/scheduler";
  std::string policyFile;  // empty: the built-in default policy
  ClusterSource cluster = ClusterSource::kNone;
  std::string kubeconfig;
  std::string clusterFile;
  std::string tlsCertFile;
  std::string tlsKeyFile;
  // Sized for 5,000 full Node objects with images (~3.3 KB each without, up to ~10 KB with).
  std::size_t maxBodyBytes = 64 * 1024 * 1024;
  std::string logLevel = "info";
  std::size_t threads = 0;  // 0: one per core, at least 2
};

struct Invocation {
  Command command = Command::kHelp;
  ServeOptions serve;
  std::string helpText;  // for kHelp: what to print
};

// argv without the program name. Errors name the flag and the problem.
Result<Invocation> parseCommandLine(const std::vector<std::string>& args);

std::string topLevelHelp();
std::string serveHelp();

}  // namespace gte::app
