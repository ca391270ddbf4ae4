#include "service/node_state_cache.h"

#include <catch2/catch_test_macros.hpp>
#include <memory>
#include <string>

#include "core/node_state.h"
#include "policy/default_policy.h"
#include "support/node_fixtures.h"

using gte::NodeStateCache;
using gte::testing::FixtureState;

TEST_CASE("Full-Node mode builds a node's state once per content, not per request") {
  NodeStateCache cache;
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  const auto node = gte::testing::makeDgxH100(FixtureState().withName("a"));

  const auto first = cache.get(node, policy);
  CHECK(first.built);
  const auto again = cache.get(node, policy);
  CHECK_FALSE(again.built);
  CHECK(again.state == first.state);

  // A heartbeat changes nothing the state depends on; a label change does.
  const auto busier = gte::testing::makeDgxH100(FixtureState().withName("a").withUsed("11000000"));
  const auto changed = cache.get(busier, policy);
  CHECK(changed.built);
  CHECK(changed.state->freeCount == 6);
  CHECK(cache.get(busier, policy).state == changed.state);  // the newest state is the cached one

  // A policy file reloaded unchanged rebuilds nothing; a changed policy rebuilds, even with the
  // same node content.
  auto reloaded = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  const auto same = cache.get(busier, reloaded);
  CHECK_FALSE(same.built);
  CHECK(same.state == changed.state);
  gte::Policy tuned = gte::defaultPolicy();
  tuned.weights.linkQuality += 1;
  CHECK(cache.get(busier, std::make_shared<const gte::Policy>(tuned)).built);
  CHECK(cache.size() == 1);
}

TEST_CASE("The cache stays bounded when node names churn") {
  NodeStateCache cache(160);
  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  for (int i = 0; i < 2000; ++i) {
    std::string name = "n";
    name.append(std::to_string(i));  // appended: g++ 12 -O3 warns falsely on "n" + string
    cache.get(gte::testing::make4xPcieL40s(FixtureState().withName(name)), policy);
  }
  CHECK(cache.size() <= 160 + 16);
}
