#pragma once
// Two DGX H100s in a cluster cache watching DRA objects: hgx-h100-a hands its GPUs out through DRA
// (the HGX H100 slice, tests/data/dra: GPU i is device gpu-<(i+4) mod 8>), device-plugin has no
// slice, so no device there serves a claim; the NVIDIA chart's classes and ml/train-0-gpus, a
// pending claim of 2 GPUs.
#include <memory>

#include "cluster/cluster_state.h"
#include "policy/default_policy.h"
#include "support/dra_fixtures.h"
#include "support/node_fixtures.h"

namespace gte::testing {

struct DraPairCluster {
  PolicyConstSharedPtr policy = std::make_shared<const Policy>(defaultPolicy());
  cluster::ClusterState state{policy};

  DraPairCluster() {
    state.enableDra();
    state.replaceNodes(
        {makeDgxH100(FixtureState().withName("hgx-h100-a").withIdentities().withoutDevicePlugin()),
         makeDgxH100(FixtureState().withName("device-plugin"))});
    state.replaceDeviceClasses(draClasses("nvidia-device-classes.json"));
    state.replaceResourceSlices({draSlice("hgx-h100-slice.json")});
    state.upsertResourceClaim(draClaim("claim-2-gpus.json"));
    state.setSynced(true);
  }
};

}  // namespace gte::testing
