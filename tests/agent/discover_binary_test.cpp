// The gpu-topology-agent binary: `discover` output and exit codes as a user sees them, including
// NVML loaded through LD_LIBRARY_PATH like the driver's library on a GPU node.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <string>

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;

const std::string kTopologies = std::string(GTE_TEST_DATA_DIR) + "/topologies/";
const std::string kAgentData = std::string(GTE_TEST_DATA_DIR) + "/agent/";

struct Outcome {
  int exitCode = -1;
  std::string output;  // stdout and stderr
};

Outcome runAgent(const std::string& prefix, const std::string& args) {
  const std::string command = prefix + " " + GTE_AGENT_BINARY + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  Outcome out;
  std::array<char, 4096> buffer{};
  while (std::fgets(buffer.data(), static_cast<int>(buffer.size()), pipe) != nullptr) {
    out.output += buffer.data();
  }
  const int status = ::pclose(pipe);
  out.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST_CASE("discover --topo-file prints sorted key=value lines and exits 0", "[agent][binary]") {
  const Outcome out = runAgent("", "discover --topo-file " + kTopologies +
                                       "g6e-l40sx4-node.topo --model 'NVIDIA L40S' --gen 7");
  CHECK(out.exitCode == 0);
  CHECK(out.output ==
        "gputopo.dev/fabric=none\n"
        "gputopo.dev/gen=7\n"
        "gputopo.dev/health=1111\n"
        "gputopo.dev/mig=nnnn\n"
        "gputopo.dev/model=NVIDIA-L40S\n"
        "gputopo.dev/n=4\n"
        "gputopo.dev/numa=0000\n"
        "gputopo.dev/nvl=000000\n"
        "gputopo.dev/pci=NNNNNN\n"
        "gputopo.dev/used=0000\n"
        "gputopo.dev/v=1\n");
}

TEST_CASE("a partial capture exits 2 with one line: file, line, what", "[agent][binary]") {
  const Outcome out =
      runAgent("", "discover --topo-file " + kTopologies + "dgx2-v100-nvswitch-partial.topo");
  CHECK(out.exitCode == 2);
  CHECK(out.output == kTopologies +
                          "dgx2-v100-nvswitch-partial.topo:6: GPU4 row ends in an ellipsis "
                          "(partial capture)\n");
  const Outcome mig =
      runAgent("", "discover --topo-file " + kTopologies + "hgx-a100-nvswitch.topo --mig-file " +
                       kAgentData + "dgx-a100-mig-partial.txt");
  CHECK(mig.exitCode == 2);
  CHECK(mig.output == kAgentData +
                          "dgx-a100-mig-partial.txt:11: table ends without its closing border "
                          "(partial capture)\n");
}

TEST_CASE("discover --nvml through LD_LIBRARY_PATH", "[agent][binary]") {
  const Outcome out =
      runAgent("GTE_FAKE_NVML_MACHINE=hgx-h100 LD_LIBRARY_PATH=" + std::string(GTE_FAKE_NVML_DIR),
               "discover --nvml --gen 1");
  CHECK(out.exitCode == 0);
  CHECK_THAT(out.output, ContainsSubstring("gputopo.dev/fabric=nvsw4\n"));
  CHECK_THAT(out.output, ContainsSubstring("gputopo.dev/nvl=iiiiiiiiiiiiiiiiiiiiiiiiiiii\n"));
}

TEST_CASE("discover --nvml without a driver exits 1 with the reason", "[agent][binary]") {
  const Outcome out = runAgent("LD_LIBRARY_PATH=/nonexistent",
                               "discover --nvml-lib /nonexistent/libnvidia-ml.so.1");
  CHECK(out.exitCode == 1);
  CHECK_THAT(out.output, ContainsSubstring("cannot load /nonexistent/libnvidia-ml.so.1"));
}

TEST_CASE("bad flags exit 64", "[agent][binary]") {
  CHECK(runAgent("", "discover --bogus").exitCode == 64);
}

}  // namespace
}  // namespace gte::agent

