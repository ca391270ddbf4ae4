// --cluster-file: JSON and YAML, List / array / multi-document forms, errors naming the item.
#include "cluster/cluster_file.h"
#include "cluster/yaml_to_json.h"

#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <fstream>

using gte::cluster::loadClusterFile;
using gte::cluster::parseClusterDocument;

namespace {

constexpr const char* kNodeJson =
    R"({"kind":"Node","metadata":{"name":"n1","labels":{"gputopo.dev/v":"1"}},
       "status":{"allocatable":{"nvidia.com/gpu":"8"}}})";
constexpr const char* kPodJson =
    R"({"kind":"Pod","metadata":{"name":"p1","namespace":"ml","uid":"u1"},
       "spec":{"nodeName":"n1","containers":[{"resources":{"limits":{"nvidia.com/gpu":"2"}}}]},
       "status":{"phase":"Running"}})";

}  // namespace

TEST_CASE("cluster file: a v1 List") {
  auto contents =
      parseClusterDocument(std::string(R"({"apiVersion":"v1","kind":"List","items":[)") +
                           kNodeJson + "," + kPodJson + "]}");
  REQUIRE(contents.ok());
  REQUIRE(contents->nodes.size() == 1);
  CHECK(contents->nodes[0].name == "n1");
  REQUIRE(contents->pods.size() == 1);
  CHECK(contents->pods[0].pod.nodeName == "n1");
  CHECK(contents->pods[0].pod.requests.get("nvidia.com/gpu").wholeUnits() == 2);
}

TEST_CASE("cluster file: a bare array, and lists inside it") {
  auto contents = parseClusterDocument(std::string("[") + kNodeJson +
                                       R"(,{"kind":"PodList","items":[)" + kPodJson + "]}]");
  REQUIRE(contents.ok());
  CHECK(contents->nodes.size() == 1);
  CHECK(contents->pods.size() == 1);
}

TEST_CASE("cluster file: multi-document YAML") {
  auto contents = parseClusterDocument(R"(
apiVersion: v1
kind: Node
metadata:
  name: n1
  labels:
    gputopo.dev/v: "1"
    gputopo.dev/n: "8"
status:
  allocatable:
    nvidia.com/gpu: 8
---
---
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: ml
spec:
  nodeName: n1
  containers:
  - name: main
    resources:
      limits: {nvidia.com/gpu: 4}
status:
  phase: Running
  conditions:
  - type: PodScheduled
    status: "True"
    lastTransitionTime: "2025-12-02T10:06:40Z"
---
kind: Pod
metadata: {name: done, namespace: ml}
spec: {containers: []}
status: {phase: Succeeded}
)");
  REQUIRE(contents.ok());
  REQUIRE(contents->nodes.size() == 1);
  CHECK(contents->nodes[0].labels.at("gputopo.dev/n") == "8");
  REQUIRE(contents->pods.size() == 1);  // the Succeeded pod is left out
  const auto& pod = contents->pods[0];
  CHECK(pod.pod.uid == "ml/trainer");  // no UID in the file: the name stands in
  CHECK(pod.pod.requests.get("nvidia.com/gpu").wholeUnits() == 4);
  CHECK(pod.boundAt == 1764670000);
}

TEST_CASE("cluster file: errors name the item index") {
  SECTION("unknown kind") {
    auto contents = parseClusterDocument(std::string("[") + kNodeJson +
                                         R"(,{"kind":"Service","metadata":{"name":"s"}}])");
    REQUIRE_FALSE(contents.ok());
    CHECK(contents.error().message.find("item 1") != std::string::npos);
    CHECK(contents.error().message.find("Service") != std::string::npos);
  }
  SECTION("a bad quantity inside a Pod") {
    auto contents = parseClusterDocument(
        R"([{"kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[
            {"resources":{"limits":{"nvidia.com/gpu":"two"}}}]}}])");
    REQUIRE_FALSE(contents.ok());
    CHECK(contents.error().message.find("item 0 (Pod)") != std::string::npos);
  }
  SECTION("a YAML label value that is a number (Kubernetes refuses those too)") {
    auto contents = parseClusterDocument("kind: Node\nmetadata:\n  name: n\n  labels:\n    a: 1\n");
    REQUIRE_FALSE(contents.ok());
    CHECK(contents.error().message.find("item 0 (Node)") != std::string::npos);
  }
  // Two objects of one name were collapsed into the later one, with nothing said.
  SECTION("two Nodes of one name") {
    auto contents = parseClusterDocument(std::string("[") + kNodeJson + "," + kNodeJson + "]");
    REQUIRE_FALSE(contents.ok());
    CHECK(contents.error().message.find("item 1 (Node): n1 is item 0 already") !=
          std::string::npos);
  }
  SECTION("two Pods of one namespace and name, or one UID") {
    auto named = parseClusterDocument(std::string("[") + kPodJson + "," + kPodJson + "]");
    REQUIRE_FALSE(named.ok());
    CHECK(named.error().message.find("item 1 (Pod): ml/p1 is item 0 already") != std::string::npos);
    std::string other = kPodJson;
    other.replace(other.find("\"p1\""), 4, "\"p2\"");
    auto uid = parseClusterDocument(std::string("[") + kPodJson + "," + other + "]");
    REQUIRE_FALSE(uid.ok());
    CHECK(uid.error().message.find("item 1 (Pod): uid u1 is item 0 already") != std::string::npos);
  }
  SECTION("YAML syntax") {
    auto contents = parseClusterDocument("kind: Node\nmetadata: [unclosed\n");
    REQUIRE_FALSE(contents.ok());
    CHECK(contents.error().message.find("YAML") != std::string::npos);
  }
  SECTION("a missing file") {
    auto contents = loadClusterFile("/nonexistent/cluster.yaml");
    REQUIRE_FALSE(contents.ok());
    CHECK(contents.error().message.find("/nonexistent/cluster.yaml") != std::string::npos);
  }
}

