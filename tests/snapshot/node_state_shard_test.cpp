// The flat node table behind every snapshot lookup: each name finds its own state, names that
// share a prefix or a length stay apart, and unknown names find nothing.
#include "snapshot/node_state_shard.h"

#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace gte {
namespace {

NodeStateConstSharedPtr stateNamed(const std::string& name) {
  auto state = std::make_shared<NodeState>();
  state->name = name;
  return state;
}

NodeStateShard shardOf(const std::vector<std::string>& names) {
  std::vector<NodeStateShard::Entry> entries;
  for (const auto& name : names)
    entries.emplace_back(name, stateNamed(name));
  return NodeStateShard(std::move(entries));
}

const NodeState* find(const NodeStateShard& shard, std::string_view name) {
  return shard.find(name, nodeNameHash(name));
}

TEST_CASE("every name of a shard finds its own state", "[snapshot][shard]") {
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i)
    names.push_back("gpu-node-" + std::to_string(i));
  names.push_back("ip-10-0-12-34.eu-west-1.compute.internal");  // longer than any inline string
  const NodeStateShard shard = shardOf(names);
  CHECK(shard.size() == names.size());
  for (const auto& name : names) {
    const NodeState* state = find(shard, name);
    REQUIRE(state != nullptr);
    CHECK(state->name == name);
    CHECK(shard.get(name, nodeNameHash(name)).get() == state);
    CHECK(shard.contains(name));
  }
}

TEST_CASE("prefixes, extensions and unknown names find nothing", "[snapshot][shard]") {
  const NodeStateShard shard = shardOf({"node-1", "node-10", "a"});
  CHECK(find(shard, "node-1")->name == "node-1");
  CHECK(find(shard, "node-10")->name == "node-10");
  CHECK(find(shard, "node-") == nullptr);
  CHECK(find(shard, "node-100") == nullptr);
  CHECK(find(shard, "node-2") == nullptr);  // same length as node-1
  CHECK(find(shard, "") == nullptr);
  CHECK(shard.get("b", nodeNameHash("b")) == nullptr);
  CHECK_FALSE(shard.contains("A"));  // names are case-sensitive
}

TEST_CASE("an empty shard finds nothing and iterates nothing", "[snapshot][shard]") {
  const NodeStateShard shard = shardOf({});
  CHECK(shard.size() == 0);
  CHECK(shard.begin() == shard.end());
  CHECK(find(shard, "node-1") == nullptr);
}

TEST_CASE("iteration yields every entry once, with its state", "[snapshot][shard]") {
  const NodeStateShard shard = shardOf({"x", "y", "z"});
  std::vector<std::string> seen;
  for (const auto& [name, state] : shard) {
    CHECK(state->name == name);
    seen.push_back(name);
  }
  std::sort(seen.begin(), seen.end());
  CHECK(seen == std::vector<std::string>{"x", "y", "z"});
}

}  // namespace
}  // namespace gte
