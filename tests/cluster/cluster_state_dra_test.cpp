// ClusterState fed by the DRA watches (docs/dra.md): ResourceSlices make a node a DRA node, its
// GPUs in use are the devices claims' allocations hold (allocated claims count as used, a released
// or deleted claim frees them, a device is never counted twice, bound nvidia.com/gpu pods' charges
// are not added again on a DRA node), claim pods resolve against the snapshot's claims, and before
// enableDra() none of it happens. Fixtures: tests/data/dra (the HGX H100 slice lists GPU i as
// device gpu-<(i+4) mod 8>, so gpu-1 is GPU 5).
#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <string>

#include "cluster/cluster_state.h"
#include "cluster_test_support.h"
#include "core/hold_charge.h"
#include "core/node_charges.h"
#include "core/pod_demand.h"
#include "dra/claim_shaping.h"
#include "dra_placement/dra_node_state.h"
#include "support/cluster_events_fixture.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"

using gte::cluster::checkDraBind;
using gte::cluster::ClusterState;
using gte::cluster::DraBindCheck;
using gte::cluster::ObservedPod;
using namespace gte;
using namespace gte::testing;

namespace {

NodeInfo draNode(const std::string& name) {
  return makeDgxH100(FixtureState().withName(name).withIdentities().withoutDevicePlugin());
}

// The claim of claim-allocated.json with its allocation and reservation cleared (released, as
// kube-controller-manager leaves it once the pod is gone).
dra::ResourceClaimConstSharedPtr released(const dra::ResourceClaim& claim) {
  auto out = std::make_shared<dra::ResourceClaim>(claim);
  out->allocated = false;
  out->devices.clear();
  out->reservedFor.clear();
  return out;
}

// The same device as a second claim holds it (an inconsistent cluster, or two watches' views).
dra::ResourceClaimConstSharedPtr copyNamed(const dra::ResourceClaim& claim,
                                           const std::string& name) {
  auto out = std::make_shared<dra::ResourceClaim>(claim);
  out->name = name;
  return out;
}

struct DraState {
  ManualClock clock;
  ClusterState state{testPolicy(), clockedOptions(clock)};
  DraState() {
    state.enableDra();
    state.replaceNodes({draNode("hgx-h100-a")});
    state.replaceDeviceClasses(draClasses("nvidia-device-classes.json"));
    state.replaceResourceSlices({draSlice("hgx-h100-slice.json")});
    state.setSynced(true);
  }
};

}  // namespace

