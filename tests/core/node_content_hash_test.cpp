// What a node's state is read from, and so when the memos read it again: labels and GPU and MIG
// allocatable, nothing else. The hash says "changed"; sameNodeContent confirms "unchanged".
#include "core/node_content_hash.h"

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
  CHECK(nodeContentHash(node) == nodeContentHash(heartbeat));

  NodeInfo used = node;
  used.labels.insert_or_assign("gputopo.dev/used", std::string(8, '0').replace(0, 1, "1"));
  CHECK_FALSE(sameNodeContent(node, used));
  CHECK(nodeContentHash(node) != nodeContentHash(used));

  NodeInfo extraLabel = node;
  extraLabel.labels.emplace("kubernetes.io/hostname", "a");
  CHECK_FALSE(sameNodeContent(node, extraLabel));

  NodeInfo gpus = node;
  gpus.allocatable.set("nvidia.com/gpu", quantity("5"));
  CHECK_FALSE(sameNodeContent(node, gpus));
  CHECK(nodeContentHash(node) != nodeContentHash(gpus));

  NodeInfo mig = node;
  mig.allocatable.set("nvidia.com/mig-1g.10gb", quantity("7"));
  CHECK_FALSE(sameNodeContent(node, mig));
  CHECK_FALSE(sameNodeContent(mig, node));
  CHECK(nodeContentHash(node) != nodeContentHash(mig));

  // The same quantity written another way is the same content.
  NodeInfo milli = node;
  milli.allocatable.set("nvidia.com/gpu", quantity("8000m"));
  NodeInfo whole = node;
  whole.allocatable.set("nvidia.com/gpu", quantity("8"));
  CHECK(sameNodeContent(milli, whole));
  CHECK(nodeContentHash(milli) == nodeContentHash(whole));
}

TEST_CASE("Node content: a label split differently is different content") {
  NodeInfo a;
  a.labels = {{"ab", "c"}};
  NodeInfo b;
  b.labels = {{"a", "bc"}};
  CHECK_FALSE(sameNodeContent(a, b));
  CHECK(nodeContentHash(a) != nodeContentHash(b));
}

}  // namespace
}  // namespace gte
