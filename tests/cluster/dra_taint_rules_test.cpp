// DeviceTaintRules in the cluster cache (docs/dra.md, "Device taint rules"): a rule's blocking
// taint makes the devices it selects unavailable to first-fit, on the nodes their pools serve only;
// an edit of the rule's status or metadata re-derives nothing; a rule removed, or changed to an
// effect that does not block, gives the devices back. Fixture: the HGX H100 slice of node
// hgx-h100-a lists GPU i as device gpu-<(i+4) mod 8>, so gpu-3 is GPU 7.
#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <string>

#include "cluster/cluster_state.h"
#include "cluster/dra_cache.h"
#include "cluster_test_support.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"

using gte::cluster::ClusterState;
using gte::cluster::DraCache;
using gte::cluster::DraChange;
using namespace gte;
using namespace gte::testing;

namespace {

dra::DeviceTaintRuleConstSharedPtr rule(const std::string& name, const std::string& selector,
                                        const std::string& effect = "NoSchedule",
                                        const std::string& resourceVersion = "1") {
  auto read = dra::parseDeviceTaintRuleJson(
      R"({"metadata":{"name":")" + name + R"(","resourceVersion":")" + resourceVersion +
      R"("},"spec":{"deviceSelector":)" + selector +
      R"(,"taint":{"key":"example.com/maintenance","effect":")" + effect + R"("}}})");
  REQUIRE(read.ok());
  return *read;
}

// The H100 fixture's slice published for another node (its own pool, named after it).
dra::ResourceSliceConstSharedPtr sliceFor(const std::string& node) {
  auto slice = std::make_shared<dra::ResourceSlice>(*draSlice("hgx-h100-slice.json"));
  slice->name = node + "-gpu.nvidia.com";
  slice->pool = node;
  slice->selection.nodeName = node;
  return slice;
}

const std::string kGpu3OnA = R"({"pool":"hgx-h100-a","device":"gpu-3"})";

}  // namespace

TEST_CASE("DRA cache: a DeviceTaintRule takes the devices it selects, removed it gives them back",
          "[cluster][dra][taintrules]") {
  ManualClock clock;
  ClusterState state{testPolicy(), clockedOptions(clock)};
  state.enableDra();
  state.replaceNodes(
      {makeDgxH100(FixtureState().withName("hgx-h100-a").withIdentities().withoutDevicePlugin())});
  state.replaceDeviceClasses(draClasses("nvidia-device-classes.json"));
  state.replaceDeviceTaintRules({rule("maintenance", kGpu3OnA)});  // before the slices
  state.replaceResourceSlices({draSlice("hgx-h100-slice.json")});
  state.setSynced(true);
  CHECK(state.draCounts().taintRules == 1);
  CHECK(freeGpus(state, "hgx-h100-a") == 7);
  CHECK_FALSE(gpuFree(state, "hgx-h100-a", 7));

  // The slice republished: the rule applies to the new version too.
  state.upsertResourceSlice(draSlice("hgx-h100-slice.json"));
  CHECK_FALSE(gpuFree(state, "hgx-h100-a", 7));
  // A second rule on the same device, then that one gone: still taken.
  state.upsertDeviceTaintRule(rule("xid-79", R"({"device":"gpu-3"})", "NoExecute"));
  state.removeDeviceTaintRule("xid-79");
  CHECK(freeGpus(state, "hgx-h100-a") == 7);
  // Its effect turned to None (a dry run of an eviction): the GPU is back.
  state.upsertDeviceTaintRule(rule("maintenance", kGpu3OnA, "None", "2"));
  CHECK(freeGpus(state, "hgx-h100-a") == 8);
  state.upsertDeviceTaintRule(rule("maintenance", kGpu3OnA, "NoSchedule", "3"));
  CHECK_FALSE(gpuFree(state, "hgx-h100-a", 7));
  // Removed: every GPU free again; a full list without it does the same.
  state.removeDeviceTaintRule("maintenance");
  CHECK(freeGpus(state, "hgx-h100-a") == 8);
  state.replaceDeviceTaintRules(
      {rule("pool", R"({"driver":"gpu.nvidia.com","pool":"hgx-h100-a"})")});
  CHECK(freeGpus(state, "hgx-h100-a") == 0);
  state.replaceDeviceTaintRules({});
  CHECK(freeGpus(state, "hgx-h100-a") == 8);
  CHECK(state.draCounts().taintRules == 0);
}

TEST_CASE("DRA cache: a rule change marks only the nodes whose devices it selects",
          "[cluster][dra][taintrules]") {
  DraCache cache;
  DraChange listed;
  cache.replaceSlices({sliceFor("hgx-h100-a"), sliceFor("hgx-h100-b")}, listed);

  DraChange added;
  cache.upsertTaintRule(rule("maintenance", kGpu3OnA), added);
  CHECK_FALSE(added.everyNode);
  CHECK(added.nodes == std::vector<std::string>{"hgx-h100-a"});

  // The eviction controller updating the rule's status: a new resourceVersion, the same taint.
  DraChange status;
  cache.upsertTaintRule(rule("maintenance", kGpu3OnA, "NoSchedule", "2"), status);
  CHECK(status.nodes.empty());
  CHECK_FALSE(status.everyNode);

  // Moved to the other node's pool: both nodes (where it was, where it is).
  DraChange moved;
  cache.upsertTaintRule(rule("maintenance", R"({"pool":"hgx-h100-b","device":"gpu-3"})"), moved);
  CHECK(moved.nodes.size() == 2);

  // Selecting no device of any slice: nothing to re-derive.
  DraChange none;
  cache.upsertTaintRule(rule("elsewhere", R"({"driver":"example.com"})"), none);
  CHECK(none.nodes.empty());
  CHECK_FALSE(none.everyNode);
  // Not blocking, but marking devices degraded (docs/health.md): the nodes it selects.
  DraChange informational;
  cache.upsertTaintRule(rule("informational", "{}", "None"), informational);
  CHECK(informational.nodes.size() == 2);

  // A full list equal to what is held changes nothing; one dropping a rule marks its node.
  DraChange same;
  cache.replaceTaintRules(
      {rule("maintenance", R"({"pool":"hgx-h100-b","device":"gpu-3"})"),
       rule("elsewhere", R"({"driver":"example.com"})"), rule("informational", "{}", "None")},
      same);
  CHECK(same.nodes.empty());
  DraChange dropped;
  cache.replaceTaintRules({}, dropped);
  CHECK(dropped.nodes.size() == 2);  // the maintenance rule's node, and both of the informational
}
