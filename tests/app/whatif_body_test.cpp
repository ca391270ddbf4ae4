// The body the whatif command sends: a pod built from the flags (GPUs, MIG, annotations), a pod
// file passed through as it is, a CSV and a policy as strings, and a pod file that is not JSON
// refused before anything is sent.
#include <catch2/catch_test_macros.hpp>
#include <nlohmann/json.hpp>

#include "app/whatif_command.h"

using gte::app::whatifBody;
using gte::app::WhatifFiles;
using gte::app::WhatifOptions;
using nlohmann::json;

TEST_CASE("whatif body: a pod from the flags") {
  WhatifOptions o;
  o.gpus = 8;
  o.count = 3;
  o.minLink = "nvlink";
  o.strategy = "spread";
  auto body = whatifBody(o, {});
  REQUIRE(body.ok());
  const json doc = json::parse(*body);
  CHECK(doc["count"] == 3);
  CHECK(doc["pod"]["metadata"]["name"] == "whatif");
  CHECK(doc["pod"]["metadata"]["annotations"] ==
        json{{"gputopo.dev/min-link", "nvlink"}, {"gputopo.dev/strategy", "spread"}});
  CHECK(doc["pod"]["spec"]["containers"][0]["resources"]["limits"] ==
        json{{"nvidia.com/gpu", "8"}});
  CHECK_FALSE(doc.contains("policy"));

  WhatifOptions mig;
  mig.mig = "3g.40gb";
  const json migDoc = json::parse(*whatifBody(mig, {}));
  CHECK(migDoc["pod"]["spec"]["containers"][0]["resources"]["limits"] ==
        json{{"nvidia.com/mig-3g.40gb", "1"}});
  CHECK_FALSE(migDoc.contains("count"));
  CHECK_FALSE(migDoc.contains("groupSize"));

  WhatifOptions group;
  group.gpus = 4;
  group.groupSize = 16;
  const json groupDoc = json::parse(*whatifBody(group, {}));
  CHECK(groupDoc["groupSize"] == 16);
  CHECK_FALSE(groupDoc.contains("count"));
}

TEST_CASE("whatif body: files as they are; a pod file that is not JSON is refused") {
  WhatifOptions o;
  o.podFile = "pod.json";
  o.policyFile = "new.yaml";
  WhatifFiles files;
  files.pod = R"({"metadata":{"name":"train"}, "spec":{}})";
  files.policy = "strategy: spread\nweights:\n  packing: 50\n";
  const json doc = json::parse(*whatifBody(o, files));
  CHECK(doc["pod"]["metadata"]["name"] == "train");
  CHECK(doc["policy"] == files.policy);

  WhatifOptions csv;
  csv.csvFile = "pods.csv";
  WhatifFiles rows;
  rows.csv = "name,cpu_milli,memory_mib,num_gpu\n\"a\",1,1,1\n";
  CHECK(json::parse(*whatifBody(csv, rows))["csv"] == rows.csv);

  files.pod = "kind: Pod\n";
  auto bad = whatifBody(o, files);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("--pod-file: not one JSON object") != std::string::npos);
  files.pod = R"({"a":1} {"b":2})";
  CHECK_FALSE(whatifBody(o, files).ok());
}
