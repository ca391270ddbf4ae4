// The explain command's table: fitting nodes first, each group by score; columns from the
// extender's field names; documents that are not explain answers are errors, not empty tables.
#include "report/explain_table.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

using gte::report::explainTable;

namespace {

std::string node(const std::string& name, const std::string& verdict, int score, int wire,
                 const std::string& gpus, const std::string& link, const std::string& reason) {
  return R"({"name":")" + name + R"(","verdict":")" + verdict + R"(","reason":")" + reason +
         R"(","score":)" + std::to_string(score) + R"(,"wireScore":)" + std::to_string(wire) +
         R"(,"wireScoreAfterFilter":)" + (verdict == "fit" ? std::to_string(wire) : "null") +
         R"(,"terms":{},"gpus":[)" + gpus + R"(],"mig":[],"weakestLink":)" + link +
         R"(,"numaSpan":null,"best":null,"topology":"known","usableGpus":8,"freeGpus":4})";
}

const std::string kPod =
    R"({"namespace":"ml","name":"p","uid":"u","demand":{"gpus":2,"mig":[],"minLink":"nvlink",)"
    R"("singleNuma":true,"strategy":"spread"},"error":""})";

}  // namespace

TEST_CASE("explain table: fit nodes first, then by score; --top cuts and says so") {
  const std::string doc =
      R"({"pod":)" + kPod + R"(,"mode":"cluster","nodes":[)" +
      node("low", "fit", 40, 0, "0,1", R"("pix")", "") + "," +
      node("busy", "unschedulable", 95, 0, "", "null", "gpu-topology: insufficient free GPUs") +
      "," + node("high", "fit", 90, 10, "2,3", R"("nvlink")", "") + "]}";
  auto table = explainTable(doc, 0);
  REQUIRE(table.ok());
  CHECK(*table ==
        "pod ml/p: 2 GPUs, min-link nvlink, single NUMA node, spread\n"
        "NODE  VERDICT        SCORE  WIRE  GPUS  LINK    NUMA  REASON\n"
        "high  fit            90     10    2,3   nvlink  -     -\n"
        "low   fit            40     0     0,1   pix     -     -\n"
        "busy  unschedulable  95     -     -     -       -     gpu-topology: insufficient free "
        "GPUs\n");
  auto top = explainTable(doc, 1);
  REQUIRE(top.ok());
  CHECK(top->find("high") != std::string::npos);
  CHECK(top->find("busy") == std::string::npos);
  CHECK(top->find("(2 more nodes not shown: --top 1)") != std::string::npos);
}

TEST_CASE("explain table: an invalid pod and MIG demands read as such") {
  const std::string invalid =
      R"({"pod":{"namespace":"ml","name":"p","uid":"u","demand":null,"error":"annotation x: bad"},)"
      R"("nodes":[]})";
  auto table = explainTable(invalid, 0);
  REQUIRE(table.ok());
  CHECK(table->starts_with("pod ml/p: invalid request: annotation x: bad\n"));
  const std::string mig =
      R"({"pod":{"namespace":"ml","name":"m","demand":{"gpus":0,"mig":[{"profile":"3g.40gb",)"
      R"("count":1}],"minLink":null,"singleNuma":false,"strategy":"binpack"},"error":""},)"
      R"("nodes":[]})";
  auto migTable = explainTable(mig, 0);
  REQUIRE(migTable.ok());
  CHECK(migTable->starts_with("pod ml/m: 1x MIG 3g.40gb, binpack\n"));
}

TEST_CASE("explain table: a placed pod's regret, a decided one's candidates") {
  const std::string placed =
      R"({"pod":)" + kPod +
      R"(,"mode":"cluster","placement":{"requestedGpus":2,"node":"l40s-b","gpus":[1,2],)"
      R"("got":{"weakestLink":"node","bandwidthGBps":20},)"
      R"("best":{"weakestLink":"nvlink","bandwidthGBps":50},)"
      R"("bestFeasible":{"weakestLink":"node","bandwidthGBps":20},"bestFeasibleNode":"l40s-a",)"
      R"("topRankedNode":"l40s-b","topRankedWorst":{"weakestLink":"node","bandwidthGBps":20},)"
      R"("regret":0.600,"reason":"no_better_fit","belowBestClass":true,)"
      R"("belowBestClassReason":"no_better_fit"},"nodes":[]})";
  auto table = explainTable(placed, 0);
  REQUIRE(table.ok());
  CHECK(table->find("\nplaced on l40s-b (GPUs 1,2): node 20 GB/s; best any node offered: nvlink "
                    "50 GB/s; regret 0.600, no_better_fit\n") != std::string::npos);
  const std::string decided =
      R"({"pod":)" + kPod +
      R"(,"placement":{"requestedGpus":2,"node":null,"gpus":[],"got":null,)"
      R"("best":{"weakestLink":"nvlink","bandwidthGBps":50},)"
      R"("bestFeasible":{"weakestLink":"node","bandwidthGBps":20},"bestFeasibleNode":"l40s-a",)"
      R"("topRankedNode":"l40s-b","topRankedWorst":null,"regret":null,"reason":"none",)"
      R"("belowBestClass":false,"belowBestClassReason":"none"},"nodes":[]})";
  auto pending = explainTable(decided, 0);
  REQUIRE(pending.ok());
  CHECK(pending->find("\ndecided, not bound yet: best candidate l40s-a (node 20 GB/s), ranked "
                      "first l40s-b; best any node offered: nvlink 50 GB/s\n") !=
        std::string::npos);
}

