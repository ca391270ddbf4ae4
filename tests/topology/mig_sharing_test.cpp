// The shared MIG profiles by labels-v1 profile code (topology/mig_sharing.h): what the agent writes
// a shared device's tenants against and the extender counts free replicas from.
#include <catch2/catch_test_macros.hpp>

#include "policy/default_policy.h"
#include "topology/mig_sharing.h"

namespace gte {
namespace {

TEST_CASE("shared MIG profiles by code: known profiles with more than one replica",
          "[topology][mig][sharing]") {
  const Policy policy = defaultPolicy();
  const MigProduct* a100 = findMigProduct(policy.migProducts, "NVIDIA-A100-SXM4-80GB");
  REQUIRE(a100 != nullptr);
  const auto shared = [](const char* profile, std::uint16_t replicas) {
    SharedMigProfile out;
    out.profile = profile;
    out.sharing.strategy = SharingStrategy::kTimeSlicing;
    out.sharing.replicas = replicas;
    return out;
  };
  const std::vector<SharedMigProfile> profiles = {
      shared("1g.10gb", 4),  // code 0
      shared("3g.40gb", 2),  // code 2
      shared("2g.20gb", 1),  // one replica: not shared in effect
      shared("2g.20gb", 0),  // count not known: left out (a device with a tenant reads used)
      shared("9g.99gb", 4),  // not an A100 profile
  };
  CHECK(migReplicasByCode(profiles, *a100) == MigReplicas{{'0', 4}, {'2', 2}});
  CHECK(migReplicasByCode({}, *a100).empty());
}

}  // namespace
}  // namespace gte
