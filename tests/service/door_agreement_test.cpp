// Every door asks the same question: on random clusters (device-plugin machines of four kinds
// with random GPUs in use, a DRA node with a random device held by a claim, a node whose labels do
// not read) and random pods (1-8 GPUs, link, NUMA and strategy annotations, MIG instances, a claim,
// invalid annotations; a time-sliced node and the sharing annotations), explain, preempt, what-if
// and bind's re-check give the answer filter gives.
//   - explain: filter's verdict on every node;
//   - preempt with no victims: keeps exactly the nodes filter keeps;
//   - what-if of one pod: a 400 with filter's message when the pod rejects itself, else a node
//     filter keeps (and no node when filter keeps none);
//   - bind: reserves on a node exactly when filter keeps it.
#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "cluster/cluster_state.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"
#include "support/object_json.h"
#include "support/pod_fixtures.h"
#include "support/snapshot_backend.h"

namespace {

using gte::testing::FixtureState;
using nlohmann::json;

std::string used(std::mt19937& rng, int gpus) {
  std::string out(static_cast<std::size_t>(gpus), '0');
  for (char& c : out)
    c = rng() % 3 == 0 ? '1' : '0';
  return out;
}

std::vector<gte::NodeInfo> randomNodes(std::mt19937& rng) {
  std::vector<gte::NodeInfo> nodes;
  const auto state = [&](const std::string& name, int gpus) {
    return FixtureState().withName(name).withUsed(used(rng, gpus));
  };
  nodes.push_back(gte::testing::makeDgxH100(state("h100", 8)));
  nodes.push_back(gte::testing::makeDgx1Volta(state("dgx1v", 8)));
  nodes.push_back(gte::testing::makeA100PcieBridged(state("a100pcie", 4)));
  nodes.push_back(gte::testing::make4xPcieL40s(state("l40s", 4)));
  nodes.push_back(gte::testing::makeDgxH100(
      FixtureState().withName("hgx-h100-a").withIdentities().withoutDevicePlugin()));
  // A time-sliced node with random tenants (docs/sharing.md).
  gte::NodeInfo sliced = gte::testing::makeDgxH100(state("sliced", 8));
  sliced.labels.insert_or_assign("nvidia.com/gpu.sharing-strategy", std::string("time-slicing"));
  sliced.labels.insert_or_assign("nvidia.com/gpu.replicas", std::string("4"));
  std::string tenants(8, '0');
  for (char& c : tenants)
    c = static_cast<char>('0' + rng() % 4);
  sliced.labels.insert_or_assign("gputopo.dev/tenants", tenants);
  nodes.push_back(std::move(sliced));
  gte::NodeInfo broken = gte::testing::makeDgx1Volta(state("broken", 8));
  broken.labels["gputopo.dev/pci"] = "X";  // labels-v1 that do not read
  nodes.push_back(std::move(broken));
  return nodes;
}

gte::PodInfo randomPod(std::mt19937& rng, int i) {
  const std::string name = "p" + std::to_string(i);
  gte::PodInfo pod;
  switch (rng() % 10) {
    case 0:
      pod = gte::testing::makeMigPod(name, {{"1g.10gb", 1}});
      break;
    case 1:
      pod = gte::testing::makeClaimPod(name, "ml", {{"gpus", "train-0-gpus"}});
      break;
    default: {
      const int sizes[] = {1, 2, 3, 4, 8};
      pod = gte::testing::makeGpuPod(name, sizes[rng() % 5]);
    }
  }
  const std::pair<const char*, const char*> annotations[] = {
      {"gputopo.dev/min-link", "nvlink"},      {"gputopo.dev/numa", "single"},
      {"gputopo.dev/strategy", "spread"},      {"gputopo.dev/min-link", "fast"},
      {"gputopo.dev/group-size", "2"},         {"gputopo.dev/isolation", "exclusive"},
      {"gputopo.dev/replicas-on", "distinct"}, {"gputopo.dev/replicas-on", "same"}};
  for (const auto& [key, value] : annotations) {
    if (rng() % 6 == 0) pod.annotations[key] = value;
  }
  pod.uid = name + "-uid";
  return pod;
}

std::string argsBody(const gte::PodInfo& pod, const std::vector<std::string>& names) {
  json body;
  body["Pod"] = json::parse(gte::testing::podJson(pod));
  // podJson writes no resourceClaims: the claim pod's part is added here.
  if (!pod.resourceClaims.empty()) {
    body["Pod"]["spec"]["resourceClaims"] =
        json::array({{{"name", "gpus"}, {"resourceClaimName", "train-0-gpus"}}});
  }
  body["Nodes"] = nullptr;
  body["NodeNames"] = names;
  return body.dump();
}

}  // namespace