namespace gte::agent {
namespace {

TEST_CASE("run --dry-run --once prints the labels it would write", "[agent][binary]") {
  const Outcome out =
      runAgent("", "run --node n1 --dry-run --once --listen '' --used 0100 --topo-file " +
                       kTopologies + "g6e-l40sx4-node.topo --model 'NVIDIA L40S'");
  CHECK(out.exitCode == 0);
  CHECK_THAT(out.output, ContainsSubstring("gputopo.dev/used=0100\n"));
  CHECK_THAT(out.output, ContainsSubstring("gputopo.dev/pci=NNNNNN\n"));
}

TEST_CASE("run --once without a driver fails the pass and writes nothing", "[agent][binary]") {
  const Outcome out = runAgent("",
                               "run --node n1 --dry-run --once --listen '' --used 0 --nvml-lib "
                               "/nonexistent/libnvidia-ml.so.1");
  CHECK(out.exitCode == 1);
  CHECK_THAT(out.output, ContainsSubstring("discovery failed; writing nothing"));
  CHECK_THAT(out.output, !ContainsSubstring("gputopo.dev/"));
}

TEST_CASE("run --once without the kubelet socket fails the pass", "[agent][binary]") {
  const Outcome out = runAgent("",
                               "run --node n1 --dry-run --once --listen '' "
                               "--pod-resources-socket /nonexistent/kubelet.sock --topo-file " +
                                   kTopologies + "g6e-l40sx4-node.topo");
  CHECK(out.exitCode == 1);
  CHECK_THAT(out.output, ContainsSubstring("usage read failed; writing nothing"));
}

}  // namespace
}  // namespace gte::agent

namespace gte::agent {
namespace {

// `-o node` prints a Node a cluster file (serve --cluster-file) or kubectl can take: the labels,
// and what the device plugin would advertise (whole GPUs not in MIG mode, MIG instances by
// profile). The ops check tests/ops/check-discover-node.sh serves it as a cluster file.
TEST_CASE("discover -o node prints a Node with the labels and the advertised devices",
          "[agent][binary]") {
  const Outcome out =
      runAgent("", "discover --topo-file " + kTopologies + "hgx-a100-nvswitch.topo --mig-file " +
                       kAgentData + "dgx-a100-mig.txt --model 'NVIDIA A100-SXM4-80GB' --gen 7" +
                       " -o node --node-name a100-0");
  CHECK(out.exitCode == 0);
  CHECK_THAT(out.output, ContainsSubstring("apiVersion: v1\nkind: Node\nmetadata:\n"
                                           "  name: \"a100-0\"\n  labels:\n"
                                           "    kubernetes.io/hostname: \"a100-0\"\n"));
  CHECK_THAT(out.output, ContainsSubstring("    gputopo.dev/mig: \"11000000\"\n"));
  CHECK_THAT(out.output, ContainsSubstring("status:\n  allocatable:\n"
                                           "    nvidia.com/gpu: \"6\"\n"
                                           "    nvidia.com/mig-1g.10gb: \"9\"\n"
                                           "    nvidia.com/mig-2g.20gb: \"1\"\n"
                                           "    nvidia.com/mig-3g.40gb: \"1\"\n"));
  // A Node needs a name.
  CHECK(runAgent("", "discover --topo-file " + kTopologies + "g6e-l40sx4-node.topo -o node")
            .exitCode == 64);
  CHECK(runAgent("", "discover --topo-file " + kTopologies + "g6e-l40sx4-node.topo -o yaml")
            .exitCode == 64);
}

TEST_CASE("discover --health prints each GPU's health, reasons and unusual links",
          "[agent][binary][health]") {
  const std::string control = "/tmp/gte-discover-health-" + std::to_string(::getpid());
  std::FILE* file = std::fopen(control.c_str(), "w");
  REQUIRE(file != nullptr);
  std::fputs("recovery 2 0 5\nwidth 6 8 16\nlinkdown 5 17\n", file);
  std::fclose(file);
  const Outcome out = runAgent("GTE_FAKE_NVML_MACHINE=hgx-h100 GTE_FAKE_NVML_HEALTH=" + control +
                                   " LD_LIBRARY_PATH=" + GTE_FAKE_NVML_DIR,
                               "discover --health --gen 7");
  std::remove(control.c_str());
  CHECK(out.exitCode == 0);
  CHECK_THAT(out.output, ContainsSubstring("gputopo.dev/health=11101dd1\n"));
  CHECK_THAT(out.output, ContainsSubstring("gputopo.dev/nvlh=1111011111011110111011011001\n"));
  CHECK_THAT(out.output, ContainsSubstring("# gpu 3: 0 (row remapping failed)\n"));
  CHECK_THAT(out.output, ContainsSubstring("# gpu 5: d (17 of 18 NVSwitch links active)\n"));
  CHECK_THAT(out.output, ContainsSubstring("# gpu 6: d (pcie width x8 of x16)\n"));
  CHECK_THAT(out.output, ContainsSubstring("#   nvlink 0 active to nvswitch replay 0 recovery 5 "
                                           "crc-flit 0 crc-data 0\n"));
  CHECK_THAT(out.output, ContainsSubstring("#   nvlink 17 inactive\n"));
  const Outcome text =
      runAgent("", "discover --health --topo-file " + kTopologies + "g6e-l40sx4-node.topo");
  CHECK(text.exitCode == 64);
}

}  // namespace
}  // namespace gte::agent
