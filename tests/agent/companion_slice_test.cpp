// The companion ResourceSlice (--companion-slice, docs/dra.md "NVLink islands"): the devices a
// DGX-1V discovery (fake NVML) gives, the slice's JSON, and the publisher against a scripted API
// server: created once, replaced with generation + 1 only when the content changes, deleted when
// the node has no GPUs or on cleanup, and deleted again (counted) when the API server drops
// skipNodeOperations (DRAOptionalNodeOperations off).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <optional>
#include <sstream>

#include "agent/agent_loop.h"
#include "agent/companion_publisher.h"
#include "agent/companion_slice.h"
#include "agent/nvml_discovery.h"
#include "kube/fake_transport.h"
#include "policy/default_policy.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;
using namespace std::chrono_literals;

const std::string kFakeNvml = std::string(GTE_FAKE_NVML_DIR) + "/libnvidia-ml.so.1";
const std::string kSlicePath = "/apis/resource.k8s.io/v1/resourceslices/n1-topology.gputopo.dev";

Discovery dgx1v() {
  ::setenv("GTE_FAKE_NVML_MACHINE", "dgx1v", 1);
  auto discovery = discoverWithNvml(kFakeNvml, {});
  REQUIRE(discovery.ok());
  return *discovery;
}

TEST_CASE("companion devices of a DGX-1V: bus ids as the NVIDIA DRA driver writes them, islands",
          "[agent][companion]") {
  const auto devices = companionDevices(dgx1v());
  REQUIRE(devices.ok());
  REQUIRE(devices->size() == 8);
  // NVML says "00000000:0A:00.0"; the standard attribute is "0000:0a:00.0" (4-digit domain,
  // lowercase: the format k8s.io/dynamic-resource-allocation/deviceattribute checks).
  CHECK((*devices)[2] == CompanionDevice{2, "0000:0a:00.0", 0, 4, "GPU-dgx1v-2"});
  // Hybrid cube-mesh: islands {0-3} (id 0) and {4-7} (id 4).
  CHECK((*devices)[7] == CompanionDevice{7, "0000:8a:00.0", 4, 4, "GPU-dgx1v-7"});
  // Text captures carry no bus ids: no companion devices.
  Discovery text = dgx1v();
  text.busIds.clear();
  CHECK_THAT(companionDevices(text).error().message, ContainsSubstring("no PCI bus id for GPU 0"));
}

TEST_CASE("the slice JSON and what the agent reads back", "[agent][companion]") {
  CompanionSlice slice;
  slice.name = "n1-topology.gputopo.dev";
  slice.node = "n1";
  slice.nodeUid = "uid-1";
  slice.driver = "topology.gputopo.dev";
  slice.labelPrefix = "gputopo.dev/";
  slice.generation = 3;
  slice.devices = {{0, "0000:06:00.0", 0, 2, "GPU-a"}, {1, "0000:07:00.0", 0, 2, ""}};
  const std::string digest = companionDigest("n1", "topology.gputopo.dev", slice.devices);
  CHECK(
      companionSliceJson(slice) ==
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":)"
      R"("n1-topology.gputopo.dev","labels":{"app.kubernetes.io/managed-by":"gpu-topology-agent"},)"
      R"("annotations":{"gputopo.dev/companion-digest":")" +
          digest +
          R"("},"ownerReferences":[{"apiVersion":"v1","kind":"Node","name":"n1","uid":"uid-1"}]},)"
          R"("spec":{"driver":"topology.gputopo.dev","pool":{"name":"n1","generation":3,)"
          R"("resourceSliceCount":1},"nodeName":"n1","skipNodeOperations":["*"],"devices":[)"
          R"({"name":"gpu-0","attributes":{"resource.kubernetes.io/pciBusID":{"string":"0000:06:00.0"},)"
          R"("gpuIndex":{"int":0},"nvlinkIsland":{"int":0},"nvlinkIslandSize":{"int":2},)"
          R"("uuid":{"string":"GPU-a"}}},)"
          R"({"name":"gpu-1","attributes":{"resource.kubernetes.io/pciBusID":{"string":"0000:07:00.0"},)"
          R"("gpuIndex":{"int":1},"nvlinkIsland":{"int":0},"nvlinkIslandSize":{"int":2}}}]}})");
  // Another island id changes the digest; the same content keeps it.
  auto other = slice.devices;
  other[1].island = 1;
  CHECK(companionDigest("n1", "topology.gputopo.dev", other) != digest);
  CHECK(companionDigest("n1", "topology.gputopo.dev", slice.devices) == digest);

  slice.resourceVersion = "42";
  const auto read = readStoredSlice(companionSliceJson(slice), "gputopo.dev/companion-digest");
  REQUIRE(read.ok());
  CHECK(read->resourceVersion == "42");
  CHECK(read->generation == 3);
  CHECK(read->digest == digest);
  CHECK(read->skipsNodeOperations);
  // Without the field (what a gate-off API server stores): not skipping.
  const auto stripped = readStoredSlice(
      R"({"metadata":{"resourceVersion":"7"},"spec":{"pool":{"generation":2}}})", "x");
  REQUIRE(stripped.ok());
  CHECK_FALSE(stripped->skipsNodeOperations);
  CHECK(stripped->digest.empty());
  CHECK_THAT(readStoredSlice(R"({"metadata":{}})", "x").error().message,
             ContainsSubstring("resourceVersion"));
  CHECK_FALSE(readStoredSlice(R"({"spec":{"pool":{"generation":"x"}}})", "x").ok());
  CHECK_FALSE(readStoredSlice("[", "x").ok());
}

