// Reading openb pod and node lists, the FGD arrival protocol and the synthetic generator.
#include <catch2/catch_test_macros.hpp>
#include <string>

#include "sim/cluster_spec.h"
#include "sim/openb_csv.h"
#include "sim/workload.h"
#include "sim_test_data.h"

using namespace gte;
using namespace gte::sim;

TEST_CASE("openb pod lists: columns by header name, a fractional GPU is one whole GPU") {
  const auto pods = parseOpenbPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli\n"
      "p0,12000,16384,1,460\n"
      "p1,88000,327680,8,1000\r\n"
      "p2,2000,4096,0,0\n");
  REQUIRE(pods.ok());
  REQUIRE(pods->size() == 3);
  CHECK((*pods)[0].gpus == 1);
  CHECK((*pods)[0].cpuMilli == 12000);
  CHECK((*pods)[1].gpus == 8);
  CHECK((*pods)[1].memoryMib == 327680);
  CHECK((*pods)[2].gpus == 0);
  // The timestamped list orders its columns differently.
  const auto timed = parseOpenbPods(
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos\np,1000,512,2,1000,,LS\n");
  REQUIRE(timed.ok());
  CHECK((*timed)[0].gpus == 2);
}

TEST_CASE("openb pod lists: a bad number or a missing column names the line") {
  const auto bad = parseOpenbPods("name,cpu_milli,memory_mib,num_gpu\np,1000,x,1\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == "line 2: 'x' is not a non-negative integer");
  const auto missing = parseOpenbPods("name,cpu_milli,num_gpu\np,1,1\n");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message == "CSV header lacks column 'memory_mib'");
}

TEST_CASE("openb node lists: templates by GPU count, CPU-only nodes skipped") {
  const auto nodes = parseOpenbNodes(
      "sn,cpu_milli,memory_mib,gpu,model\n"
      "a,64000,262144,2,T4\nb,96000,786432,8,G2\nc,32000,65536,0,\nd,64000,262144,4,V100M16\n",
      *findNodeTemplate("dgx1v"));
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 3);
  CHECK((*nodes)[0].machine->name == "pcie2");
  CHECK((*nodes)[1].machine->name == "dgx1v");
  CHECK((*nodes)[1].cpuMilli == 96000);
  CHECK((*nodes)[2].machine->name == "pcie4");
  const auto odd =
      parseOpenbNodes("sn,cpu_milli,memory_mib,gpu\nx,1,1,3\n", *findNodeTemplate("hgx-a100"));
  REQUIRE_FALSE(odd.ok());
  CHECK(odd.error().message == "line 2: no node template with 3 GPUs");
}

TEST_CASE("cluster descriptions: template counts, unknown templates rejected by name") {
  const auto nodes = parseClusterSpec("hgx-a100:2,pcie2:3");
  REQUIRE(nodes.ok());
  REQUIRE(nodes->size() == 5);
  CHECK((*nodes)[1].name == "hgx-a100-1");
  CHECK((*nodes)[4].machine->gpus == 2);
  const auto unknown = parseClusterSpec("dgx9:1");
  REQUIRE_FALSE(unknown.ok());
  CHECK(unknown.error().message.find("'dgx9:1'") != std::string::npos);
}

TEST_CASE("the arrival sequence stops once GPU demand reaches the target share of capacity") {
  const auto trace = parseOpenbPods(testing::syntheticTraceText());
  REQUIRE(trace.ok());
  const auto arrivals = arrivalSequence(*trace, 100, 130, 42);
  std::int64_t gpus = 0;
  for (std::size_t i = 0; i + 1 < arrivals.size(); ++i) {
    gpus += arrivals[i].gpus;
  }
  CHECK(gpus < 130);                          // not reached before the last pod
  CHECK(gpus + arrivals.back().gpus >= 130);  // reached with it
  CHECK(arrivals.size() < trace->size());
  CHECK(arrivalSequence(*trace, 100, 130, 42).front().name == arrivals.front().name);
}

TEST_CASE("the synthetic generator follows the mix and rejects malformed ones") {
  const auto mix = parseSyntheticMix("2:1,8:0");
  REQUIRE(mix.ok());
  const auto pods = syntheticPods(*mix, 50, 1);
  REQUIRE(pods.size() == 50);
  for (const SimPod& pod : pods) {
    CHECK(pod.gpus == 2);
    CHECK(pod.cpuMilli == 8000);
  }
  CHECK_FALSE(parseSyntheticMix("3").ok());
  CHECK_FALSE(parseSyntheticMix("9:1").ok());
  CHECK_FALSE(parseSyntheticMix("1:0").ok());
}
