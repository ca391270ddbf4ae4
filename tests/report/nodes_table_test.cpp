// The nodes table: one line per node (free GPUs, free all-NVLink sets, links per class), the
// totals, the note when the listing was cut, and documents that are not node listings.
#include "report/nodes_table.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

using gte::report::nodesTable;

namespace {

const std::string kDgx1 =
    R"({"name":"dgx1","topology":"known","model":"Tesla-V100-SXM2-16GB","fabric":"mesh","gpus":8,)"
    R"("usableGpus":8,"freeGpus":6,"free":[0,1,3,4,6,7],"freeSets":{"1":6,"2":3,"4":0,"8":0},)"
    R"("largestNvlinkSet":3,"links":{"nvlink":16,"sys":12}})";
const std::string kGfd =
    R"({"name":"gfd","topology":"unknown","model":"","fabric":"","gpus":2,"usableGpus":2,)"
    R"("freeGpus":0,"free":[],"freeSets":{"1":0,"2":0,"4":0,"8":0},"largestNvlinkSet":0,)"
    R"("links":{"unknown":1}})";

const std::string kA100Mig =
    R"({"name":"a100","topology":"known","model":"NVIDIA-A100-SXM4-80GB","fabric":"nvsw3",)"
    R"("gpus":8,"usableGpus":6,"freeGpus":5,"free":[2,4,5,6,7],)"
    R"("freeSets":{"1":5,"2":2,"4":1,"8":0},"largestNvlinkSet":5,"links":{"nvlink":28},)"
    R"("mig":{"gpus":2,"slices":16,"slicesFree":11,"fitsNow":["1g.10gb","3g.40gb"],)"
    R"("freeDevices":{}}})";

// The table of `doc`, which must be a nodes document.
std::string tableOf(const std::string& doc) {
  auto table = nodesTable(doc);
  REQUIRE(table.ok());
  return *table;
}

}  // namespace

TEST_CASE("nodes table: a line per node and the totals") {
  const std::string doc = R"({"nodes":[)" + kDgx1 + "," + kGfd +
                          R"(],"listed":2,"cached":2,"freeGpus":6,)"
                          R"("freeSets":{"1":6,"2":3,"4":0,"8":0}})";
  CHECK(tableOf(doc) ==
        "NODE  TOPOLOGY  MODEL                 USABLE  FREE  FREE GPUS    SETS 1/2/4/8  LARGEST  "
        "LINKS             MIG\n"
        "dgx1  known     Tesla-V100-SXM2-16GB  8       6     0,1,3,4,6,7  6/3/0/0       3        "
        "nvlink:16 sys:12  -\n"
        "gfd   unknown   -                     2       0     -            0/0/0/0       0        "
        "unknown:1         -\n"
        "2 nodes: 6 free GPUs; free all-NVLink sets of 1/2/4/8 GPUs: 6/3/0/0\n");
}

// MIG capacity was nowhere in the table: a MIG user could not see where a profile fits.
TEST_CASE("nodes table: a MIG node's free slices and the profiles that fit now") {
  const std::string doc = R"({"nodes":[)" + kA100Mig + "," + kDgx1 +
                          R"(],"listed":2,"cached":2,"freeGpus":11,)"
                          R"("freeSets":{"1":11,"2":5,"4":1,"8":0}})";
  const std::string table = tableOf(doc);
  CHECK(table.find("MIG\n") != std::string::npos);
  CHECK(table.find("nvlink:28         11/16 slices free: 1g.10gb,3g.40gb\n") != std::string::npos);
  CHECK(table.find("nvlink:16 sys:12  -\n") != std::string::npos);
}

TEST_CASE("nodes table: a listing cut at its limit says so") {
  const std::string doc = R"({"nodes":[)" + kDgx1 +
                          R"(],"listed":1,"cached":5,"freeGpus":6,)"
                          R"("freeSets":{"1":6,"2":3,"4":0,"8":0}})";
  CHECK(
      tableOf(doc).ends_with("1 node: 6 free GPUs; free all-NVLink sets of 1/2/4/8 GPUs: 6/3/0/0\n"
                             "(1 of the 5 nodes in the cache listed)\n"));
  CHECK_FALSE(nodesTable(R"({"policies":[]})").ok());
  CHECK_FALSE(nodesTable("[").ok());
}