TEST_CASE("driver names: DNS subdomains of at most 63 characters", "[agent][companion]") {
  CHECK(validDriverName("topology.gputopo.dev"));
  CHECK_FALSE(validDriverName(""));
  CHECK_FALSE(validDriverName("Topology.dev"));
  CHECK_FALSE(validDriverName("a..b"));
  CHECK_FALSE(validDriverName(std::string(64, 'a')));
  CHECK(validDriverName(std::string(63, 'a')));
}

// A tiny API server: the Node n1 and at most one ResourceSlice, stored as the agent wrote it, with
// skipNodeOperations dropped when `gateOff` (as kube-apiserver drops a disabled gate's field);
// the Node declares DRAOptionalNodeOperations unless `kubeletGateOff`.
struct FakeSliceServer {
  std::optional<std::string> slice;
  int resourceVersion = 0;
  bool gateOff = false;
  bool kubeletGateOff = false;
  testing::FakeTransport transport;

  FakeSliceServer() {
    transport.onSend = [this](const testing::RecordedRequest& r) -> Result<kube::HttpResponse> {
      if (r.path == "/api/v1/nodes/n1") {
        return kube::HttpResponse{
            200, std::string(
                     R"({"metadata":{"name":"n1","uid":"uid-n1"},"status":{"declaredFeatures":[)") +
                     (kubeletGateOff ? "" : R"("DRAOptionalNodeOperations")") + "]}}"};
      }
      const bool item = r.path == kSlicePath;
      if (r.method == "GET" && item) {
        return slice ? kube::HttpResponse{200, *slice} : kube::HttpResponse{404, "{}"};
      }
      if (r.method == "DELETE" && item) {
        const bool had = slice.has_value();
        slice.reset();
        return kube::HttpResponse{had ? 200 : 404, "{}"};
      }
      if ((r.method == "POST" && r.path == "/apis/resource.k8s.io/v1/resourceslices") ||
          (r.method == "PUT" && item)) {
        if (r.method == "POST" && slice) return kube::HttpResponse{409, "{}"};
        std::string body = r.body;
        if (gateOff) {
          const std::string field = R"("skipNodeOperations":["*"],)";
          body.erase(body.find(field), field.size());
        }
        // The stored copy carries a resourceVersion of the server's.
        const std::string rv = R"("resourceVersion":")" + std::to_string(++resourceVersion) + "\",";
        const std::string meta = R"("metadata":{)";
        const auto at = body.find(meta) + meta.size();
        const auto old = body.find(R"("resourceVersion")");
        if (old != std::string::npos) body.erase(old, body.find(',', old) + 1 - old);
        body.insert(at, rv);
        slice = body;
        return kube::HttpResponse{r.method == "POST" ? 201 : 200, body};
      }
      return kube::HttpResponse{404, "{}"};
    };
  }

  int count(const std::string& method) const {
    int n = 0;
    for (const auto& r : transport.requests())
      n += r.method == method && r.path.find("resourceslices") != std::string::npos;
    return n;
  }
};

