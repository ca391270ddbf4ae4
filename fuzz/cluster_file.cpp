// Cluster file (--cluster-file: JSON or YAML, a List, an array, one object or a YAML stream). An
// accepted file must load into the cluster cache and publish a synced snapshot with its nodes.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "cluster/cluster_file.h"
#include "cluster/static_cluster_backend.h"
#include "fuzz_check.h"
#include "policy/default_policy.h"
#include "snapshot/cluster_snapshot.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using gte::fuzz::check;
  static const auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = gte::cluster::parseClusterDocument(text);
  if (!parsed) {
    check(!parsed.error().message.empty(), "a refused cluster file says why");
    return 0;
  }
  const std::size_t nodes = parsed->nodes.size();
  gte::cluster::ClusterStateOptions options;
  // A fixed clock: the same input must take the same path on every run.
  options.now = [] {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1764670000));
  };
  gte::cluster::StaticClusterBackend backend(std::move(*parsed), policy, options);
  const auto snapshot = backend.snapshot();
  check(snapshot != nullptr && snapshot->synced, "a loaded file publishes a synced snapshot");
  check(snapshot->nodes.size() <= nodes, "the snapshot has no node the file does not");
  return 0;
}
