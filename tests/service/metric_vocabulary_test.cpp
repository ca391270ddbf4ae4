// Label values of the metrics whose vocabulary belongs to a feature are that feature's own names
// (cluster::holdReleaseName, draPassThroughName, cluster::draBindCheckName), declared at start,
// and every value the docs promise is emitted. Before, the metrics library kept copies of the
// names by position:
// "unschedulable" (a gang cycle that gave up) was never emitted, and a reason added to core's enum
// would have been counted under its neighbour's name.
#include <catch2/catch_test_macros.hpp>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "cluster/dra_bind_check.h"
#include "cluster/group_book.h"
#include "dra_placement/dra_demand.h"
#include "metrics/metrics.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"
#include "service/group_outcome.h"

namespace {

// The values a docs table row lists for the family's label: "| `NAME` | counter | `LABEL` = a,
// b, c | ...".
std::set<std::string> documentedValues(const std::string& doc, const std::string& family,
                                       const std::string& label) {
  std::ifstream in(std::string(GTE_SOURCE_DIR) + "/" + doc);
  REQUIRE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("| `" + family + "`")) continue;
    const std::string marker = "`" + label + "` = ";
    const auto from = line.find(marker);
    REQUIRE(from != std::string::npos);
    const auto to = line.find(" |", from);
    std::stringstream values(line.substr(from + marker.size(), to - from - marker.size()));
    std::set<std::string> out;
    std::string value;
    while (std::getline(values, value, ',')) {
      value.erase(0, value.find_first_not_of(' '));
      out.insert(value);
    }
    return out;
  }
  FAIL(doc + " has no metrics row for " + family);
  return {};
}

std::set<std::string> asSet(const std::vector<std::string_view>& names) {
  return {names.begin(), names.end()};
}

bool exposedAtZero(const std::string& text, const std::string& family, const std::string& label,
                   const std::string& value) {
  return text.find(family + "{" + label + "=\"" + value + "\"} 0") != std::string::npos;
}

}  // namespace

TEST_CASE("every hold-release reason the docs promise is emitted under the book's own name") {
  const std::string family = "gpu_topology_extender_group_holds_released_total";
  const std::set<std::string> documented = documentedValues("docs/groups.md", family, "reason");
  CHECK(asSet(gte::cluster::holdReleaseNames()) == documented);

  gte::metrics::Metrics metrics;
  metrics.declareHoldReleaseReasons(gte::cluster::holdReleaseNames());
  const std::string before = metrics.serialize();
  for (const std::string& reason : documented) {
    CAPTURE(reason);
    CHECK(exposedAtZero(before, family, "reason", reason));
  }
  metrics.countHoldsReleased(
      gte::cluster::holdReleaseName(gte::cluster::HoldRelease::kUnschedulable), 3);
  CHECK(metrics.serialize().find(family + R"({reason="unschedulable"} 3)") != std::string::npos);
}

TEST_CASE("every DRA pass-through reason the docs promise is emitted under core's own name") {
  const std::string family = "gpu_topology_extender_dra_passthrough_total";
  const std::set<std::string> documented = documentedValues("docs/operations.md", family, "reason");
  CHECK(asSet(gte::draPassThroughNames()) == documented);

  // The service declares them when it is made.
  gte::metrics::Metrics metrics;
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  const gte::ExtenderService service([policy] { return policy; }, nullptr, &metrics);
  const std::string before = metrics.serialize();
  for (const std::string& reason : documented) {
    CAPTURE(reason);
    CHECK(exposedAtZero(before, family, "reason", reason));
  }
  metrics.countDraPassThrough(gte::draPassThroughName(gte::DraPassThrough::kTemplateEntry));
  metrics.countDraPassThrough("not a reason");  // not declared: not counted, no new series
  const std::string after = metrics.serialize();
  CHECK(after.find(family + R"({reason="template_entry"} 1)") != std::string::npos);
  CHECK(after.find("not a reason") == std::string::npos);
}

TEST_CASE("every group decision the docs promise is emitted under the service's own name") {
  const std::string family = "gpu_topology_extender_group_decisions_total";
  const std::set<std::string> documented = documentedValues("docs/groups.md", family, "outcome");
  CHECK(asSet(gte::groupOutcomeNames()) == documented);

  // The service declares them when it is made.
  gte::metrics::Metrics metrics;
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  const gte::ExtenderService service([policy] { return policy; }, nullptr, &metrics);
  const std::string before = metrics.serialize();
  for (const std::string& outcome : documented) {
    CAPTURE(outcome);
    CHECK(exposedAtZero(before, family, "outcome", outcome));
  }
  metrics.countGroupDecision(gte::groupOutcomeName(gte::GroupOutcome::kStale));
  CHECK(metrics.serialize().find(family + R"({outcome="stale"} 1)") != std::string::npos);
  // Each planner status is counted as its own decision.
  CHECK(gte::groupOutcomeOf(gte::GroupPlanStatus::kPlanned) == gte::GroupOutcome::kPlanned);
  CHECK(gte::groupOutcomeOf(gte::GroupPlanStatus::kUnplaced) == gte::GroupOutcome::kUnplaced);
  CHECK(gte::groupOutcomeOf(gte::GroupPlanStatus::kNoRoom) == gte::GroupOutcome::kNoRoom);
  CHECK(gte::groupOutcomeOf(gte::GroupPlanStatus::kNeverFits) == gte::GroupOutcome::kNeverFits);
  CHECK(gte::groupOutcomeOf(gte::GroupPlanStatus::kUnsupported) == gte::GroupOutcome::kUnsupported);
}

TEST_CASE("every DRA bind-prediction result the docs promise is emitted under the check's name") {
  const std::string family = "gpu_topology_extender_dra_bind_predictions_total";
  const std::set<std::string> documented = documentedValues("docs/operations.md", family, "result");
  CHECK(asSet(gte::cluster::draBindCheckNames()) == documented);

  gte::metrics::Metrics metrics;
  metrics.declareDraBindResults(gte::cluster::draBindCheckNames());
  const std::string before = metrics.serialize();
  for (const std::string& result : documented) {
    CAPTURE(result);
    CHECK(exposedAtZero(before, family, "result", result));
  }
  metrics.countDraBindPrediction(
      gte::cluster::draBindCheckName(gte::cluster::DraBindCheck::kMismatch));
  CHECK(metrics.serialize().find(family + R"({result="mismatch"} 1)") != std::string::npos);
}
