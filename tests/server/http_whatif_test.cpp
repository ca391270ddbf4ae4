// The what-if and the node listing through the running binary (--cluster-file): POST /whatif and
// {prefix}/whatif, JSON and ?format=table, GET /nodes; the whatif and nodes commands print the
// tables an admin reads; bad input (malformed bodies, absurd counts, a CSV over the limit, a
// broken policy file, a deadline too short) answers clear errors within the serve flags' bounds;
// the switches turn both off; and the cache is the same after as before.
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "extender_process.h"
#include "http_test_client.h"
#include "shell_command.h"

using gte::testing::ExtenderProcess;
using gte::testing::httpRequest;
using gte::testing::runShell;
using nlohmann::json;

namespace {

const std::string kClusterFile = std::string(GTE_SOURCE_DIR) + "/tests/golden/cluster.yaml";

std::string command(const std::string& name, std::uint16_t port, const std::string& args) {
  return gte::testing::extenderBinary() + " " + name +
         " --url http://127.0.0.1:" + std::to_string(port) + " " + args;
}

// A file in the test's temporary directory, removed when the test ends.
struct TempFile {
  std::string path;
  TempFile(const std::string& name, const std::string& text)
      : path("/tmp/gte-whatif-test-" + std::to_string(::getpid()) + "-" + name) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
};

const std::string kPod =
    R"({"metadata":{"name":"train","namespace":"ml"},"spec":{"containers":[{"name":"m",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"2"}}}]}})";

}  // namespace

TEST_CASE("POST whatif over HTTP: JSON under the prefix and at the root; the table on request") {
  ExtenderProcess ext({"--cluster-file", kClusterFile});
  REQUIRE(ext.running());
  const std::string body = R"({"pod":)" + kPod + R"(,"count":2})";
  const auto prefixed = httpRequest(ext.port(), "POST", "/scheduler/whatif", body);
  REQUIRE(prefixed.status == 200);
  const json doc = json::parse(prefixed.body);
  CHECK(doc["pods"] == 2);
  CHECK(doc["nodes"] == 5);
  CHECK(doc["policies"][0]["placed"] == 2);
  const auto root = httpRequest(ext.port(), "POST", "/whatif", body);
  CHECK(root.status == 200);
  CHECK(json::parse(root.body) == doc);  // the same state, the same seed: the same answer

  const auto table = httpRequest(ext.port(), "POST", "/whatif?format=table", body);
  REQUIRE(table.status == 200);
  CHECK(table.headers.find("text/plain") != std::string::npos);
  CHECK(table.body.starts_with("what-if: 2 pods of 2 GPUs, binpack, on 5 nodes\n"));

  const auto nodes = httpRequest(ext.port(), "GET", "/nodes?format=table");
  REQUIRE(nodes.status == 200);
  CHECK(
      nodes.body.find("5 nodes: 21 free GPUs; free all-NVLink sets of 1/2/4/8 GPUs: 21/5/1/0\n") !=
      std::string::npos);
  CHECK(httpRequest(ext.port(), "GET", "/scheduler/nodes?node=dgx1").status == 200);
  CHECK(httpRequest(ext.port(), "GET", "/nodes?node=nope").status == 404);
  CHECK(httpRequest(ext.port(), "GET", "/whatif").status == 405);
  CHECK(httpRequest(ext.port(), "DELETE", "/nodes").status == 405);
}

