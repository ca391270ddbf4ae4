// The what-if table: one line per pod in arrival order with what it strands, the run's totals,
// the side-by-side layout under a proposed policy, and documents that are not what-if answers.
#include "report/whatif_table.h"

#include <catch2/catch_test_macros.hpp>
#include <string>

using gte::report::whatifTable;

namespace {

std::string sets(int one, int two, int four, int eight) {
  return R"({"1":)" + std::to_string(one) + R"(,"2":)" + std::to_string(two) + R"(,"4":)" +
         std::to_string(four) + R"(,"8":)" + std::to_string(eight) + "}";
}

std::string placed(const std::string& pod, const std::string& node, const std::string& gpus,
                   const std::string& link, int score, int wire, const std::string& before,
                   const std::string& after, const std::string& cluster) {
  return R"({"pod":")" + pod + R"(","gpusRequested":2,"node":")" + node + R"(","gpus":[)" + gpus +
         R"(],"weakestLink":)" + link + R"(,"mig":null,"score":)" + std::to_string(score) +
         R"(,"wireScore":)" + std::to_string(wire) +
         R"(,"feasibleNodes":3,"tiedNodes":1,"strandedGpus":0,"nodeFreeSetsBefore":)" + before +
         R"(,"nodeFreeSetsAfter":)" + after + R"(,"clusterFreeSetsAfter":)" + cluster +
         R"(,"reason":""})";
}

std::string unplaced(const std::string& pod, const std::string& cluster) {
  return R"({"pod":")" + pod +
         R"(","gpusRequested":2,"node":null,"gpus":[],"weakestLink":null,"mig":null,)"
         R"("score":null,"wireScore":null,"feasibleNodes":0,"tiedNodes":0,"strandedGpus":0,)"
         R"("nodeFreeSetsBefore":null,"nodeFreeSetsAfter":null,"clusterFreeSetsAfter":)" +
         cluster + R"(,"reason":"no node fits it now"})";
}

std::string run(const std::string& name, const std::string& hash, const std::string& strategy,
                int placedCount, const std::string& placements, const std::string& after) {
  return R"({"name":")" + name + R"(","hash":")" + hash +
         R"(","demand":{"gpus":2,"mig":[],"minLink":"nvlink","singleNuma":false,"strategy":")" +
         strategy + R"("},"placed":)" + std::to_string(placedCount) +
         R"(,"clusterFreeSetsBefore":)" + sets(12, 5, 1, 0) + R"(,"clusterFreeSetsAfter":)" +
         after + R"(,"placements":[)" + placements + "]}";
}

}  // namespace

TEST_CASE("what-if table: each pod's node, GPUs, scores and what it strands; the totals") {
  // dgx1 holds 6/3/0/0 sets: the first pair leaves 4/2/0/0 (cluster 12/5/1/0 -> 10/4/1/0); the
  // second pair breaks a100's quad (4/2/1/0 -> 2/1/0/0: cluster 8/3/0/0); the third finds none.
  const std::string placements = placed("p-1", "dgx1", "6,7", R"("nvlink")", 88, 10,
                                        sets(6, 3, 0, 0), sets(4, 2, 0, 0), sets(10, 4, 1, 0)) +
                                 "," +
                                 placed("p-2", "a100", "4,5", R"("nvlink")", 86, 10,
                                        sets(4, 2, 1, 0), sets(2, 1, 0, 0), sets(8, 3, 0, 0)) +
                                 "," + unplaced("p-3", sets(8, 3, 0, 0));
  const std::string doc =
      R"({"mode":"pod","pods":3,"nodes":5,"policies":[)" +
      run("running", "82690db9ec84c867", "binpack", 2, placements, sets(8, 3, 0, 0)) + "]}";
  auto table = whatifTable(doc);
  REQUIRE(table.ok());
  CHECK(
      *table ==
      "what-if: 3 pods of 2 GPUs, min-link nvlink, binpack, on 5 nodes\n"
      "running policy 82690db9ec84c867\n"
      "POD  NODE  GPUS  LINK    SCORE  WIRE  TIED  STRANDED  NODE SETS 1/2/4/8   CLUSTER SETS  "
      "REASON\n"
      "p-1  dgx1  6,7   nvlink  88     10    1     0         6/3/0/0 -> 4/2/0/0  10/4/1/0      -\n"
      "p-2  a100  4,5   nvlink  86     10    1     0         4/2/1/0 -> 2/1/0/0  8/3/0/0       -\n"
      "p-3  -     -     -       -      -     -     -         -                   8/3/0/0       "
      "no node fits it now\n"
      "running: placed 2 of 3; the cluster's free all-NVLink sets of 1/2/4/8 GPUs: 12/5/1/0 -> "
      "8/3/0/0\n");
}

