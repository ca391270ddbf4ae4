// Request bodies through the full verb path: ExtenderService as the HTTP router calls it (parse,
// resolve nodes, decide, write), for filter, prioritize, preempt and bind, with no cluster (full
// Node objects in the request) and with the golden cluster caches (tests/golden/cluster.yaml, or
// the pod-group cluster tests/golden/groups-cluster.yaml; node names in the request). Whatever the
// body, the answer is one HTTP status and one well-formed JSON document, bind answers exactly once,
// and no GPU of the cluster is charged twice afterwards (a group's holds included).
//
// "Well-formed" is checked with nlohmann's parser (independent of the extender's own reader), after
// every \u escape of a UTF-16 surrogate is replaced by \u0000: JSON's grammar allows a lone
// surrogate escape (Go decodes it as U+FFFD, and the extender echoes node objects byte for byte),
// but nlohmann refuses one.
//
// Input: the first byte picks the verb (bits 0-1: filter, prioritize, preempt, bind) and the mode
// (bit 2 set: a cluster cache; bit 3 then picks the pod-group cluster); the rest is the request
// body. A body is sent twice, so that a group planned by the first is answered from its plan by
// the second.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cluster/cluster_file.h"
#include "cluster/static_cluster_backend.h"
#include "fuzz_check.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "snapshot/cluster_snapshot.h"

namespace {

using gte::fuzz::check;

gte::cluster::ClusterFileContents loadCluster(const char* path) {
  std::ifstream in(path, std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto parsed = gte::cluster::parseClusterDocument(text);
  check(parsed.ok() && !parsed->nodes.empty(), "a golden cluster file loads");
  return std::move(*parsed);
}

const gte::cluster::ClusterFileContents& goldenCluster(bool groups) {
  static const gte::cluster::ClusterFileContents plain =
      loadCluster(GTE_SOURCE_DIR "/tests/golden/cluster.yaml");
  static const gte::cluster::ClusterFileContents withGroups =
      loadCluster(GTE_SOURCE_DIR "/tests/golden/groups-cluster.yaml");
  return groups ? withGroups : plain;
}

// Every counted charge of every node (pods, reservations, holds) takes GPUs no other one takes.
void checkNoGpuChargedTwice(const gte::ClusterSnapshot& snapshot) {
  snapshot.nodes.forEach([](const std::string&, const gte::NodeStateConstSharedPtr& state) {
    if (!state->charges) return;
    std::uint64_t taken = 0;
    for (const gte::PodCharge& charge : state->charges->pods()) {
      if (!charge.counted) continue;
      for (const int gpu : charge.allocation.gpus) {
        const std::uint64_t bit = std::uint64_t{1} << (gpu & 63);
        check((taken & bit) == 0, "no GPU is charged twice");
        taken |= bit;
      }
    }
  });
}

bool isHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

// Keeps the length and the grammar: "\uD83D" becomes "\u0000", inside or outside a string.
std::string withoutSurrogateEscapes(std::string text) {
  for (std::size_t i = 0; i + 6 <= text.size(); ++i) {
    if (text[i] != '\\' || text[i + 1] != 'u') continue;
    const char high = text[i + 2];
    const char next = text[i + 3];
    const bool surrogate = (high == 'd' || high == 'D') &&
                           ((next >= '8' && next <= '9') || (next >= 'a' && next <= 'f') ||
                            (next >= 'A' && next <= 'F'));
    if (surrogate && isHex(text[i + 4]) && isHex(text[i + 5])) text.replace(i + 2, 4, "0000");
  }
  return text;
}

gte::Reply callVerb(const gte::ExtenderService& service, int verb, std::string_view body) {
  switch (verb) {
    case 0:
      return service.filter(body);
    case 1:
      return service.prioritize(body);
    case 2:
      return service.preempt(body);
    default: {
      gte::Reply reply;
      int answers = 0;
      service.bind(body, [&](gte::Reply r) {
        reply = std::move(r);
        ++answers;
      });
      // Neither backend here waits on an API server, so the answer comes inline.
      check(answers == 1, "bind answers exactly once");
      return reply;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  if (size == 0) return 0;
  const int verb = data[0] & 3;
  const bool namesMode = (data[0] & 4) != 0;
  const bool groups = (data[0] & 8) != 0;
  const std::string_view body(reinterpret_cast<const char*>(data) + 1, size - 1);

  // A fresh cluster and service per input: bind changes the cluster, and the full-Node memo would
  // carry one input's nodes into the next.
  std::unique_ptr<gte::cluster::StaticClusterBackend> cluster;
  if (namesMode) {
    gte::cluster::ClusterStateOptions options;
    options.now = [] {
      return std::chrono::system_clock::time_point(std::chrono::seconds(1764670000));
    };
    cluster = std::make_unique<gte::cluster::StaticClusterBackend>(goldenCluster(groups), policy,
                                                                   options);
  }
  const gte::ExtenderService service([] { return policy; }, cluster.get(), nullptr);
  for (int round = 0; round < 2; ++round) {
    const gte::Reply reply = callVerb(service, verb, body);
    check(reply.status >= 200 && reply.status < 600, "the answer has an HTTP status");
    check(nlohmann::json::accept(withoutSurrogateEscapes(reply.body)),
          "the answer is one well-formed JSON document");
    if (cluster) checkNoGpuChargedTwice(*cluster->snapshot());
  }
  return 0;
}