TEST_CASE("the whatif and nodes commands print the tables an admin reads") {
  ExtenderProcess ext({"--cluster-file", kClusterFile});
  REQUIRE(ext.running());
  const auto [status, table] =
      runShell(command("whatif", ext.port(), "--gpus 2 --count 3 --min-link nvlink"));
  REQUIRE(status == 0);
  // dgx1 (free 0,1,3,4,6,7: pairs {0,1} {3,7} {4,6}... NV2 {6,7} first) and a100 (free
  // 2,4,5,6,7 on NVSwitch) hold the NVLink pairs; each pod takes one, best score first. A pair
  // of the a100 would break the cluster's only free NVLink quad (8 scarce-set points), so all
  // three pairs come from dgx1.
  CHECK(table ==
        "what-if: 3 pods of 2 GPUs, min-link nvlink, binpack, on 5 nodes\n"
        "running policy 96b33cd3081751ec\n"
        "POD       NODE  GPUS  LINK    SCORE  WIRE  TIED  STRANDED  NODE SETS 1/2/4/8   "
        "CLUSTER SETS  REASON\n"
        "whatif-1  dgx1  6,7   nvlink  88     10    1     0         6/3/0/0 -> 4/2/0/0  19/4/1/0"
        "      -\n"
        "whatif-2  dgx1  0,4   nvlink  81     10    1     0         4/2/0/0 -> 2/1/0/0  17/3/1/0"
        "      -\n"
        "whatif-3  dgx1  1,3   nvlink  95     10    1     0         2/1/0/0 -> 0/0/0/0  15/2/1/0"
        "      -\n"
        "running: placed 3 of 3; the cluster's free all-NVLink sets of 1/2/4/8 GPUs: 21/5/1/0 -> "
        "15/2/1/0\n");

  const TempFile spread("spread.yaml", "strategy: spread\n");
  const auto [compared, sideBySide] =
      runShell(command("whatif", ext.port(), "--gpus 1 --count 2 --policy " + spread.path));
  REQUIRE(compared == 0);
  CHECK(sideBySide.find("running policy 96b33cd3081751ec: 1 GPU, binpack\n") != std::string::npos);
  CHECK(sideBySide.find("proposed policy ") != std::string::npos);
  CHECK(sideBySide.find("[running]") != std::string::npos);
  CHECK(sideBySide.find("[proposed]") != std::string::npos);

  const TempFile csv("pods.csv", "name,cpu_milli,memory_mib,num_gpu\nweb,1000,1024,0\nbig,1,1,4\n");
  const auto [csvStatus, csvJson] =
      runShell(command("whatif", ext.port(), "--csv " + csv.path + " -o json"));
  REQUIRE(csvStatus == 0);
  CHECK(json::parse(csvJson)["policies"][0]["placements"][1]["gpusRequested"] == 4);

  const auto [nodesStatus, nodes] = runShell(command("nodes", ext.port(), "--node pcie4"));
  REQUIRE(nodesStatus == 0);
  CHECK(
      nodes ==
      "NODE   TOPOLOGY  MODEL        USABLE  FREE  FREE GPUS  SETS 1/2/4/8  LARGEST  LINKS        "
      "MIG\n"
      "pcie4  known     NVIDIA-L40S  4       4     0,1,2,3    4/0/0/0       1        pix:2 "
      "sys:4  -\n"
      "1 node: 4 free GPUs; free all-NVLink sets of 1/2/4/8 GPUs: 4/0/0/0\n"
      "(1 of the 5 nodes in the cache listed)\n");
}

TEST_CASE("a group what-if over HTTP and from the whatif command: each member's node and GPUs") {
  // The golden groups cluster: GB200 trays in cliques nvl-a (a0, a1) and nvl-b (b0, b1, b2 half
  // used), and an unlabelled DGX H100 h0. Two members of 4 GPUs: nvl-a fits them exactly (8 free
  // GPUs against nvl-b's 10): best fit, each member a whole tray.
  ExtenderProcess ext(
      {"--cluster-file", std::string(GTE_SOURCE_DIR) + "/tests/golden/groups-cluster.yaml"});
  REQUIRE(ext.running());
  const std::string pod =
      R"({"metadata":{"name":"llm","namespace":"ml"},"spec":{"containers":[{"name":"m",)"
      R"("resources":{"limits":{"nvidia.com/gpu":"4"}}}]}})";
  const auto answer = httpRequest(ext.port(), "POST", "/scheduler/whatif",
                                  R"({"pod":)" + pod + R"(,"groupSize":2})");
  REQUIRE(answer.status == 200);
  const json doc = json::parse(answer.body);
  CHECK(doc["mode"] == "group");
  CHECK(doc["policies"][0]["group"]["domains"]["nvidia.com/gpu.clique"] == "nvl-a");
  CHECK(doc["policies"][0]["placements"][0]["node"] == "a0");
  CHECK(doc["policies"][0]["placements"][1]["node"] == "a1");
  const auto refused =
      httpRequest(ext.port(), "POST", "/whatif", R"({"pod":)" + pod + R"(,"groupSize":0})");
  CHECK(refused.status == 400);
  CHECK(refused.body.find("groupSize: must be at least 1") != std::string::npos);

  const auto [status, table] = runShell(command("whatif", ext.port(), "--gpus 4 --group-size 2"));
  REQUIRE(status == 0);
  // Each member a whole tray of nvl-a; the plan's reason and the verdict on each clique below.
  const std::string want =
      "what-if: a group of 2 pods of 4 GPUs, binpack, on 6 nodes\n"
      "running policy 96b33cd3081751ec\n"
      "POD       NODE  GPUS     LINK    STRANDED  NODE SETS 1/2/4/8   CLUSTER SETS  REASON\n"
      "whatif-1  a0    0,1,2,3  nvlink  0         4/2/1/0 -> 0/0/0/0  22/11/5/1     -\n"
      "whatif-2  a1    0,1,2,3  nvlink  0         4/2/1/0 -> 0/0/0/0  18/9/4/1      -\n"
      "running: group planned: nvidia.com/gpu.clique=nvl-a: best fit, 0 free GPUs left over\n"
      "  nvidia.com/gpu.clique=nvl-a: chosen: 0 free GPUs left over\n"
      "  nvidia.com/gpu.clique=nvl-b: best fit prefers nvl-a (0 free GPUs left over there, 2 "
      "here)\n"
      "running: placed 2 of 2; the cluster's free all-NVLink sets of 1/2/4/8 GPUs: 26/13/6/1 -> "
      "18/9/4/1\n";
  CHECK(table == want);
  const auto [tooBig, refusal] =
      runShell(command("whatif", ext.port(), "--gpus 4 --group-size 3 -o json"));
  REQUIRE(tooBig == 0);
  CHECK(json::parse(refusal)["policies"][0]["group"]["status"] == "no-room");
}

