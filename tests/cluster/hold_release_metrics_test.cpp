// The `reason` values of gpu_topology_extender_group_holds_released_total are the group book's own
// names (cluster::holdReleaseName), and every value docs/groups.md promises is emitted. Before,
// the metrics library kept a copy of the names by position, and "unschedulable" (a gang cycle that
// gave up) was counted nowhere.
#include <catch2/catch_test_macros.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "cluster/group_book.h"
#include "metrics/metrics.h"

namespace {

// The values the metrics table of docs/groups.md lists for the family's `reason` label.
std::set<std::string> documentedReasons() {
  std::ifstream in(std::string(GTE_SOURCE_DIR) + "/docs/groups.md");
  REQUIRE(in.good());
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("| `gpu_topology_extender_group_holds_released_total`")) continue;
    const std::string marker = "`reason` = ";
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
  FAIL("docs/groups.md has no row for gpu_topology_extender_group_holds_released_total");
  return {};
}

}  // namespace

TEST_CASE("every hold-release reason the docs promise is emitted under the book's own name",
          "[cluster][groups][metrics]") {
  const std::set<std::string> documented = documentedReasons();
  std::set<std::string> named;
  for (const std::string_view name : gte::cluster::holdReleaseNames())
    named.emplace(name);
  CHECK(named == documented);

  gte::metrics::Metrics metrics;
  metrics.declareHoldReleaseReasons(gte::cluster::holdReleaseNames());
  const std::string before = metrics.serialize();
  for (const std::string& reason : documented) {
    CAPTURE(reason);
    CHECK(before.find("gpu_topology_extender_group_holds_released_total{reason=\"" + reason +
                      "\"} 0") != std::string::npos);
  }
  metrics.countHoldsReleased(
      gte::cluster::holdReleaseName(gte::cluster::HoldRelease::kUnschedulable), 3);
  CHECK(metrics.serialize().find(
            R"(gpu_topology_extender_group_holds_released_total{reason="unschedulable"} 3)") !=
        std::string::npos);
}
