// What a node's state is read from, and so when the memos read it again: labels and GPU and MIG
// allocatable, nothing else, compared by value.
#include "core/node_content.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

#include "model/quantity.h"
#include "support/node_fixtures.h"

namespace gte {
namespace {

using testing::FixtureState;

Quantity quantity(const char* text) {
  auto q = parseQuantity(text);
  REQUIRE(q.ok());
  return *q;
}

TEST_CASE("Node content: labels and device allocatable count, nothing else") {
  const NodeInfo node = testing::makeDgxA100(FixtureState().withName("a").withMig("11000000"));

  NodeInfo heartbeat = node;  // what a status update or a cordon changes
  heartbeat.resourceVersion.append("8");
  heartbeat.uid.append("-other");
  heartbeat.allocatable.set("cpu", quantity("63"));
  heartbeat.allocatable.set("pods", quantity("110"));
  CHECK(sameNodeContent(node, heartbeat));

  NodeInfo used = node;
  used.labels.insert_or_assign("gputopo.dev/used", std::string(8, '0').replace(0, 1, "1"));
  CHECK_FALSE(sameNodeContent(node, used));

  NodeInfo extraLabel = node;
  extraLabel.labels.emplace("kubernetes.io/hostname", "a");
  CHECK_FALSE(sameNodeContent(node, extraLabel));

  NodeInfo gpus = node;
  gpus.allocatable.set("nvidia.com/gpu", quantity("5"));
  CHECK_FALSE(sameNodeContent(node, gpus));

  NodeInfo mig = node;
  mig.allocatable.set("nvidia.com/mig-1g.10gb", quantity("7"));
  CHECK_FALSE(sameNodeContent(node, mig));
  CHECK_FALSE(sameNodeContent(mig, node));

  // The same quantity written another way is the same content.
  NodeInfo milli = node;
  milli.allocatable.set("nvidia.com/gpu", quantity("8000m"));
  NodeInfo whole = node;
  whole.allocatable.set("nvidia.com/gpu", quantity("8"));
  CHECK(sameNodeContent(milli, whole));
}

TEST_CASE("Node content: device entries are matched by name among the other resources") {
  NodeInfo a;
  a.allocatable.set("cpu", quantity("8"));
  a.allocatable.set("nvidia.com/mig-1g.10gb", quantity("7"));
  NodeInfo b;
  b.allocatable.set("memory", quantity("1Gi"));
  b.allocatable.set("nvidia.com/mig-2g.20gb", quantity("7"));
  CHECK_FALSE(sameNodeContent(a, b));  // the same count of another profile
  b.allocatable.set("nvidia.com/mig-1g.10gb", quantity("7"));
  CHECK_FALSE(sameNodeContent(a, b));  // one more device resource
  a.allocatable.set("nvidia.com/mig-2g.20gb", quantity("7"));
  CHECK(sameNodeContent(a, b));  // cpu and memory do not count
}

}  // namespace
}  // namespace gte
