// Explain through the running binary: POST {prefix}/explain in both cache modes agrees with the
// filter and prioritize answers to the same body, GET /explain?pod= reads the pod from the
// --cluster-file cache, --disable-explain turns both off, and the `explain` command prints the
// table an admin reads.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch_test_macros.hpp>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "extender_process.h"
#include "http_test_client.h"
#include "shell_command.h"
#include "support/free_port.h"

using gte::testing::ExtenderProcess;
using gte::testing::httpRequest;
using nlohmann::json;

namespace {

const std::string kClusterFile = std::string(GTE_SOURCE_DIR) + "/tests/golden/cluster.yaml";
const std::string kCases = std::string(GTE_SOURCE_DIR) + "/tests/golden/cases/";

std::string readFile(const std::string& path) {
  std::string out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0)
    out.append(buf.data(), n);
  std::fclose(f);
  return out;
}

using gte::testing::runShell;

std::string explainCommand(std::uint16_t port, const std::string& args) {
  return gte::testing::extenderBinary() +
         " explain --url http://127.0.0.1:" + std::to_string(port) + " " + args;
}

// Checks one explain answer against the filter answer to the same body and the prioritize answer
// to what kube-scheduler sends next: the body with the nodes filter kept.
void checkAgainstVerbs(std::uint16_t port, const std::string& body, bool namesMode) {
  const auto explained = httpRequest(port, "POST", "/scheduler/explain", body);
  const auto filtered = httpRequest(port, "POST", "/scheduler/filter", body);
  REQUIRE(explained.status == 200);
  REQUIRE(filtered.status == 200);
  const json doc = json::parse(explained.body);
  const json filter = json::parse(filtered.body);
  json next = json::parse(body);
  next["Nodes"] = filter["Nodes"];
  next["NodeNames"] = filter["NodeNames"];
  const auto prioritized = httpRequest(port, "POST", "/scheduler/prioritize", next.dump());
  REQUIRE(prioritized.status == 200);
  std::map<std::string, int> wire;
  for (const json& host : json::parse(prioritized.body))
    wire[host["Host"]] = host["Score"];
  CHECK(doc["mode"] == (namesMode ? "nodeNames" : "nodes"));
  REQUIRE_FALSE(doc["nodes"].empty());
  for (const json& node : doc["nodes"]) {
    const std::string name = node["name"];
    CAPTURE(name);
    CHECK(node["wireScore"] == (node["verdict"] == "fit" ? wire.at(name) : 0));
    if (node["verdict"] == "unschedulable") CHECK(filter["FailedNodes"][name] == node["reason"]);
    if (node["verdict"] == "unresolvable") {
      CHECK(filter["FailedAndUnresolvableNodes"][name] == node["reason"]);
    }
    if (node["verdict"] == "fit") {
      CHECK(filtered.body.find("\"" + name + "\"") != std::string::npos);
      CHECK_FALSE(filter["FailedNodes"].contains(name));
      CHECK_FALSE(filter["FailedAndUnresolvableNodes"].contains(name));
    }
  }
}

}  // namespace

TEST_CASE("POST explain agrees with filter and prioritize over HTTP, in both cache modes") {
  SECTION("NodeNames against --cluster-file") {
    ExtenderProcess ext({"--cluster-file", kClusterFile});
    REQUIRE(ext.running());
    for (const char* name : {"filter-names-4gpu", "filter-names-minlink", "filter-names-mig3g",
                             "filter-names-badannotation", "prioritize-names-1gpu"}) {
      CAPTURE(name);
      checkAgainstVerbs(ext.port(), readFile(kCases + name + ".request.json"), true);
    }
    // The cluster cache serves names: full Node objects are refused as filter refuses them.
    const auto full = httpRequest(ext.port(), "POST", "/scheduler/explain",
                                  readFile(kCases + "filter-nodes-2gpu.request.json"));
    CHECK(full.status == 400);
    CHECK(full.body.find("full Node objects refused") != std::string::npos);
  }
  SECTION("full Node objects without a cluster") {
    ExtenderProcess ext({});
    REQUIRE(ext.running());
    for (const char* name : {"filter-nodes-2gpu", "filter-nodes-echo", "prioritize-nodes-2gpu"}) {
      CAPTURE(name);
      checkAgainstVerbs(ext.port(), readFile(kCases + name + ".request.json"), false);
    }
    const auto malformed = httpRequest(ext.port(), "POST", "/scheduler/explain", "{");
    CHECK(malformed.status == 400);
    CHECK(malformed.body.find("malformed request body") != std::string::npos);
    // Explain by name needs the cluster cache this binary does not have.
    const auto byName = httpRequest(ext.port(), "GET", "/explain?pod=ml/train");
    CHECK(byName.status == 400);
    CHECK(byName.body.find("needs a cluster cache") != std::string::npos);
  }
}