TEST_CASE("the publisher creates, keeps, replaces with a new generation, and deletes",
          "[agent][companion]") {
  FakeSliceServer server;
  CompanionPublisher publisher(server.transport, "n1", "topology.gputopo.dev", "gputopo.dev/");
  const auto devices = *companionDevices(dgx1v());
  REQUIRE(*publisher.publish(devices) == CompanionOutcome::kWritten);
  REQUIRE(server.slice);
  CHECK_THAT(*server.slice, ContainsSubstring(R"("generation":1,)"));
  CHECK_THAT(*server.slice, ContainsSubstring(R"("uid":"uid-n1")"));
  CHECK(server.count("POST") == 1);
  // Same devices: one GET, nothing written.
  CHECK(*publisher.publish(devices) == CompanionOutcome::kUnchanged);
  CHECK(server.count("POST") + server.count("PUT") == 1);
  // An island changes: PUT with the stored resourceVersion and generation 2.
  auto changed = devices;
  changed[3].island = 3;
  changed[3].islandSize = 1;
  CHECK(*publisher.publish(changed) == CompanionOutcome::kWritten);
  CHECK(server.count("PUT") == 1);
  CHECK_THAT(server.transport.requests().back().body,
             ContainsSubstring(R"("resourceVersion":"1")"));
  CHECK_THAT(*server.slice, ContainsSubstring(R"("generation":2,)"));
  // No GPUs: deleted; a second time there is nothing to delete.
  CHECK(*publisher.publish({}) == CompanionOutcome::kDeleted);
  CHECK_FALSE(server.slice);
  CHECK(*publisher.publish({}) == CompanionOutcome::kDeleted);
  // Created again: the generation keeps growing (3), so no watcher takes it for an old one.
  CHECK(*publisher.publish(devices) == CompanionOutcome::kWritten);
  CHECK_THAT(*server.slice, ContainsSubstring(R"("generation":3,)"));
  CHECK(*publisher.remove());
  CHECK_FALSE(*publisher.remove());
}

TEST_CASE(
    "the guards: a slice stored without skipNodeOperations, or on a Node that does not declare "
    "the feature, is deleted and counted, every pass",
    "[agent][companion]") {
  FakeSliceServer server;
  server.gateOff = true;
  CompanionPublisher publisher(server.transport, "n1", "topology.gputopo.dev", "gputopo.dev/");
  AgentMetrics metrics;
  metrics.enableCompanion();
  std::ostringstream dryRun;
  AgentLoop loop([]() -> Result<Discovery> { return dgx1v(); }, nullptr, nullptr, defaultPolicy(),
                 AgentLoop::Settings{10s, true}, metrics, dryRun);
  loop.setCompanionPublisher(&publisher);
  const auto t0 = Clock::time_point(std::chrono::seconds(1764670000));
  CHECK(loop.pass(t0).ok);
  CHECK_FALSE(server.slice);  // written, read back without the field, deleted
  CHECK(metrics.companionRefusals(CompanionRefusal::kApiServer) == 1);
  CHECK(metrics.companionWrites() == 0);
  CHECK(loop.pass(t0 + 30s).ok);  // retried on the next pass, refused again
  CHECK(metrics.companionRefusals(CompanionRefusal::kApiServer) == 2);
  CHECK_THAT(metrics.render(),
             ContainsSubstring(R"(gte_agent_companion_slice_refused_total{reason="apiserver"} 2)"));
  CHECK_THAT(metrics.render(), ContainsSubstring("gte_agent_companion_slice_published 0"));
  // The gate turned on: the next pass publishes and keeps it.
  server.gateOff = false;
  CHECK(loop.pass(t0 + 60s).ok);
  CHECK(server.slice);
  CHECK(metrics.companionWrites() == 1);
  CHECK_THAT(metrics.render(), ContainsSubstring("gte_agent_companion_slice_published 1"));
  // The kubelet's gate off (the Node stops declaring the feature): the slice goes, counted.
  server.kubeletGateOff = true;
  CHECK(loop.pass(t0 + 75s).ok);
  CHECK_FALSE(server.slice);
  CHECK(metrics.companionRefusals(CompanionRefusal::kKubelet) == 1);
  CHECK_THAT(metrics.render(),
             ContainsSubstring(R"(gte_agent_companion_slice_refused_total{reason="kubelet"} 1)"));
  CHECK_THAT(metrics.render(), ContainsSubstring("gte_agent_companion_slice_published 0"));
  // The API server down: the pass still succeeds (labels are the agent's job), the error counted.
  server.transport.onSend = [](const testing::RecordedRequest&) -> Result<kube::HttpResponse> {
    return Error{ErrorCode::kUnavailable, "connection refused"};
  };
  const auto before = metrics.apiErrors();
  CHECK(loop.pass(t0 + 90s).ok);
  CHECK(metrics.apiErrors() == before + 1);
  // Without --companion-slice the metrics families are not rendered.
  CHECK_THAT(AgentMetrics().render(), !ContainsSubstring("companion"));
}

}  // namespace
}  // namespace gte::agent