TEST_CASE("cluster file: YAML scalars are typed by JSON's number grammar, whatever their length") {
  using gte::cluster::yamlDocumentsToJson;
  auto typed = yamlDocumentsToJson("a: 12\nb: -0.5e3\nc: 0x1f\nd: 012\ne: 1.\nf: '-'\ng: 1e\n");
  REQUIRE(typed.ok());
  CHECK(typed->at(0) == R"({"a":12,"b":-0.5e3,"c":"0x1f","d":"012","e":"1.","f":"-","g":"1e"})");
  // A 40,000-character scalar (digits, then letters) used to overflow std::regex's recursion.
  const std::string digits(40000, '7');
  auto longNumber = yamlDocumentsToJson("a: " + digits + "\nb: " + digits + "x\n");
  REQUIRE(longNumber.ok());
  CHECK(longNumber->at(0) == "{\"a\":" + digits + ",\"b\":\"" + digits + "x\"}");
}

// Found by fuzz_cluster_file: yaml-cpp 0.7's LoadAll never returned (and kept allocating) on a
// stream where a document would start with a ','. Each is now an error; the multi-document test
// above shows empty documents between separators are still fine.
TEST_CASE("cluster file: a document that cannot start is an error, not a hang") {
  using gte::cluster::yamlDocumentsToJson;
  for (const char* text : {",", ",ind:<: ta", "[a], b", "- a\n,", "a: 1\n---\n,"}) {
    CAPTURE(text);
    auto converted = yamlDocumentsToJson(text);
    REQUIRE_FALSE(converted.ok());
    CHECK(converted.error().message.find("no document can start here") != std::string::npos);
  }
  auto located = parseClusterDocument("kind: List\nitems: []\n---\n  ,\n");
  REQUIRE_FALSE(located.ok());
  CHECK(located.error().message.find("line 4, column 3") != std::string::npos);
  auto fine = yamlDocumentsToJson("---\n---\na: 1\n---\n");
  REQUIRE(fine.ok());
  CHECK(*fine == std::vector<std::string>{R"({"a":1})"});
}

TEST_CASE("cluster file: PodGroups, Jobs and JobSets give pod groups their size") {
  auto contents = parseClusterDocument(R"(
kind: PodGroup
apiVersion: scheduling.k8s.io/v1beta1
metadata: {name: pg, namespace: ml}
spec: {schedulingPolicy: {gang: {minCount: 8}}}
---
kind: PodGroup
metadata: {name: basic, namespace: ml}
spec: {schedulingPolicy: {basic: {}}}
---
kind: Job
apiVersion: batch/v1
metadata: {name: job, namespace: ml}
spec: {parallelism: 6, completions: 4, completionMode: Indexed}
---
kind: Job
metadata: {name: one}
spec: {}
---
kind: JobSet
apiVersion: jobset.x-k8s.io/v1alpha2
metadata: {name: js, namespace: ml}
spec:
  replicatedJobs:
    - name: driver
      template: {spec: {parallelism: 1}}
    - name: workers
      replicas: 3
      template: {spec: {parallelism: 4, completions: 4}}
)");
  REQUIRE(contents.ok());
  gte::cluster::GroupOwnerSizes sizes;
  for (const auto& owner : contents->groupOwners)
    sizes.put(owner);
  using gte::GroupOwnerKind;
  CHECK(sizes.groupSize(GroupOwnerKind::kPodGroup, "ml", "pg") == 8);
  CHECK_FALSE(sizes.groupSize(GroupOwnerKind::kPodGroup, "ml", "basic").has_value());
  CHECK(sizes.groupSize(GroupOwnerKind::kJob, "ml", "job") == 4);            // min(6, 4)
  CHECK(sizes.groupSize(GroupOwnerKind::kJob, "default", "one") == 1);       // parallelism 1
  CHECK(sizes.groupSize(GroupOwnerKind::kJobSet, "ml", "js") == 1 + 3 * 4);  // 13
  CHECK_FALSE(sizes.groupSize(GroupOwnerKind::kJob, "ml", "pg").has_value());

  auto bad =
      parseClusterDocument(R"({"kind":"Job","metadata":{"name":"j"},"spec":{"parallelism":-2}})");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "item 0 (Job): spec.parallelism: must not be negative");
  auto unnamed = parseClusterDocument(R"({"kind":"PodGroup","spec":{}})");
  REQUIRE_FALSE(unnamed.ok());
  CHECK(unnamed.error().message == "item 0 (PodGroup): metadata.name is missing");
  auto other = parseClusterDocument(R"({"kind":"Deployment","metadata":{"name":"d"}})");
  REQUIRE_FALSE(other.ok());
  CHECK(other.error().message ==
        "item 0: kind \"Deployment\" is not Node, Pod, PodGroup, Job or JobSet");
}