TEST_CASE("filter, explain, preempt, what-if and bind agree on random clusters and pods") {
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  for (const unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    gte::cluster::ClusterState state(policy);
    state.enableDra();
    std::vector<gte::NodeInfo> nodes = randomNodes(rng);
    std::vector<std::string> names;
    for (const gte::NodeInfo& node : nodes)
      names.push_back(node.name);
    state.replaceNodes(std::move(nodes));
    state.replaceDeviceClasses(gte::testing::draClasses("nvidia-device-classes.json"));
    state.replaceResourceSlices({gte::testing::draSlice("hgx-h100-slice.json")});
    state.upsertResourceClaim(gte::testing::draClaim("claim-2-gpus.json"));
    if (rng() % 2 == 0) state.upsertResourceClaim(gte::testing::draClaim("claim-allocated.json"));
    state.setSynced(true);
    auto backend = gte::testing::SnapshotBackend::of(state);
    gte::ExtenderService service([policy] { return policy; }, &backend, nullptr);

    for (int i = 0; i < 24; ++i) {
      const gte::PodInfo pod = randomPod(rng, i);
      const std::string body = argsBody(pod, names);
      CAPTURE(body);
      const json filtered = json::parse(service.filter(body).body);
      std::set<std::string> kept;
      for (const json& name : filtered["NodeNames"])
        kept.insert(name.get<std::string>());

      const json explained = json::parse(service.explain(body).body);
      for (const json& node : explained["nodes"]) {
        CAPTURE(node["name"]);
        CHECK((node["verdict"] == "fit") == kept.contains(node["name"].get<std::string>()));
      }

      json preempt;
      preempt["Pod"] = json::parse(body)["Pod"];
      preempt["NodeNameToVictims"] = nullptr;
      for (const std::string& name : names)
        preempt["NodeNameToMetaVictims"][name] = {{"Pods", json::array()}, {"NumPDBViolations", 0}};
      const gte::Reply preemptReply = service.preempt(preempt.dump());
      CAPTURE(preemptReply.body);
      const json preempted = json::parse(preemptReply.body);
      std::set<std::string> preemptKept;
      for (const auto& [name, victims] : preempted["NodeNameToMetaVictims"].items())
        preemptKept.insert(name);
      CHECK(preemptKept == kept);

      const std::string ownError = explained["pod"]["error"].get<std::string>();
      const gte::Reply whatif = service.whatif(R"({"pod":)" + preempt["Pod"].dump() + "}");
      CAPTURE(whatif.body);
      if (!ownError.empty()) {
        CHECK(kept.empty());
        CHECK(whatif.status == 400);
        CHECK(whatif.body.find(ownError) != std::string::npos);
      } else if (whatif.status == 200) {
        const json answer = json::parse(whatif.body);
        const json& placement = answer["policies"][0]["placements"][0];
        if (placement["node"].is_null()) {
          CHECK(kept.empty());
        } else {
          CHECK(kept.contains(placement["node"].get<std::string>()));
        }
      }

      const std::string& node = names[rng() % names.size()];
      CAPTURE(node);
      const auto reserved = state.reserve(pod, node);
      CHECK(reserved.ok() == kept.contains(node));
      if (reserved.ok()) state.release(pod.uid);
    }
  }
}