// A time-sliced node was listed as free all-NVLink sets like any other: the SHARED column says
// how its GPUs are shared, and appears only when some listed node shares them.
TEST_CASE("nodes table: a SHARED column for nodes whose GPUs the device plugin shares") {
  const std::string sliced =
      R"({"name":"sliced","topology":"known","model":"NVIDIA-H100-80GB-HBM3","fabric":"nvsw4",)"
      R"("gpus":8,"usableGpus":8,"freeGpus":8,"free":[0,1,2,3,4,5,6,7],)"
      R"("freeSets":{"1":8,"2":0,"4":0,"8":0},"largestNvlinkSet":8,"links":{"nvlink":28},)"
      R"("mig":null,"sharing":{"strategy":"time-slicing","replicas":4,)"
      R"("oneReplicaPerContainer":true,"unreadable":null,"tenants":[2,2,1,0,0,0,0,0]}})";
  const std::string odd =
      R"({"name":"odd","topology":"known","model":"NVIDIA-H100-80GB-HBM3","fabric":"nvsw4",)"
      R"("gpus":8,"usableGpus":8,"freeGpus":8,"free":[0,1,2,3,4,5,6,7],)"
      R"("freeSets":{"1":8,"2":0,"4":0,"8":0},"largestNvlinkSet":8,"links":{"nvlink":28},)"
      R"("mig":null,"sharing":{"strategy":"unknown","replicas":null,)"
      R"("unreadable":"nvidia.com/gpu.sharing-strategy=round-robin"}})";
  const std::string doc = R"({"nodes":[)" + sliced + "," + odd + "," + kDgx1 +
                          R"(],"listed":3,"cached":3,"freeGpus":22,)"
                          R"("freeSets":{"1":22,"2":3,"4":0,"8":0}})";
  const std::string table = tableOf(doc);
  CHECK(table.find("MIG  SHARED\n") != std::string::npos);
  CHECK(table.find("-    time-slicing x4 1/container, tenants 2,2,1,0,0,0,0,0\n") !=
        std::string::npos);
  CHECK(table.find("-    unreadable\n") != std::string::npos);
  CHECK(table.find("nvlink:16 sys:12  -    -\n") != std::string::npos);
  // Without a shared node the table is as before.
  CHECK(tableOf(R"({"nodes":[)" + kDgx1 +
                R"(],"listed":1,"cached":1,"freeGpus":6,"freeSets":{"1":6,"2":3,"4":0,"8":0}})")
            .find("SHARED") == std::string::npos);
}

TEST_CASE("nodes table: a HEALTH column for nodes with marked hardware") {
  const std::string marked =
      R"({"name":"worn","topology":"known","model":"NVIDIA-H100-80GB-HBM3","fabric":"nvsw4",)"
      R"("gpus":8,"usableGpus":7,"freeGpus":7,"free":[0,1,2,3,4,6,7],)"
      R"("freeSets":{"1":7,"2":3,"4":1,"8":0},"largestNvlinkSet":7,"links":{"nvlink":28},)"
      R"("mig":null,"sharing":null,"health":{"failed":[5],"degraded":[0],"cordoned":[],)"
      R"("links":[{"gpus":[2,3],"state":"degraded"},{"gpus":[6,7],"state":"cordoned"}]}})";
  const std::string doc = R"({"nodes":[)" + marked + "," + kDgx1 +
                          R"(],"listed":2,"cached":2,"freeGpus":13,)"
                          R"("freeSets":{"1":13,"2":6,"4":1,"8":0}})";
  const std::string table = tableOf(doc);
  CHECK(table.find("MIG  HEALTH\n") != std::string::npos);
  CHECK(table.find("-    failed 5; degraded 0; links 2-3 degraded,6-7 cordoned\n") !=
        std::string::npos);
  CHECK(table.find("nvlink:16 sys:12  -    -\n") != std::string::npos);
  // Without marked hardware the table is as before.
  CHECK(tableOf(R"({"nodes":[)" + kDgx1 +
                R"(],"listed":1,"cached":1,"freeGpus":6,"freeSets":{"1":6,"2":3,"4":0,"8":0}})")
            .find("HEALTH") == std::string::npos);
}