TEST_CASE("GET explain?pod= explains a pod of the cluster cache against every node") {
  ExtenderProcess ext({"--cluster-file", kClusterFile});
  REQUIRE(ext.running());
  const auto reply = httpRequest(ext.port(), "GET", "/explain?pod=ml/train");
  REQUIRE(reply.status == 200);
  const json doc = json::parse(reply.body);
  CHECK(doc["mode"] == "cluster");
  CHECK(doc["pod"]["name"] == "train");
  CHECK(doc["pod"]["demand"]["gpus"] == 2);
  std::vector<std::string> names;
  for (const json& node : doc["nodes"])
    names.push_back(node["name"]);
  CHECK(names == std::vector<std::string>{"a100", "broken", "dgx1", "gfd", "pcie4"});

  // Under the path prefix too, with the slash percent-encoded as the explain command sends it.
  const auto prefixed = httpRequest(ext.port(), "GET", "/scheduler/explain?pod=ml%2Ftrain");
  CHECK(prefixed.status == 200);
  CHECK(json::parse(prefixed.body) == doc);

  const auto unknown = httpRequest(ext.port(), "GET", "/explain?pod=ml/nope");
  CHECK(unknown.status == 404);
  CHECK(unknown.body.find("ml/nope") != std::string::npos);
  CHECK(httpRequest(ext.port(), "GET", "/explain").status == 400);
  CHECK(httpRequest(ext.port(), "GET", "/explain?pod=%zz").status == 400);
  CHECK(httpRequest(ext.port(), "DELETE", "/explain?pod=ml/train").status == 405);
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("Explain switched off by flag answers 404 on both paths; the verbs keep working") {
  ExtenderProcess ext({"--cluster-file", kClusterFile, "--disable-explain"});
  REQUIRE(ext.running());
  const std::string body = readFile(kCases + "filter-names-4gpu.request.json");
  CHECK(httpRequest(ext.port(), "POST", "/scheduler/explain", body).status == 404);
  CHECK(httpRequest(ext.port(), "GET", "/explain?pod=ml/train").status == 404);
  CHECK(httpRequest(ext.port(), "GET", "/scheduler/explain?pod=ml/train").status == 404);
  CHECK(httpRequest(ext.port(), "POST", "/scheduler/filter", body).status == 200);
  const auto [status, out] = runShell(explainCommand(ext.port(), "--pod ml/train"));
  CHECK(status == 1);
  CHECK(out.empty());
}

TEST_CASE("The probe port never serves explain") {
  const std::uint16_t probePort = gte::testing::freePort();
  ExtenderProcess ext({"--cluster-file", kClusterFile, "--metrics-listen",
                       "127.0.0.1:" + std::to_string(probePort)});
  REQUIRE(ext.running());
  bool probeUp = false;
  for (int i = 0; i < 250 && !probeUp; ++i) {
    probeUp = httpRequest(probePort, "GET", "/healthz").status == 200;
    if (!probeUp) ::usleep(20'000);
  }
  REQUIRE(probeUp);
  CHECK(httpRequest(probePort, "GET", "/explain?pod=ml/train").status == 404);
  CHECK(httpRequest(ext.port(), "GET", "/explain?pod=ml/train").status == 200);
}

TEST_CASE("The explain command prints a table sorted by score, or the JSON") {
  ExtenderProcess ext({"--cluster-file", kClusterFile});
  REQUIRE(ext.running());
  const auto [status, table] = runShell(explainCommand(ext.port(), "--pod ml/train --top 3"));
  REQUIRE(status == 0);
  // dgx1 (all-NVLink pair, 88) before a100 (86, less 8 for breaking the cluster's only free
  // NVLink quad: 78) before pcie4 (PIX pair, 75); two more left out.
  CHECK(table ==
        "pod ml/train: 2 GPUs, binpack\n"
        "NODE   VERDICT  SCORE  WIRE  GPUS  LINK    NUMA  REASON\n"
        "dgx1   fit      88     10    6,7   nvlink  1     -\n"
        "a100   fit      78     2     4,5   nvlink  1     -\n"
        "pcie4  fit      75     0     0,1   pix     1     -\n"
        "(2 more nodes not shown: --top 3)\n");

  const auto [jsonStatus, text] = runShell(explainCommand(ext.port(), "--pod ml/train -o json"));
  REQUIRE(jsonStatus == 0);
  const json doc = json::parse(text);
  CHECK(doc["nodes"].size() == 5);
  CHECK(doc["pod"]["name"] == "train");

  CHECK(runShell(explainCommand(ext.port(), "--pod ml/nope")).first == 1);
  CHECK(runShell(gte::testing::extenderBinary() + " explain --url 127.0.0.1:1 --pod ml/train")
            .first == 2);
}
