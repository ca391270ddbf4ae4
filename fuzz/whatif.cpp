// What-if bodies through ExtenderService::whatif on the golden cluster cache
// (tests/golden/cluster.yaml): the body parser (the pod object, the count, the CSV, the policy
// YAML), the replay and the answer's writer. Whatever the body, the answer is one of the statuses
// the error table gives (200, 400, 413, 503), one well-formed JSON document, a 200 answer renders
// as the what-if table, and the cluster cache is the same object afterwards (read-only).
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "cluster/cluster_file.h"
#include "cluster/static_cluster_backend.h"
#include "fuzz_check.h"
#include "policy/default_policy.h"
#include "report/whatif_table.h"
#include "service/extender_service.h"

namespace {

using gte::fuzz::check;

struct Golden {
  gte::PolicyConstSharedPtr policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  std::unique_ptr<gte::cluster::StaticClusterBackend> cluster;
  std::unique_ptr<gte::ExtenderService> service;

  Golden() {
    std::ifstream in(GTE_SOURCE_DIR "/tests/golden/cluster.yaml", std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    auto parsed = gte::cluster::parseClusterDocument(text);
    check(parsed.ok(), "tests/golden/cluster.yaml loads");
    cluster = std::make_unique<gte::cluster::StaticClusterBackend>(std::move(*parsed), policy);
    // Small bounds keep each input fast; the deadline is far beyond what 64 pods on 5 nodes take.
    service =
        std::make_unique<gte::ExtenderService>([p = policy] { return p; }, cluster.get(), nullptr,
                                               gte::WhatifLimits{64, std::chrono::seconds(5)});
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // The what-if never changes the cluster, so one serves every input.
  static const Golden golden;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto before = golden.cluster->snapshot();
  const gte::Reply reply = golden.service->whatif(body);
  check(reply.status == 200 || reply.status == 400 || reply.status == 413 || reply.status == 503,
        "the answer has a status of the error table's whatif column");
  check(nlohmann::json::accept(reply.body), "the answer is one well-formed JSON document");
  if (reply.status == 200) {
    check(gte::report::whatifTable(reply.body).ok(), "a what-if answer renders as its table");
  }
  check(golden.cluster->snapshot() == before, "the cluster cache is the same object afterwards");
  return 0;
}
