// `nvidia-smi topo -m` / `-mp` text: every layout quirk real captures show is read, and every kind
// of partial or inconsistent capture is rejected with its line number.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>

#include "agent/topo_matrix_text.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::StartsWith;

TopoMatrixText parseOk(const std::string& text, MatrixKind kind = MatrixKind::kBestPath) {
  auto matrix = parseTopoMatrix(text, kind);
  INFO(text);
  REQUIRE(matrix.ok());
  return *matrix;
}

std::string parseError(const std::string& text, MatrixKind kind = MatrixKind::kBestPath) {
  auto matrix = parseTopoMatrix(text, kind);
  INFO(text);
  REQUIRE_FALSE(matrix.ok());
  return matrix.error().message;
}

TEST_CASE("tabs, a header starting with a tab and the current legend", "[agent][topo]") {
  const std::string text =
      "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n"
      "GPU0\t X \tNV4\tPIX\t0-15\t0\t\tN/A\n"
      "GPU1\tNV4\t X \tPXB\t16-31\t1\t\tN/A\n"
      "NIC0\tPIX\tPXB\t X \n"
      "\n"
      "Legend:\n\n  X    = Self\n  NV#  = Connection traversing a bonded set of # NVLinks\n\n"
      "NIC Legend:\n\n  NIC0: mlx5_0\n";
  const TopoMatrixText m = parseOk(text);
  CHECK(m.gpuCount == 2);
  CHECK(m.nvlinks == std::vector<int>{4});
  CHECK(m.pcie == std::vector<PcieLevel>{PcieLevel::kUnknown});
  CHECK(m.numa == std::vector<int>{0, 1});
}

TEST_CASE("K80-era SOC legend and a command line echoed above the matrix", "[agent][topo]") {
  const std::string text =
      "$ nvidia-smi topo -m\n"
      "        GPU0    GPU1    GPU2    mlx4_0  CPU Affinity\n"
      "GPU0     X      PIX     SOC     PHB     0-11\n"
      "GPU1    PIX      X      SOC     PHB     0-11\n"
      "GPU2    SOC     SOC      X      SOC     12-23\n"
      "mlx4_0  PHB     PHB     SOC      X\n"
      "Legend:\n  SOC = Path traverses a socket-level link (e.g. QPI)\n";
  const TopoMatrixText m = parseOk(text);
  CHECK(m.pcie == std::vector<PcieLevel>{PcieLevel::kPix, PcieLevel::kSys, PcieLevel::kSys});
  CHECK(m.numa == std::vector<int>{-1, -1, -1});  // no NUMA Affinity column
}

TEST_CASE("an empty (cgroup-truncated) affinity leaves NUMA unknown, not shifted",
          "[agent][topo]") {
  const std::string text =
      "        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID\n"
      "GPU0     X      NODE                    0               N/A\n"
      "GPU1    NODE     X      0-47            0               N/A\n";
  const TopoMatrixText m = parseOk(text);
  CHECK(m.numa == std::vector<int>{-1, 0});
}

TEST_CASE("multi-node NUMA affinity is unknown", "[agent][topo]") {
  const std::string text =
      "        GPU0    GPU1    CPU Affinity    NUMA Affinity\n"
      "GPU0     X      SYS     0-95            0-1\n"
      "GPU1    SYS      X      0-95            0-1\n";
  CHECK(parseOk(text).numa == std::vector<int>{-1, -1});
}

TEST_CASE("partial and inconsistent captures are rejected with the line", "[agent][topo]") {
  const std::string header = "        GPU0    GPU1    GPU2    CPU Affinity\n";
  SECTION("a missing GPU row") {
    CHECK_THAT(parseError(header + "GPU0 X NV1 SYS 0-1\nGPU1 NV1 X SYS 0-1\n"),
               ContainsSubstring("no row for GPU2 of 3 (partial capture)"));
  }
  SECTION("a row cut short") {
    CHECK_THAT(parseError(header + "GPU0 X NV1 SYS 0-1\nGPU1 NV1 X\n"),
               StartsWith("3: GPU1 row is cut short"));
  }
  SECTION("a row ending in an ellipsis") {
    CHECK_THAT(parseError(header + "GPU0 X NV1 SYS 0-1\nGPU1 NV1 X SYS 0-\xE2\x80\xA6\n"),
               StartsWith("3: GPU1 row ends in an ellipsis"));
  }
  SECTION("asymmetric cells") {
    CHECK_THAT(parseError(header + "GPU0 X NV1 SYS 0\nGPU1 NV2 X SYS 0\nGPU2 SYS SYS X 0\n"),
               StartsWith("3: GPU0/GPU1 asymmetric"));
  }
  SECTION("an unknown cell") {
    CHECK_THAT(parseError(header + "GPU0 X OK SYS 0\nGPU1 OK X SYS 0\nGPU2 SYS SYS X 0\n"),
               StartsWith("2: GPU0/GPU1 cell 'OK'"));
  }
  SECTION("a diagonal that is not X") {
    CHECK_THAT(parseError(header + "GPU0 SYS NV1 SYS 0\nGPU1 NV1 X SYS 0\nGPU2 SYS SYS X 0\n"),
               StartsWith("2: GPU0 diagonal"));
  }
  SECTION("a second row for one GPU") {
    CHECK_THAT(parseError(header + "GPU0 X NV1 SYS 0\nGPU0 X NV1 SYS 0\n"),
               StartsWith("3: second row for GPU0"));
  }
  SECTION("NVLink in a PCIe-only matrix") {
    CHECK_THAT(parseError(header + "GPU0 X NV1 SYS 0\nGPU1 NV1 X SYS 0\nGPU2 SYS SYS X 0\n",
                          MatrixKind::kPcieOnly),
               ContainsSubstring("in a PCIe-only (topo -mp) matrix"));
  }
  SECTION("no header at all") {
    CHECK_THAT(parseError("GPU0 X NV1\nGPU1 NV1 X\n"), ContainsSubstring("no matrix header"));
  }
  SECTION("NV0 is not a link count") {
    CHECK_THAT(parseError(header + "GPU0 X NV0 SYS 0\nGPU1 NV0 X SYS 0\nGPU2 SYS SYS X 0\n"),
               ContainsSubstring("cell 'NV0'"));
  }
}

TEST_CASE("a 16-GPU header with two-digit names", "[agent][topo]") {
  std::string text = "       ";
  for (int i = 0; i < 16; ++i)
    text += " GPU" + std::to_string(i);
  text += "\n";
  for (int i = 0; i < 16; ++i) {
    text += "GPU" + std::to_string(i);
    for (int j = 0; j < 16; ++j)
      text += i == j ? " X" : " NV6";
    text += "\n";
  }
  const TopoMatrixText m = parseOk(text);
  CHECK(m.gpuCount == 16);
  CHECK(m.nvlinks.size() == 120);
  CHECK(m.nvlinks.back() == 6);
}

}  // namespace
}  // namespace gte::agent
