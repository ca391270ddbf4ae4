// Pod-group identity: which group a pod names (annotation, PodGroup, LeaderWorkerSet, Kueue,
// JobSet, indexed Job, first match wins), its size from the pod or an owner object, the per-pod
// level modes, and the per-pod error of every invalid or contradictory group annotation.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <map>
#include <string>
#include <tuple>

#include "group/pod_group.h"
#include "policy/default_policy.h"
#include "support/pod_fixtures.h"

namespace gte {
namespace {

using Catch::Matchers::ContainsSubstring;

// Owner sizes as a watch (or a cluster file) would report them.
class FakeSizes final : public GroupSizeLookup {
 public:
  std::map<std::tuple<GroupOwnerKind, std::string, std::string>, std::int64_t> sizes;
  std::optional<std::int64_t> groupSize(GroupOwnerKind kind, std::string_view ns,
                                        std::string_view name) const override {
    const auto it = sizes.find({kind, std::string(ns), std::string(name)});
    if (it == sizes.end()) return std::nullopt;
    return it->second;
  }
};

PodInfo pod(const std::vector<std::pair<std::string, std::string>>& annotations = {},
            const std::vector<std::pair<std::string, std::string>>& labels = {}) {
  PodInfo p = testing::makeGpuPod("worker-0", 4, annotations);
  p.ns = "train";
  for (const auto& [key, value] : labels)
    p.labels[key] = value;
  return p;
}

PodGroupRef parsed(const PodInfo& p, const GroupSizeLookup* sizes = nullptr) {
  const Policy policy = defaultPolicy();
  auto result = parsePodGroup(p, policy, sizes);
  REQUIRE(result.ok());
  REQUIRE(result->has_value());
  return **result;
}

std::string errorOf(const PodInfo& p, const GroupSizeLookup* sizes = nullptr) {
  const Policy policy = defaultPolicy();
  auto result = parsePodGroup(p, policy, sizes);
  REQUIRE_FALSE(result.ok());
  CHECK(result.error().code == ErrorCode::kInvalidArgument);
  return result.error().message;
}

TEST_CASE("a pod without group keys belongs to no group", "[core][pod-group]") {
  const Policy policy = defaultPolicy();
  auto result = parsePodGroup(pod(), policy, nullptr);
  REQUIRE(result.ok());
  CHECK_FALSE(result->has_value());
  CHECK_FALSE(podGroupKey(pod(), policy).has_value());
  // A Job pod that is not indexed is no group either (no completion index).
  auto job = parsePodGroup(pod({}, {{"batch.kubernetes.io/job-name", "j"}}), policy, nullptr);
  REQUIRE(job.ok());
  CHECK_FALSE(job->has_value());
}

TEST_CASE("the group annotation names the group and group-size its size", "[core][pod-group]") {
  const PodGroupRef ref =
      parsed(pod({{"gputopo.dev/group", "llm-70b"}, {"gputopo.dev/group-size", "16"}}));
  CHECK(ref.source == GroupSource::kAnnotation);
  CHECK(ref.key == "train/annotation/llm-70b");
  CHECK(ref.size == 16);
  CHECK(ref.sizeFrom == "annotation gputopo.dev/group-size");
  CHECK(ref.levels == defaultPolicy().groups.levels);
  CHECK_FALSE(ref.levelsOverridden);
  CHECK(podGroupKey(pod({{"gputopo.dev/group", "llm-70b"}}), defaultPolicy()) ==
        "train/annotation/llm-70b");
}

TEST_CASE("each controller's pods are a group without any annotation", "[core][pod-group]") {
  FakeSizes sizes;
  sizes.sizes[{GroupOwnerKind::kPodGroup, "train", "pg"}] = 8;
  sizes.sizes[{GroupOwnerKind::kJobSet, "train", "js"}] = 12;
  sizes.sizes[{GroupOwnerKind::kJob, "train", "job"}] = 4;

  PodInfo podGroup = pod();
  podGroup.podGroupName = "pg";
  const PodGroupRef pg = parsed(podGroup, &sizes);
  CHECK(pg.key == "train/podgroup/pg");
  CHECK(pg.size == 8);
  CHECK(pg.sizeFrom == "PodGroup train/pg");

  const PodGroupRef lws = parsed(pod({{"leaderworkerset.sigs.k8s.io/size", "4"}},
                                     {{"leaderworkerset.sigs.k8s.io/group-key", "abc123"}}));
  CHECK(lws.key == "train/leaderworkerset/abc123");
  CHECK(lws.size == 4);
  // Without the group-key label: the set's name and the group index.
  const PodGroupRef lwsByIndex = parsed(pod({{"leaderworkerset.sigs.k8s.io/size", "2"}},
                                            {{"leaderworkerset.sigs.k8s.io/name", "vllm"},
                                             {"leaderworkerset.sigs.k8s.io/group-index", "3"}}));
  CHECK(lwsByIndex.key == "train/leaderworkerset/vllm-3");

  const PodGroupRef kueue = parsed(pod({{"kueue.x-k8s.io/pod-group-total-count", "6"}},
                                       {{"kueue.x-k8s.io/pod-group-name", "grp"}}));
  CHECK(kueue.key == "train/kueue/grp");
  CHECK(kueue.size == 6);

  // JobSet pods also carry their Job's labels: the JobSet is the group.
  const PodGroupRef jobset = parsed(pod({}, {{"jobset.sigs.k8s.io/jobset-name", "js"},
                                             {"batch.kubernetes.io/job-name", "js-workers-0"},
                                             {"batch.kubernetes.io/job-completion-index", "0"}}),
                                    &sizes);
  CHECK(jobset.key == "train/jobset/js");
  CHECK(jobset.size == 12);

  const PodGroupRef job = parsed(pod({{"batch.kubernetes.io/job-completion-index", "2"}},
                                     {{"batch.kubernetes.io/job-name", "job"}}),
                                 &sizes);
  CHECK(job.key == "train/job/job");
  CHECK(job.size == 4);
}

TEST_CASE("an owner whose size is not known leaves the size unknown", "[core][pod-group]") {
  PodInfo p = pod();
  p.podGroupName = "pg";
  const PodGroupRef ref = parsed(p);  // no lookup at all
  CHECK_FALSE(ref.size.has_value());
  CHECK(ref.sizeFrom == "PodGroup train/pg not known");
  // group-size states it.
  p.annotations.emplace("gputopo.dev/group-size", "8");
  CHECK(parsed(p).size == 8);
}

TEST_CASE("the first source wins", "[core][pod-group]") {
  PodInfo p = pod({{"gputopo.dev/group", "mine"}, {"kueue.x-k8s.io/pod-group-total-count", "3"}},
                  {{"kueue.x-k8s.io/pod-group-name", "grp"}});
  CHECK(parsed(p).key == "train/annotation/mine");
  // Without group-size the annotation's group takes the size the next source states (Kueue's
  // total count).
  CHECK(parsed(p).size == 3);
  p.annotations.erase("gputopo.dev/group");
  CHECK(parsed(p).key == "train/kueue/grp");
  p.podGroupName = "pg";
  CHECK(parsed(p).key == "train/podgroup/pg");
}

TEST_CASE("per-pod level modes replace the policy's", "[core][pod-group]") {
  const PodGroupRef ref = parsed(
      pod({{"gputopo.dev/group", "g"},
           {"gputopo.dev/group-size", "2"},
           {"gputopo.dev/group-levels",
            "nvidia.com/gpu.clique=preferred, network.topology.nvidia.com/block=required"}}));
  CHECK(ref.levelsOverridden);
  REQUIRE(ref.levels.size() == 4);
  CHECK(ref.levels[0].mode == GroupLevelMode::kPreferred);
  CHECK(ref.levels[1].mode == GroupLevelMode::kPreferred);  // untouched
  CHECK(ref.levels[2].mode == GroupLevelMode::kRequired);
  CHECK(ref.levels[3].mode == GroupLevelMode::kPreferred);
  CHECK_FALSE(ref.sameModel);  // the policy's
}

TEST_CASE("a pod relaxes one GPU model with <prefix>model in group-levels", "[core][pod-group]") {
  const PodGroupRef ref = parsed(pod(
      {{"gputopo.dev/group", "g"},
       {"gputopo.dev/group-size", "2"},
       {"gputopo.dev/group-levels", "gputopo.dev/model=ignore, nvidia.com/gpu.clique=preferred"}}));
  CHECK(ref.sameModel == GroupLevelMode::kIgnored);
  CHECK(ref.levels[0].mode == GroupLevelMode::kPreferred);
  const PodGroupRef back =
      parsed(pod({{"gputopo.dev/group", "g"},
                  {"gputopo.dev/group-size", "2"},
                  {"gputopo.dev/group-levels", "gputopo.dev/model=preferred"}}));
  CHECK(back.sameModel == GroupLevelMode::kPreferred);
  CHECK(back.levels == defaultPolicy().groups.levels);
}

TEST_CASE("invalid or contradictory group annotations are per-pod errors", "[core][pod-group]") {
  FakeSizes sizes;
  sizes.sizes[{GroupOwnerKind::kPodGroup, "train", "pg"}] = 8;
  PodInfo withPodGroup = pod({{"gputopo.dev/group-size", "6"}});
  withPodGroup.podGroupName = "pg";

  struct Case {
    PodInfo pod;
    const char* message;
  };
  const std::vector<Case> cases = {
      {pod({{"gputopo.dev/group", "g"}}),
       "annotation gputopo.dev/group-size: required with gputopo.dev/group"},
      {pod({{"gputopo.dev/group", "g"}, {"gputopo.dev/group-size", "many"}}),
       "annotation gputopo.dev/group-size: want an integer from 1 to 10000; got 'many'"},
      {pod({{"gputopo.dev/group", "g"}, {"gputopo.dev/group-size", "0"}}),
       "annotation gputopo.dev/group-size: want an integer from 1 to 10000; got '0'"},
      {pod({{"gputopo.dev/group", "g"}, {"gputopo.dev/group-size", "10001"}}),
       "want an integer from 1 to 10000; got '10001'"},
      {pod({{"gputopo.dev/group", "g"}, {"gputopo.dev/group-size", "+4"}}), "got '+4'"},
      {pod({{"gputopo.dev/group", "a/b"}, {"gputopo.dev/group-size", "2"}}),
       "annotation gputopo.dev/group: want a name of up to 253 of [A-Za-z0-9-_.]; got 'a/b'"},
      {pod({{"gputopo.dev/group", ""}, {"gputopo.dev/group-size", "2"}}),
       "annotation gputopo.dev/group: want a name"},
      {pod({{"gputopo.dev/group-size", "4"}}),
       "annotation gputopo.dev/group-size: set, but the pod belongs to no group"},
      {pod({{"gputopo.dev/group-levels", "nvidia.com/gpu.clique=preferred"}}),
       "annotation gputopo.dev/group-levels: set, but the pod belongs to no group"},
      {withPodGroup, "annotation gputopo.dev/group-size: says 6, but PodGroup train/pg says 8"},
      {pod({{"leaderworkerset.sigs.k8s.io/size", "four"}},
           {{"leaderworkerset.sigs.k8s.io/group-key", "k"}}),
       "annotation leaderworkerset.sigs.k8s.io/size: want an integer from 1 to 10000; got 'four'"},
      {pod({{"kueue.x-k8s.io/pod-group-total-count", "-1"}},
           {{"kueue.x-k8s.io/pod-group-name", "grp"}}),
       "annotation kueue.x-k8s.io/pod-group-total-count: want an integer"},
      {pod({{"gputopo.dev/group", "g"},
            {"gputopo.dev/group-size", "2"},
            {"gputopo.dev/group-levels", "rack=required"}}),
       "annotation gputopo.dev/group-levels: want comma-separated LABEL=required|preferred|ignore "
       "with LABEL one of the policy's levels (nvidia.com/gpu.clique, "},
      {pod({{"gputopo.dev/group", "g"},
            {"gputopo.dev/group-size", "2"},
            {"gputopo.dev/group-levels", "nvidia.com/gpu.clique=always"}}),
       "got 'nvidia.com/gpu.clique=always'"},
      {pod({{"gputopo.dev/group", "g"},
            {"gputopo.dev/group-size", "2"},
            {"gputopo.dev/group-levels", ""}}),
       "annotation gputopo.dev/group-levels: want comma-separated"},
      {pod({{"gputopo.dev/group", "g"},
            {"gputopo.dev/group-size", "2"},
            {"gputopo.dev/group-levels",
             "nvidia.com/gpu.clique=ignore,nvidia.com/gpu.clique=required"}}),
       "annotation gputopo.dev/group-levels: level nvidia.com/gpu.clique is named twice"},
      {pod({{"gputopo.dev/group", "g"},
            {"gputopo.dev/group-size", "2"},
            {"gputopo.dev/group-levels", "gputopo.dev/model=required"}}),
       "or gputopo.dev/model=preferred|ignore; got 'gputopo.dev/model=required'"},
      {pod({{"gputopo.dev/group", "g"},
            {"gputopo.dev/group-size", "2"},
            {"gputopo.dev/group-levels", "gputopo.dev/model=ignore,gputopo.dev/model=ignore"}}),
       "annotation gputopo.dev/group-levels: gputopo.dev/model is named twice"},
  };
  for (const Case& c : cases) {
    INFO(c.message);
    CHECK_THAT(errorOf(c.pod, &sizes), ContainsSubstring(c.message));
  }
}

TEST_CASE("the cache keeps the keys that identify a group", "[core][pod-group]") {
  CHECK(isGroupLabel("leaderworkerset.sigs.k8s.io/group-key"));
  CHECK(isGroupLabel("jobset.sigs.k8s.io/jobset-name"));
  CHECK(isGroupLabel("batch.kubernetes.io/job-completion-index"));
  CHECK_FALSE(isGroupLabel("app"));
  CHECK(isGroupAnnotation("leaderworkerset.sigs.k8s.io/size"));
  CHECK(isGroupAnnotation("kueue.x-k8s.io/pod-group-total-count"));
  CHECK_FALSE(isGroupAnnotation("kubectl.kubernetes.io/last-applied-configuration"));
}

}  // namespace
}  // namespace gte