TEST_CASE("DRA cache: slices make a DRA node; allocated claims count as used, released free",
          "[cluster][dra]") {
  DraState s;
  {
    const auto snapshot = s.state.snapshot();
    const NodeState* node = snapshot->find("hgx-h100-a");
    REQUIRE(node != nullptr);
    REQUIRE(node->dra);
    CHECK(node->allocator == GpuAllocator::kDra);
    CHECK(node->freeCount == 8);
  }
  const auto allocated = draClaim("claim-allocated.json");  // gpu-1 = GPU 5
  s.state.upsertResourceClaim(allocated);
  CHECK(freeGpus(s.state, "hgx-h100-a") == 7);
  CHECK_FALSE(gpuFree(s.state, "hgx-h100-a", 5));
  CHECK(s.state.draCounts().claims == 1);
  CHECK(s.state.draCounts().allocatedDevices == 1);

  // The same event again, then a second claim naming the same device: still one GPU in use.
  s.state.upsertResourceClaim(allocated);
  s.state.upsertResourceClaim(copyNamed(*allocated, "infer-0-gpu-copy"));
  CHECK(freeGpus(s.state, "hgx-h100-a") == 7);

  // A bound nvidia.com/gpu pod on the DRA node: its claim holds its GPU; no charge on top.
  s.state.upsertPod(bound("infer-0", 1, "hgx-h100-a", 20'000));
  CHECK(freeGpus(s.state, "hgx-h100-a") == 7);

  s.state.removeResourceClaim("ml", "infer-0-gpu-copy");
  s.state.upsertResourceClaim(released(*allocated));
  CHECK(freeGpus(s.state, "hgx-h100-a") == 8);
  s.state.upsertResourceClaim(allocated);
  CHECK(freeGpus(s.state, "hgx-h100-a") == 7);
  s.state.removeResourceClaim("ml", "infer-0-gpu");
  CHECK(freeGpus(s.state, "hgx-h100-a") == 8);
  CHECK(s.state.draCounts().claims == 0);
}

TEST_CASE("DRA cache: a full claim list replaces the allocations", "[cluster][dra]") {
  DraState s;
  s.state.upsertResourceClaim(copyNamed(*draClaim("claim-allocated.json"), "old"));
  CHECK(freeGpus(s.state, "hgx-h100-a") == 7);
  s.state.replaceResourceClaims({draClaim("claim-2-gpus.json")});  // unallocated
  CHECK(freeGpus(s.state, "hgx-h100-a") == 8);
  CHECK(s.state.draCounts().claims == 1);
  CHECK(s.state.draCounts().allocatedDevices == 0);
}

TEST_CASE("DRA cache: claim pods resolve against the snapshot's claims and classes",
          "[cluster][dra]") {
  DraState s;
  const PodInfo pod = makeClaimPod("train-0", "ml", {{"gpus", "train-0-gpus"}});
  {
    const auto snapshot = s.state.snapshot();
    const auto demand = parsePodDemand(pod, *snapshot->policy, snapshot->dra.get());
    REQUIRE(demand.ok());
    REQUIRE(demand->dra);
    CHECK(demand->dra->passThroughKind == DraPassThrough::kClaimNotCached);
  }
  s.state.upsertResourceClaim(draClaim("claim-2-gpus.json"));  // ml/train-0-gpus
  const auto snapshot = s.state.snapshot();
  const auto demand = parsePodDemand(pod, *snapshot->policy, snapshot->dra.get());
  REQUIRE(demand.ok());
  REQUIRE(demand->dra);
  CHECK_FALSE(demand->dra->passedThrough());
  REQUIRE(demand->dra->claims.size() == 1);
  CHECK(demand->dra->claims[0].id == "ml/train-0-gpus");
}

namespace {

// The snapshot's objects, with the cached program of one claim replaced by a marked one: what a
// resolution reads shows whether it compiled the claim again or took the cache's program.
class MarkedPrograms final : public dra::DraObjects {
 public:
  explicit MarkedPrograms(const dra::DraObjects& inner) : inner_(inner) {}
  const dra::ClassCatalogConstSharedPtr& classes() const override { return inner_.classes(); }
  dra::ResourceClaimConstSharedPtr claim(std::string_view ns,
                                         std::string_view name) const override {
    return inner_.claim(ns, name);
  }
  dra::ResourceClaimTemplateConstSharedPtr claimTemplate(std::string_view ns,
                                                         std::string_view name) const override {
    return inner_.claimTemplate(ns, name);
  }
  dra::CachedClaim cachedClaim(std::string_view ns, std::string_view name) const override {
    dra::CachedClaim cached = inner_.cachedClaim(ns, name);
    if (cached.program && cached.program->ok()) {
      dra::ClaimProgram marked = cached.program->value();
      marked.id = "compiled by the cache";
      cached.program = std::make_shared<const Result<dra::ClaimProgram>>(std::move(marked));
    }
    return cached;
  }

 private:
  const dra::DraObjects& inner_;
};

}  // namespace

// The request path compiles no CEL for a claim the watch has seen: the cache compiles a pending
// claim's spec as it arrives (and every pending claim again when the classes change), and a pod's
// resolution takes that program.
TEST_CASE("DRA cache: claims are compiled as they arrive, not per request", "[cluster][dra]") {
  DraState s;
  s.state.upsertResourceClaim(draClaim("claim-2-gpus.json"));  // ml/train-0-gpus, pending
  auto snapshot = s.state.snapshot();
  const dra::CachedClaim cached = snapshot->dra->cachedClaim("ml", "train-0-gpus");
  REQUIRE(cached.claim);
  REQUIRE(cached.program);
  REQUIRE(cached.program->ok());
  CHECK(cached.program->value().id == "ml/train-0-gpus");

  const PodInfo pod = makeClaimPod("train-0", "ml", {{"gpus", "train-0-gpus"}});
  const MarkedPrograms marked(*snapshot->dra);
  const auto demand = parsePodDemand(pod, *snapshot->policy, &marked);
  REQUIRE(demand.ok());
  REQUIRE(demand->dra);
  REQUIRE(demand->dra->claims.size() == 1);
  CHECK(demand->dra->claims[0].id == "compiled by the cache");

  // New classes: the pending claim is compiled again against them (class indices may move).
  s.state.replaceDeviceClasses(draClasses("nvidia-device-classes.json"));
  snapshot = s.state.snapshot();
  const dra::CachedClaim again = snapshot->dra->cachedClaim("ml", "train-0-gpus");
  REQUIRE(again.program);
  CHECK(again.program != cached.program);
  CHECK(again.program->ok());
  // An allocated claim has nothing left to allocate: nothing is compiled for it.
  s.state.upsertResourceClaim(draClaim("claim-allocated.json"));
  const dra::ResourceClaimConstSharedPtr allocated = draClaim("claim-allocated.json");
  CHECK_FALSE(s.state.snapshot()->dra->cachedClaim(allocated->ns, allocated->name).program);
}

TEST_CASE("DRA cache: a deleted slice or class takes the node's DRA state with it",
          "[cluster][dra]") {
  DraState s;
  s.state.removeDeviceClass("gpu.nvidia.com");
  {
    const auto snapshot = s.state.snapshot();
    CHECK(snapshot->dra->classes()->find("gpu.nvidia.com") < 0);
    const NodeState* node = snapshot->find("hgx-h100-a");
    REQUIRE(node->dra);
    CHECK(node->dra->plainClass < 0);  // nvidia.com/gpu is backed by no class now
  }
  s.state.removeResourceSlice("hgx-h100-a-gpu.nvidia.com-7xk2p");
  const auto snapshot = s.state.snapshot();
  CHECK(snapshot->find("hgx-h100-a")->dra == nullptr);
  CHECK(s.state.draCounts().slices == 0);
}

TEST_CASE("DRA cache: a class edited outside its selection re-derives no node; a new selector does",
          "[cluster][dra]") {
  DraState s;
  const auto before = s.state.snapshot();
  const dra::DeviceClassConstSharedPtr gpu = draClasses("nvidia-device-classes.json").front();
  REQUIRE(gpu->name == "gpu.nvidia.com");
  auto relabelled = std::make_shared<dra::DeviceClass>(*gpu);
  relabelled->resourceVersion = "999";  // a label or annotation edit
  s.state.upsertDeviceClass(relabelled);
  {
    const auto snapshot = s.state.snapshot();
    CHECK(snapshot->dra->classes() == before->dra->classes());
    CHECK(snapshot->find("hgx-h100-a") == before->find("hgx-h100-a"));
  }
  auto narrowed = std::make_shared<dra::DeviceClass>(*relabelled);
  narrowed->extendedResourceName.clear();
  narrowed->selectors.push_back("device.attributes['gpu.nvidia.com'].type == 'mig'");
  s.state.upsertDeviceClass(narrowed);
  const auto snapshot = s.state.snapshot();
  CHECK(snapshot->dra->classes() != before->dra->classes());
  const NodeState* node = snapshot->find("hgx-h100-a");
  CHECK(node != before->find("hgx-h100-a"));
  REQUIRE(node->dra);
  CHECK(node->dra->plainClass < 0);  // the class selects no GPU and backs nvidia.com/gpu no more
}

TEST_CASE("DRA cache: before enableDra the DRA feeds change nothing", "[cluster][dra]") {
  ManualClock clock;
  ClusterState state(testPolicy(), clockedOptions(clock));
  state.replaceNodes({draNode("hgx-h100-a")});
  state.replaceResourceSlices({draSlice("hgx-h100-slice.json")});
  state.upsertResourceClaim(draClaim("claim-allocated.json"));
  const auto snapshot = state.snapshot();
  CHECK(snapshot->dra == nullptr);
  CHECK(snapshot->find("hgx-h100-a")->dra == nullptr);
  CHECK(state.draCounts().claims == 0);
}

namespace {

// claim-2-gpus.json (ml/train-0-gpus) as kube-scheduler's PreBind leaves it: allocated `devices`
// of hgx-h100-a and reserved for pod train-0.
dra::ResourceClaimConstSharedPtr allocatedTo(const std::vector<std::string>& devices) {
  auto claim = std::make_shared<dra::ResourceClaim>(*draClaim("claim-2-gpus.json"));
  claim->allocated = true;
  for (const std::string& device : devices)
    claim->devices.push_back({"gpus", "gpu.nvidia.com", "hgx-h100-a", device, false, false, {}});
  claim->reservedFor.push_back({"pods", "train-0", "uid-train-0"});
  return claim;
}

}  // namespace

// The first-fit of two devices on hgx-h100-a takes the first two of its slice: gpu-1 and gpu-6
// (GPUs 5 and 2). At bind the claim's allocation is compared with that prediction, on the node as
// if the pod's own claim held nothing.
TEST_CASE("DRA bind check: the claims' allocation against the first-fit prediction",
          "[cluster][dra]") {
  struct Case {
    const char* what;
    std::vector<std::string> devices;  // empty: the cache has not seen the allocation
    DraBindCheck want;
  };
  const Case cases[] = {
      {"allocated as predicted", {"gpu-1", "gpu-6"}, DraBindCheck::kMatch},
      {"the same devices, other order in the results", {"gpu-6", "gpu-1"}, DraBindCheck::kMatch},
      {"other devices", {"gpu-3", "gpu-4"}, DraBindCheck::kMismatch},
      {"not allocated in the cache yet", {}, DraBindCheck::kUnknown},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    ManualClock clock;
    auto options = clockedOptions(clock);
    std::vector<DraBindCheck> seen;
    auto events = gte::testing::functionEvents();
    events->onDraBindChecked = [&seen](DraBindCheck check) { seen.push_back(check); };
    options.events = events;
    ClusterState state(testPolicy(), options);
    state.enableDra();
    state.replaceNodes({draNode("hgx-h100-a")});
    state.replaceDeviceClasses(draClasses("nvidia-device-classes.json"));
    state.replaceResourceSlices({draSlice("hgx-h100-slice.json")});
    state.upsertResourceClaim(c.devices.empty() ? draClaim("claim-2-gpus.json")
                                                : allocatedTo(c.devices));
    state.setSynced(true);
    PodInfo pod = makeClaimPod("train-0", "ml", {{"gpus", "train-0-gpus"}});
    pod.uid = "uid-train-0";
    REQUIRE(state.reserve(pod, "hgx-h100-a").ok());
    CHECK(seen == std::vector<DraBindCheck>{c.want});
    // A retried bind (already reserved) is not checked again.
    REQUIRE(state.reserve(pod, "hgx-h100-a").ok());
    CHECK(seen.size() == 1);
  }
}

TEST_CASE("DRA bind check: pods without claims are not checked", "[cluster][dra]") {
  DraState s;
  PodInfo pod = gpuPod("plain", 1, "");
  CHECK(checkDraBind(pod, *s.state.snapshot()->find("hgx-h100-a"), *s.state.snapshot()->dra,
                     *testPolicy()) == DraBindCheck::kNotApplicable);
}

// A member binding where its group holds slots: the DGX-1V lists 0 5 1 4 2 7 3 6, the tiered
// `claim-template --gpus 2` claim takes root pairs 0-1, 4-5, 2-3. Member 0 is bound (its claim
// holds 0-1); member 1's claim was allocated 4-5 as planned, and the group holds 4-5 and 2-3 (its
// slots 1 and 2) until its members' binds claim them. The check frees the group's holds: with them
// counted as taken, the first-fit would skip 4-5 and 2-3 and predict 7-6.
TEST_CASE("DRA bind check: a member's own group holds are free to it", "[cluster][dra][groups]") {
  const Policy policy = *testPolicy();
  DraCluster cluster;
  cluster.addSliceJson(draDgx1Slice("dgx", {0, 5, 1, 4, 2, 7, 3, 6}));
  dra::ShapedClaimOptions options;
  options.gpus = 2;
  const dra::ClaimSpec spec = dra::shapedClaimSpec(options).value();
  const auto claimOf = [&](const std::string& name, const std::string& pod,
                           std::vector<std::string> devices) {
    auto claim = std::make_shared<dra::ResourceClaim>();
    claim->name = name;
    claim->ns = "ml";
    claim->spec = spec;
    claim->allocated = true;
    for (const std::string& device : devices)
      claim->devices.push_back(
          {"gpus/same-pcie-root", "gpu.nvidia.com", "dgx", device, false, false, {}});
    claim->reservedFor.push_back({"pods", pod, "uid-" + pod});
    return claim;
  };
  cluster.addClaim(claimOf("m0-gpus", "m0", {"gpu-0", "gpu-1"}));
  cluster.addClaim(claimOf("m1-gpus", "m1", {"gpu-4", "gpu-5"}));
  auto charges = std::make_shared<NodeCharges>();
  charges->put(PodCharge{holdChargeUid("ml/job", 1), true, Allocation{true, {4, 5}, {}}, 0});
  charges->put(PodCharge{holdChargeUid("ml/job", 2), true, Allocation{true, {2, 3}, {}}, 0});
  const auto state = cluster.nodeState(
      makeDgx1Volta(FixtureState().withName("dgx").withoutDevicePlugin()), policy, charges);
  PodInfo pod = makeClaimPod("m1", "ml", {{"gpus", "m1-gpus"}});
  pod.uid = "uid-m1";
  CHECK(checkDraBind(pod, *state, *cluster.objects, policy,
                     {holdChargeUid("ml/job", 1), holdChargeUid("ml/job", 2)}) ==
        DraBindCheck::kMatch);
  CHECK(checkDraBind(pod, *state, *cluster.objects, policy) == DraBindCheck::kMismatch);
}