TEST_CASE("bad what-if input answers clear errors within the serve flags' bounds") {
  ExtenderProcess ext({"--cluster-file", kClusterFile, "--whatif-max-pods", "20"});
  REQUIRE(ext.running());
  struct Case {
    std::string body;
    int status;
    std::string says;
  };
  std::string rows = "name,cpu_milli,memory_mib,num_gpu\\n";
  for (int i = 0; i < 21; ++i)
    rows.append("p").append(std::to_string(i)).append(",1,1,1\\n");
  const Case cases[] = {
      {"{\"pod\":", 400, "malformed request body"},
      {"not json", 400, "malformed request body"},
      {R"({"pod":)" + kPod + R"(,"count":21})", 413,
       "count: 21 pods exceed the what-if limit of 20 (--whatif-max-pods)"},
      {R"({"pod":)" + kPod + R"(,"count":1000000000000})", 413, "--whatif-max-pods"},
      {R"({"pod":)" + kPod + R"(,"count":-1})", 400, "count: must be at least 1"},
      {R"({"csv":")" + rows + R"("})", 413, "csv: 21 pods exceed the what-if limit of 20"},
      {R"({"pod":)" + kPod + R"(,"policy":"weights: {packing: lots}"})", 400, "policy: "},
  };
  for (const Case& c : cases) {
    CAPTURE(c.body.substr(0, 120));
    const auto reply = httpRequest(ext.port(), "POST", "/whatif", c.body);
    CHECK(reply.status == c.status);
    CHECK(reply.body.find(c.says) != std::string::npos);
  }
  // A broken policy file through the command: exit 1 and the loader's message.
  const TempFile broken("broken.yaml", "weights:\n  linkQuality: -5\n");
  const auto [status, out] =
      runShell("{ " + command("whatif", ext.port(), "--gpus 1 --policy " + broken.path) +
               " 2>&1; }");  // its stderr, where the refusal goes
  CHECK(status == 1);
  CHECK(out.find("HTTP 400") != std::string::npos);
  CHECK(out.find("policy: weights.linkQuality: must be >= 0") != std::string::npos);
  CHECK(runShell(command("whatif", ext.port(), "--gpus 1 --policy /nonexistent.yaml")).first == 1);
  // The server kept serving.
  CHECK(httpRequest(ext.port(), "GET", "/healthz").status == 200);
}

TEST_CASE("a what-if past --whatif-deadline is refused and the cache is unchanged") {
  ExtenderProcess ext(
      {"--cluster-file", kClusterFile, "--whatif-deadline", "1ms", "--whatif-max-pods", "100000"});
  REQUIRE(ext.running());
  const auto nodesBefore = httpRequest(ext.port(), "GET", "/nodes");
  REQUIRE(nodesBefore.status == 200);
  // 100,000 one-GPU pods cannot be placed in a millisecond.
  const auto late =
      httpRequest(ext.port(), "POST", "/whatif", R"({"pod":)" + kPod + R"(,"count":100000})");
  CHECK(late.status == 413);
  CHECK(late.body.find("ran past its deadline of 1 ms (--whatif-deadline)") != std::string::npos);
  const auto nodesAfter = httpRequest(ext.port(), "GET", "/nodes");
  CHECK(nodesAfter.body == nodesBefore.body);
}

TEST_CASE("whatif and nodes switched off answer 404; explain and the verbs keep working") {
  ExtenderProcess ext({"--cluster-file", kClusterFile, "--disable-whatif", "--disable-nodes"});
  REQUIRE(ext.running());
  CHECK(httpRequest(ext.port(), "POST", "/whatif", R"({"pod":)" + kPod + "}").status == 404);
  CHECK(httpRequest(ext.port(), "POST", "/scheduler/whatif", R"({"pod":)" + kPod + "}").status ==
        404);
  CHECK(httpRequest(ext.port(), "GET", "/nodes").status == 404);
  CHECK(httpRequest(ext.port(), "GET", "/explain?pod=ml/train").status == 200);
  CHECK(runShell(command("whatif", ext.port(), "--gpus 1")).first == 1);
  CHECK(runShell(command("nodes", ext.port(), "")).first == 1);
}
