// Explain of a claim pod (docs/dra.md, "Explain and metrics"): the pod's DRA demand, and per node
// the device set DRA's first-fit is predicted to take there, device by device with the GPU each
// maps to. The HGX H100 fixture's slice lists gpu-1 gpu-6 gpu-3 ... (GPU i is device
// gpu-<(i+4) mod 8>), so two devices are gpu-1 (GPU 5) and gpu-6 (GPU 2); a device-plugin DGX H100
// beside it has no slice (no DRA device: no allocation).
#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "dra/resource_slice_json.h"
#include "dra_pair_cluster.h"
#include "metrics/metrics.h"
#include "policy/default_policy.h"
#include "service/cluster_backend.h"
#include "service/extender_service.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"
#include "support/snapshot_backend.h"

namespace {

using gte::testing::FixtureState;
using nlohmann::json;

// podJson writes no resourceClaims: the pod's part explain reads is added here.
std::string claimPodBody() {
  json pod = json::parse(gte::testing::podJson(gte::testing::makeGpuPod("train-0", 0)));
  pod["metadata"]["namespace"] = "ml";
  pod["spec"]["resourceClaims"] =
      json::array({{{"name", "gpus"}, {"resourceClaimName", "train-0-gpus"}}});
  json body;
  body["Pod"] = pod;
  body["Nodes"] = nullptr;
  body["NodeNames"] = {"hgx-h100-a", "device-plugin"};
  return body.dump();
}

}  // namespace

TEST_CASE("Explain shows the DRA device set predicted for a claim pod") {
  gte::testing::DraPairCluster cluster;
  auto backend = gte::testing::SnapshotBackend::of(cluster.state);
  gte::ExtenderService service([p = cluster.policy] { return p; }, &backend, nullptr);

  const gte::Reply reply = service.explain(claimPodBody());
  REQUIRE(reply.status == 200);
  const json explained = json::parse(reply.body);
  const json& dra = explained["pod"]["demand"]["dra"];
  CHECK(dra["claims"] == json({"ml/train-0-gpus"}));
  CHECK(dra["allocatedClaims"] == 0);
  CHECK(dra["passThrough"] == "");

  const json& hgx = explained["nodes"][0];
  REQUIRE(hgx["name"] == "hgx-h100-a");
  CHECK(hgx["verdict"] == "fit");
  CHECK(hgx["dra"]["outcome"] == "allocated");
  const json& devices = hgx["dra"]["devices"];
  REQUIRE(devices.size() == 2);
  CHECK(devices[0] == json({{"claim", "ml/train-0-gpus"},
                            {"request", "gpus"},
                            {"driver", "gpu.nvidia.com"},
                            {"pool", "hgx-h100-a"},
                            {"device", "gpu-1"},
                            {"gpu", 5},
                            {"consumedCapacity", nullptr}}));
  CHECK(devices[1]["device"] == "gpu-6");
  CHECK(devices[1]["gpu"] == 2);
  CHECK(hgx["gpus"] == json({2, 5}));  // the set DRA takes, not the device plugin's pick

  const json& plugin = explained["nodes"][1];
  CHECK(plugin["verdict"] != "fit");  // no slice serves it: no device for the claim
  CHECK(plugin["dra"]["outcome"] == "noFit");
  CHECK(plugin["dra"]["devices"].empty());
}

// Filter counts a pod it passes through by reason: a claim the cache does not have yet.
TEST_CASE("Filter counts DRA pass-throughs by reason") {
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::cluster::ClusterState state(policy);
  state.enableDra();
  state.replaceNodes({gte::testing::makeDgxH100(
      FixtureState().withName("hgx-h100-a").withIdentities().withoutDevicePlugin())});
  state.replaceDeviceClasses(gte::testing::draClasses("nvidia-device-classes.json"));
  state.replaceResourceSlices({gte::testing::draSlice("hgx-h100-slice.json")});
  state.setSynced(true);  // no claim: ml/train-0-gpus is not cached
  auto backend = gte::testing::SnapshotBackend::of(state);
  gte::metrics::Metrics metrics;
  gte::ExtenderService service([policy] { return policy; }, &backend, &metrics);

  const json kept = json::parse(service.filter(claimPodBody()).body);
  CHECK(kept["NodeNames"] == json({"hgx-h100-a"}));                     // every node fits
  CHECK(kept["FailedAndUnresolvableNodes"].contains("device-plugin"));  // not cached at all
  const std::string text = metrics.serialize();
  CHECK(text.find("gpu_topology_extender_dra_passthrough_total{reason=\"claim_not_cached\"} 1") !=
        std::string::npos);
  CHECK(text.find("gpu_topology_extender_dra_passthrough_total{reason=\"uninterpretable\"} 0") !=
        std::string::npos);
}

TEST_CASE("Explain shows a claim pod's share of a device and what it consumes") {
  gte::testing::DraPairCluster cluster;
  // gpu-1 (GPU 5) is shareable; a share of 50000Mi is allocated, ml/infer asks 30000Mi.
  cluster.state.replaceResourceSlices(
      {*gte::dra::parseResourceSliceJson(gte::testing::draSharedH100SliceJson())});
  cluster.state.upsertResourceClaim(gte::testing::draMemoryClaim("held", "50000Mi", "other"));
  cluster.state.upsertResourceClaim(gte::testing::draMemoryClaim("infer", "30000Mi"));
  auto backend = gte::testing::SnapshotBackend::of(cluster.state);
  gte::ExtenderService service([p = cluster.policy] { return p; }, &backend, nullptr);

  json body = json::parse(claimPodBody());
  body["Pod"]["spec"]["resourceClaims"] =
      json::array({{{"name", "gpu"}, {"resourceClaimName", "infer"}}});
  const gte::Reply reply = service.explain(body.dump());
  REQUIRE(reply.status == 200);
  const json explained = json::parse(reply.body);
  const json& hgx = explained["nodes"][0];
  REQUIRE(hgx["name"] == "hgx-h100-a");
  CHECK(hgx["verdict"] == "fit");
  REQUIRE(hgx["dra"]["devices"].size() == 1);
  const json& share = hgx["dra"]["devices"][0];
  CHECK(share["device"] == "gpu-1");
  CHECK(share["consumedCapacity"] == json({{"memory", "31457280000"}}));  // 30000Mi
  CHECK(hgx["gpus"] == json({5}));
}