TEST_CASE("what-if table: a proposed policy stands beside the running one") {
  const std::string running = run("running", "aaaa", "binpack", 1,
                                  placed("p", "dgx1", "6,7", R"("nvlink")", 88, 10,
                                         sets(6, 3, 0, 0), sets(4, 2, 0, 0), sets(10, 4, 1, 0)),
                                  sets(10, 4, 1, 0));
  const std::string proposed = run("proposed", "bbbb", "spread", 1,
                                   placed("p", "pcie4", "0,1", R"("pix")", 70, 10, sets(4, 0, 0, 0),
                                          sets(2, 0, 0, 0), sets(10, 5, 1, 0)),
                                   sets(10, 5, 1, 0));
  const std::string doc =
      R"({"mode":"pod","pods":1,"nodes":5,"policies":[)" + running + "," + proposed + "]}";
  auto table = whatifTable(doc);
  REQUIRE(table.ok());
  CHECK(*table ==
        "what-if: 1 pod, on 5 nodes\n"
        "running policy aaaa: 2 GPUs, min-link nvlink, binpack\n"
        "proposed policy bbbb: 2 GPUs, min-link nvlink, spread\n"
        "     [running]                                 [proposed]\n"
        "POD  NODE       GPUS  LINK    NODE SETS AFTER  NODE        GPUS  LINK  NODE SETS AFTER\n"
        "p    dgx1       6,7   nvlink  4/2/0/0          pcie4       0,1   pix   2/0/0/0\n"
        "running: placed 1 of 1; the cluster's free all-NVLink sets of 1/2/4/8 GPUs: 12/5/1/0 -> "
        "10/4/1/0\n"
        "proposed: placed 1 of 1; the cluster's free all-NVLink sets of 1/2/4/8 GPUs: 12/5/1/0 -> "
        "10/5/1/0\n");
}

TEST_CASE("what-if table: a CSV run and documents that are not what-if answers") {
  const std::string doc =
      R"({"mode":"csv","pods":1,"nodes":2,"policies":[)" +
      run("running", "h", "binpack", 0, unplaced("web", sets(1, 0, 0, 0)), sets(1, 0, 0, 0)) + "]}";
  auto table = whatifTable(doc);
  REQUIRE(table.ok());
  CHECK(table->starts_with("what-if: 1 pod from the CSV, on 2 nodes\n"));
  CHECK_FALSE(whatifTable(R"({"nodes":[]})").ok());
  CHECK_FALSE(whatifTable("{").ok());
  CHECK_FALSE(whatifTable(R"({"Error":"gpu-topology: cache not synced"})").ok());
}

TEST_CASE("what-if table: a group's members, its plan and the verdict on each domain") {
  const std::string group =
      R"("group":{"size":2,"status":"planned","levels":[],"level":"nvidia.com/gpu.clique",)"
      R"("domains":{"nvidia.com/gpu.clique":"nvl-a"},)"
      R"("reason":"nvidia.com/gpu.clique=nvl-a: best fit, 0 free GPUs left over","verdicts":[)"
      R"({"level":"nvidia.com/gpu.clique","domain":"nvl-a","slots":2,"needed":2,)"
      R"("verdict":"chosen: 0 free GPUs left over"},)"
      R"({"level":"nvidia.com/gpu.clique","domain":"nvl-b","slots":1,"needed":2,)"
      R"("verdict":"holds 1 of the 2 members"}]},)";
  // The group object comes before the placements, as the extender writes it.
  std::string planned = run("running", "96b33cd3081751ec", "binpack", 1,
                            placed("job-1", "a0", "0,1", "\"nvlink\"", 0, 0, sets(4, 2, 1, 0),
                                   sets(2, 1, 0, 0), sets(10, 4, 0, 0)) +
                                "," + unplaced("job-2", sets(10, 4, 0, 0)),
                            sets(10, 4, 0, 0));
  planned.insert(planned.find(R"("clusterFreeSetsBefore")"), group);
  const std::string doc = R"({"mode":"group","pods":2,"nodes":3,"policies":[)" + planned + "]}";
  const auto table = whatifTable(doc);
  REQUIRE(table.ok());
  // No SCORE, WIRE, TIED: the planner places members by domain and best fit, not by score. An
  // unplaced member points to the plan's reason below.
  CHECK(*table ==
        "what-if: a group of 2 pods of 2 GPUs, min-link nvlink, binpack, on 3 nodes\n"
        "running policy 96b33cd3081751ec\n"
        "POD    NODE  GPUS  LINK    STRANDED  NODE SETS 1/2/4/8   CLUSTER SETS  REASON\n"
        "job-1  a0    0,1   nvlink  0         4/2/1/0 -> 2/1/0/0  10/4/0/0      -\n"
        "job-2  -     -     -       -         -                   10/4/0/0      group not placed "
        "(below)\n"
        "running: group planned: nvidia.com/gpu.clique=nvl-a: best fit, 0 free GPUs left over\n"
        "  nvidia.com/gpu.clique=nvl-a: chosen: 0 free GPUs left over\n"
        "  nvidia.com/gpu.clique=nvl-b: holds 1 of the 2 members\n"
        "running: placed 1 of 2; the cluster's free all-NVLink sets of 1/2/4/8 GPUs: 12/5/1/0 -> "
        "10/4/0/0\n");
}

// A MIG pod gets no whole GPU: its GPUS cell read "-", hiding where its instance went.
TEST_CASE("what-if table: a MIG pod's instance stands in the GPUS column") {
  std::string migPlacement = placed("m-1", "a100", "", "null", 91, 10, sets(5, 2, 1, 0),
                                    sets(5, 2, 1, 0), sets(21, 5, 1, 0));
  migPlacement.replace(migPlacement.find(R"("mig":null)"), 10, R"("mig":{"gpu":0,"start":2})");
  const std::string doc =
      R"({"mode":"pod","pods":1,"nodes":5,"policies":[)" +
      run("running", "82690db9ec84c867", "binpack", 1, migPlacement, sets(21, 5, 1, 0)) + "]}";
  auto table = whatifTable(doc);
  REQUIRE(table.ok());
  CHECK(table->find("m-1  a100  MIG on GPU 0 at 2  -     91") != std::string::npos);
}
