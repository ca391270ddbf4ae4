#pragma once
// A cluster-file backend and the service on it, as the what-if tests use them: the default policy,
// the cluster of `file`, and the what-if's limits.
#include <catch2/catch_test_macros.hpp>

#include <memory>
#include <string>

#include "cluster/static_cluster_backend.h"
#include "policy/default_policy.h"
#include "service/extender_service.h"

namespace gte::testing {

struct WhatifCluster {
  PolicyConstSharedPtr policy = std::make_shared<const Policy>(defaultPolicy());
  std::unique_ptr<cluster::StaticClusterBackend> cluster;
  std::unique_ptr<ExtenderService> service;

  WhatifCluster(const std::string& file, WhatifLimits limits) {
    auto loaded = cluster::StaticClusterBackend::fromFile(file, policy);
    REQUIRE(loaded.ok());
    cluster = std::move(*loaded);
    service = std::make_unique<ExtenderService>([p = policy] { return p; }, cluster.get(), nullptr,
                                                limits);
  }
};

}  // namespace gte::testing
