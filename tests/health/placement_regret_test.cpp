// Placement regret (docs/topology-health.md, "Placement regret"): the ratio against the best set
// any node offered, and whose choice a worse set was. Table test; GB/s one way.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>

#include "health/placement_regret.h"

namespace gte {
namespace {

constexpr SetQuality nvlink(std::uint16_t gbps) {
  return {LinkClass::kNvlink, gbps};
}
constexpr SetQuality pcie(LinkClass cls, std::uint16_t gbps) {
  return {cls, gbps};
}

PlacementDecision decision(SetQuality cluster, SetQuality feasible, SetQuality topWorst) {
  PlacementDecision d;
  d.gpus = 2;
  d.clusterBest = cluster;
  d.feasibleBest = feasible;
  d.topWorst = topWorst;
  return d;
}

TEST_CASE("regret ratios and reasons", "[core][regret]") {
  struct Row {
    const char* what;
    PlacementDecision decision;
    SetQuality got;
    double ratio;
    RegretReason reason;
    bool belowBestClass;
    RegretReason classReason;
  };
  const SetQuality nv2 = nvlink(50);  // V100 NV2
  const SetQuality nv1 = nvlink(25);  // V100 NV1
  const SetQuality pix = pcie(LinkClass::kPix, 16);
  const SetQuality sys = pcie(LinkClass::kSys, 7);
  const Row rows[] = {
      // The best set anywhere, chosen: nothing to regret.
      {"best", decision(nv2, nv2, nv2), nv2, 0.0, RegretReason::kNone, false, RegretReason::kNone},
      // A node selector left only PIX pairs: 1 - 16/50 = 0.68, and the class is below NVLink, both
      // because nothing the pod could use was better.
      {"constrained", decision(nv2, pix, pix), pix, 0.68, RegretReason::kNoBetterFit, true,
       RegretReason::kNoBetterFit},
      // An NV2 pair fit and the extender ranked an NV1 node top (packing within the NVLink class):
      // 1 - 25/50 = 0.5, the policy's trade-off; the class is the best: not below it.
      {"tradeoff within class", decision(nv2, nv2, nv1), nv1, 0.5, RegretReason::kPolicyTradeoff,
       false, RegretReason::kNone},
      // Every top-ranked node offered NV2 and the pod got SYS: kube-scheduler overrode the score;
      // 1 - 7/50 = 0.86.
      {"override", decision(nv2, nv2, nv2), sys, 0.86, RegretReason::kSchedulerOverride, true,
       RegretReason::kSchedulerOverride},
      // linkFirst off: the extender ranked a PIX node top while NVLink fit; the pod got PIX.
      {"tradeoff across classes", decision(nv2, nv2, pix), pix, 0.68, RegretReason::kPolicyTradeoff,
       true, RegretReason::kPolicyTradeoff},
      // Got more bandwidth than the cluster's best class offers (another generation): no regret.
      {"faster PCIe than slow NVLink", decision(nv1, nv1, nv1), pcie(LinkClass::kPix, 63), 0.0,
       RegretReason::kNone, true, RegretReason::kSchedulerOverride},
  };
  for (const Row& row : rows) {
    INFO(row.what);
    REQUIRE_FALSE(row.decision.avoidedAny);
    const PlacementRegret regret = placementRegret(row.decision, row.got);
    CHECK(regret.measured);
    CHECK_THAT(regret.ratio, Catch::Matchers::WithinAbs(row.ratio, 1e-9));
    CHECK(regret.reason == row.reason);
    CHECK(regret.belowBestClass == row.belowBestClass);
    CHECK(regret.classReason == row.classReason);
  }
}

TEST_CASE("a better set only on degraded hardware was avoided, not lost", "[core][regret]") {
  // An NV2 pair fit only across a degraded link; the best healthy set was NV1, which the pod got.
  PlacementDecision d = decision(nvlink(50), nvlink(50), nvlink(25));
  d.avoidedAny = true;
  d.healthyBest = nvlink(25);
  const PlacementRegret avoided = placementRegret(d, nvlink(25));
  CHECK(avoided.reason == RegretReason::kAvoidedDegraded);
  CHECK_THAT(avoided.ratio, Catch::Matchers::WithinAbs(0.5, 1e-9));
  CHECK_FALSE(avoided.belowBestClass);
  // A healthy NV2 set also fit: getting NV1 was the ranking's choice, not the health policy's.
  d.healthyBest = nvlink(50);
  CHECK(placementRegret(d, nvlink(25)).reason == RegretReason::kPolicyTradeoff);
  // Below every healthy set too: no longer the health policy's doing.
  d.healthyBest = nvlink(25);
  CHECK(placementRegret(d, pcie(LinkClass::kSys, 7)).reason == RegretReason::kSchedulerOverride);
}

TEST_CASE("regret is unmeasured without both bandwidths", "[core][regret]") {
  CHECK_FALSE(placementRegret(decision(nvlink(50), nvlink(50), nvlink(50)), SetQuality{}).measured);
  CHECK_FALSE(
      placementRegret(decision(SetQuality{}, SetQuality{}, SetQuality{}), nvlink(25)).measured);
}

TEST_CASE("reason names are the metric's label values", "[core][regret]") {
  CHECK(regretReasonName(RegretReason::kNoBetterFit) == "no_better_fit");
  CHECK(regretReasonName(RegretReason::kPolicyTradeoff) == "policy_tradeoff");
  CHECK(regretReasonName(RegretReason::kSchedulerOverride) == "scheduler_override");
  CHECK(regretReasonName(RegretReason::kAvoidedDegraded) == "avoided_degraded");
  CHECK(regretReasonName(RegretReason::kNone) == "none");
}

}  // namespace
}  // namespace gte