TEST_CASE("explain table: other documents are errors") {
  CHECK_FALSE(explainTable("{", 0).ok());
  CHECK_FALSE(explainTable(R"({"Error":"gpu-topology: cache not synced"})", 0).ok());
  CHECK_FALSE(explainTable(R"({"nodes":{}})", 0).ok());
}

// A pod explained by name that is already bound (or reserved) says where, before the table.
TEST_CASE("explain table: a bound pod's node and GPUs head the table") {
  const std::string bound =
      R"({"namespace":"ml","name":"p","uid":"u","demand":{"gpus":2,"mig":[],"minLink":null,)"
      R"("singleNuma":false,"strategy":"binpack"},"error":"","boundTo":{"node":"gfd",)"
      R"("reserved":false,"gpus":[0,1],"mig":[],"devices":[]}})";
  const std::string doc = R"({"pod":)" + bound + R"(,"mode":"cluster","nodes":[)" +
                          node("gfd", "fit", 60, 10, "0,1", R"("phb")", "") + "]}";
  auto table = explainTable(doc, 0);
  REQUIRE(table.ok());
  CHECK(table->find("\nbound to gfd (GPUs 0,1); its node is judged as if it were not there\n") !=
        std::string::npos);
  std::string reserved = doc;
  reserved.replace(reserved.find(R"("reserved":false)"), 16, R"("reserved":true)");
  auto held = explainTable(reserved, 0);
  REQUIRE(held.ok());
  CHECK(held->find("\nreserved on gfd (GPUs 0,1)") != std::string::npos);
}

// A MIG pod gets no whole GPU: its GPUS cell read "-", hiding the instance explain predicts.
TEST_CASE("explain table: a MIG pod's predicted instance stands in the GPUS column") {
  std::string a100 = node("a100", "fit", 91, 10, "", "null", "");
  a100.replace(a100.find(R"("mig":[])"), 8,
               R"("mig":[{"gpu":0,"profile":"1g.10gb","start":2,"createsInstance":false}])");
  const std::string doc = R"({"pod":)" + kPod + R"(,"mode":"cluster","nodes":[)" + a100 + "]}";
  auto table = explainTable(doc, 0);
  REQUIRE(table.ok());
  CHECK(table->find("a100  fit      91     10    1g.10gb on GPU 0 at 2") != std::string::npos);
  // JSON objects are unordered: "mig" before "gpus" reads the same.
  const std::string reordered =
      R"({"name":"a100","verdict":"fit","reason":"","score":91,"wireScore":10,)"
      R"("wireScoreAfterFilter":10,"terms":{},)"
      R"("mig":[{"gpu":0,"profile":"1g.10gb","start":2,"createsInstance":false}],"gpus":[],)"
      R"("weakestLink":null,"numaSpan":null,"best":null,"topology":"known","usableGpus":8,)"
      R"("freeGpus":4})";
  table =
      explainTable(R"({"pod":)" + kPod + R"(,"mode":"cluster","nodes":[)" + reordered + "]}", 0);
  REQUIRE(table.ok());
  CHECK(table->find("a100  fit      91     10    1g.10gb on GPU 0 at 2") != std::string::npos);
}

TEST_CASE("explain table: a set holding degraded hardware says so in the LINK column") {
  std::string worn = node("worn", "fit", 60, 0, "2,3", R"("nvlink")", "");
  worn.replace(worn.find(R"("best":null)"), 11,
               R"("degraded":{"scoredAs":"sys","gpus":[],"links":[{"gpus":[2,3],"state":)"
               R"("degraded"}]},"best":null)");
  const std::string doc = R"({"pod":)" + kPod + R"(,"mode":"cluster","nodes":[)" +
                          node("fresh", "fit", 88, 10, "6,7", R"("nvlink")", "") + "," + worn +
                          "]}";
  auto table = explainTable(doc, 0);
  REQUIRE(table.ok());
  CHECK(table->find("worn   fit      60     0     2,3   nvlink (degraded link 2-3; scored sys)") !=
        std::string::npos);
  CHECK(table->find("fresh  fit      88     10    6,7   nvlink ") != std::string::npos);
}
