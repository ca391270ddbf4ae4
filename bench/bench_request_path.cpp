// The request path at cluster scale: filter + prioritize over 5,000 nodes in both cache modes,
// through ExtenderService (everything but the socket). Prints medians; see docs/performance.md.
//
//   build/bin/bench_request_path [nodes] [iterations] [names|whatif]
// With `names`, only the NodeNames (nodeCacheCapable: true) figures are measured: quicker, and the
// form to profile (`perf record -g build/bin/bench_request_path 5000 2000 names`). With `whatif`,
// the what-if (one pod, 100 pods, one pod under a proposed policy) and the node listing on the same
// snapshot, through ExtenderService as POST /whatif and GET /nodes reach it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/pod_demand.h"
#include "dra/allocated_devices.h"
#include "dra/dra_objects.h"
#include "dra/slice_index.h"
#include "filter/filter_nodes.h"
#include "policy/default_policy.h"
#include "prioritize/prioritize_nodes.h"
#include "service/cluster_backend.h"
#include "service/extender_service.h"
#include "service/placement_recorder.h"
#include "snapshot/cluster_snapshot_builder.h"
#include "support/snapshot_backend.h"
#include "wire/extender_args.h"
#include "wire/extender_results.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Machine {
  const char* model;
  const char* fabric;
  const char* nvl;
  const char* pci;
  const char* numa;
};

// Real topologies (labels-v1 encodings of the captures in tests/data/topologies).
const Machine kMachines[] = {
    {"Tesla-V100-SXM2-16GB", "mesh", "1122000210200200100001112212", "PHHSSSSHHSSSSPSSSSSSSSPHHHHP",
     "00001111"},
    {"NVIDIA-H100-80GB-HBM3", "nvsw4", "iiiiiiiiiiiiiiiiiiiiiiiiiiii",
     "NNNSSSSNNSSSSNSSSSSSSSNNNNNN", "00001111"},
    {"NVIDIA-RTX-A6000", "none", "0000000000000000000000000000", "PHSSSSSHSSSSSSSSSSSPHHHHHHPHP",
     "00001111"},
};

std::string nodeJson(int i, std::mt19937& rng) {
  const Machine& m = kMachines[i % 3];
  std::string used(8, '0');
  const int busy = static_cast<int>(rng() % 8);
  for (int b = 0; b < busy; ++b)
    used[rng() % 8] = '1';
  std::string pci = m.pci;
  pci.resize(28, 'S');
  const std::string name = "gpu-node-" + std::to_string(i);
  std::string images;
  for (int k = 0; k < 12; ++k) {
    images +=
        std::string(k ? "," : "") + R"({"names":["registry.example/ml/image-)" + std::to_string(k) +
        R"(@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"],"sizeBytes":123456789})";
  }
  return R"({"metadata":{"name":")" + name + R"(","uid":"uid-)" + std::to_string(i) +
         R"(","resourceVersion":"12345","labels":{"kubernetes.io/hostname":")" + name +
         R"(","gputopo.dev/v":"1","gputopo.dev/n":"8","gputopo.dev/model":")" + m.model +
         R"(","gputopo.dev/fabric":")" + m.fabric + R"(","gputopo.dev/nvl":")" + m.nvl +
         R"(","gputopo.dev/pci":")" + pci + R"(","gputopo.dev/numa":")" + m.numa +
         R"(","gputopo.dev/health":"11111111","gputopo.dev/used":")" + used +
         R"(","gputopo.dev/mig":"nnnnnnnn","gputopo.dev/gen":"1764670000"}},)"
         R"("spec":{"podCIDR":"10.244.3.0/24"},"status":{"capacity":{"cpu":"96","memory":"2113425220Ki",)"
         R"("nvidia.com/gpu":"8","pods":"110"},"allocatable":{"cpu":"95500m","memory":"2113220420Ki",)"
         R"("nvidia.com/gpu":"8","pods":"110"},"conditions":[{"type":"Ready","status":"True",)"
         R"("lastHeartbeatTime":"2026-07-01T10:00:00Z","lastTransitionTime":"2026-07-01T10:00:00Z",)"
         R"("reason":"KubeletReady","message":"kubelet is posting ready status"}],)"
         R"("addresses":[{"type":"InternalIP","address":"10.0.0.11"}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},)"
         R"("nodeInfo":{"machineID":"m","systemUUID":"s","bootID":"b","kernelVersion":"6.1.0",)"
         R"("osImage":"Debian GNU/Linux 12","containerRuntimeVersion":"containerd://1.7.0",)"
         R"("kubeletVersion":"v1.37.2","operatingSystem":"linux","architecture":"amd64"},"images":[)" +
         images + "]}}";
}

// A pod without GPU demand: with the chart's extender.dra every pod reaches the extender
// (docs/dra.md, "Install").
const std::string kCpuPod =
    R"({"metadata":{"name":"web-0","namespace":"ml","uid":"c1"},"spec":{"containers":[{"name":"m",)"
    R"("resources":{"requests":{"cpu":"2","memory":"4Gi"},"limits":{"memory":"4Gi"}}}]}})";

const std::string kPod =
    R"({"metadata":{"name":"train-0","namespace":"ml","uid":"p1"},"spec":{"containers":[{"name":"m",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}}]}})";

template <typename F>
double millis(F&& f) {
  const auto t0 = Clock::now();
  f();
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of this thread: on the shared 2-core VM other processes preempt the benchmark, which
// inflates wall time but not this.
double threadCpuMillis() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

struct Stats {
  double median;
  double p90;
  double cpuMedian;
};

template <typename F>
Stats repeat(int iterations, F&& f) {
  std::vector<double> t;
  std::vector<double> cpu;
  for (int i = 0; i < iterations; ++i) {
    const double c0 = threadCpuMillis();
    t.push_back(millis(f));
    cpu.push_back(threadCpuMillis() - c0);
  }
  std::sort(t.begin(), t.end());
  std::sort(cpu.begin(), cpu.end());
  return {t[t.size() / 2], t[std::min(t.size() - 1, t.size() * 9 / 10)], cpu[cpu.size() / 2]};
}

// Two variants of one step, alternated call by call so that both see the same machine (the shared
// VM's load changes from second to second); the ratio of their medians is what a change costs.
template <typename F, typename G>
std::pair<Stats, Stats> repeatAlternating(int iterations, F&& f, G&& g) {
  std::vector<double> tf, tg, cf, cg;
  for (int i = 0; i < iterations; ++i) {
    double c0 = threadCpuMillis();
    tf.push_back(millis(f));
    cf.push_back(threadCpuMillis() - c0);
    c0 = threadCpuMillis();
    tg.push_back(millis(g));
    cg.push_back(threadCpuMillis() - c0);
  }
  const auto stats = [](std::vector<double>& t, std::vector<double>& c) {
    std::sort(t.begin(), t.end());
    std::sort(c.begin(), c.end());
    return Stats{t[t.size() / 2], t[std::min(t.size() - 1, t.size() * 9 / 10)], c[c.size() / 2]};
  };
  return {stats(tf, cf), stats(tg, cg)};
}

void report(const char* what, Stats s) {
  std::printf("%-44s median %8.2f ms   p90 %8.2f ms   cpu median %8.3f ms\n", what, s.median, s.p90,
              s.cpuMedian);
}

// `field`: "count" (pods one after another) or "groupSize" (one group, the group planner).
std::string whatifBody(int gpus, int count, const std::string& policy = {},
                       const char* field = "count") {
  std::string body = R"({"pod":{"metadata":{"name":"w","namespace":"ml"},"spec":{"containers":)"
                     R"([{"name":"m","resources":{"limits":{"nvidia.com/gpu":")" +
                     std::to_string(gpus) + R"("}}}]}},")" + field + R"(":)" +
                     std::to_string(count);
  if (!policy.empty()) body += R"(,"policy":")" + policy + R"(")";
  return body + "}";
}

void benchWhatif(gte::ClusterBackend& backend, const gte::PolicyConstSharedPtr& policy,
                 int iterations) {
  gte::ExtenderService service([policy] { return policy; }, &backend, nullptr,
                               gte::WhatifLimits{1000, std::chrono::minutes(1)});
  const auto run = [&service](const std::string& body) {
    if (service.whatif(body).status != 200) std::abort();
  };
  report("whatif, 1 pod of 2 GPUs", repeat(iterations, [&] { run(whatifBody(2, 1)); }));
  report("whatif, 1 pod of 8 GPUs", repeat(iterations, [&] { run(whatifBody(8, 1)); }));
  report("whatif, 100 pods of 2 GPUs", repeat(iterations, [&] { run(whatifBody(2, 100)); }));
  report("whatif, 1 pod, running + proposed policy",
         repeat(iterations, [&] { run(whatifBody(2, 1, "strategy: spread\\n")); }));
  report("whatif, a group of 16 pods of 4 GPUs",
         repeat(iterations, [&] { run(whatifBody(4, 16, {}, "groupSize")); }));
  report("whatif, a group of 64 pods of 8 GPUs",
         repeat(iterations, [&] { run(whatifBody(8, 64, {}, "groupSize")); }));
  report("nodes, every node", repeat(iterations, [&] {
           if (service.nodes({}).status != 200) std::abort();
         }));
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 5000;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 15;
  const bool whatifOnly = argc > 3 && std::string(argv[3]) == "whatif";
  const bool namesOnly = whatifOnly || (argc > 3 && std::string(argv[3]) == "names");
  std::mt19937 rng(42);
  std::vector<std::string> nodes;
  nodes.reserve(n);
  for (int i = 0; i < n; ++i)
    nodes.push_back(nodeJson(i, rng));

  std::string fullBody = R"({"Pod":)" + kPod + R"(,"Nodes":{"metadata":{},"items":[)";
  std::string namesBody = R"({"Pod":)" + kPod + R"(,"Nodes":null,"NodeNames":[)";
  for (int i = 0; i < n; ++i) {
    fullBody += (i ? "," : "") + nodes[i];
    namesBody += std::string(i ? "," : "") + "\"gpu-node-" + std::to_string(i) + "\"";
  }
  fullBody += R"(]},"NodeNames":null})";
  namesBody += "]}";
  std::printf("%d nodes, full-Node body %.1f MB, names body %.1f KB, %d iterations\n", n,
              static_cast<double>(fullBody.size()) / 1e6,
              static_cast<double>(namesBody.size()) / 1e3, iterations);

  auto policy = std::make_shared<const gte::Policy>(gte::defaultPolicy());
  gte::ExtenderService fullMode([policy] { return policy; }, nullptr, nullptr);

  if (!namesOnly) {
    report("parse ExtenderArgs (full-Node body)", repeat(iterations, [&] {
             auto args = gte::wire::parseExtenderArgs(fullBody);
             if (!args) std::abort();
           }));
    std::printf("%-44s %8.2f ms\n", "filter, full-Node, first call (cold cache)",
                millis([&] { (void)fullMode.filter(fullBody); }));
    report("filter, full-Node (warm node cache)",
           repeat(iterations, [&] { (void)fullMode.filter(fullBody); }));
    report("prioritize, full-Node (warm node cache)",
           repeat(iterations, [&] { (void)fullMode.prioritize(fullBody); }));
  }

  gte::ClusterSnapshotBuilder builder(policy);
  // As with --dra: the snapshot carries DRA objects (no slice serves these nodes), so every pod's
  // demand is resolved against them.
  const gte::dra::SliceIndex noSlices;
  const gte::dra::AllocatedDevices noDevices;
  builder.setDra(&noSlices, &noDevices, std::make_shared<const gte::dra::DraObjectMaps>(nullptr));
  const double buildMs = millis([&] {
    for (const auto& node : nodes)
      builder.upsertNode(*gte::parseNodeJson(node), {});
    builder.setSynced(true);
  });
  gte::ClusterSnapshotConstSharedPtr snapshot;
  const double snapMs = millis([&] { snapshot = builder.build(); });
  std::printf("%-44s %8.2f ms (+ %.2f ms parsing nodes)\n", "snapshot build, all nodes", snapMs,
              buildMs);
  gte::testing::SnapshotBackend backend(snapshot);
  if (whatifOnly) {
    benchWhatif(backend, policy, iterations);
    return 0;
  }
  // As the binary runs it: prioritize records each pod's decision for placement regret.
  gte::PlacementRecorder placements(nullptr);
  gte::ExtenderService namesMode([policy] { return policy; }, &backend, nullptr, {}, &placements);
  report("filter, NodeNames (snapshot)",
         repeat(iterations, [&] { (void)namesMode.filter(namesBody); }));
  report("prioritize, NodeNames (snapshot)",
         repeat(iterations, [&] { (void)namesMode.prioritize(namesBody); }));
  report("filter + prioritize, NodeNames", repeat(iterations, [&] {
           (void)namesMode.filter(namesBody);
           (void)namesMode.prioritize(namesBody);
         }));
  // The lookups of a request's names are kept for the next request with the same names on a
  // snapshot of the same node shards (service/resolution_memo.h): every request above after the
  // first finds them. A busy cluster publishes snapshots between pods, or between a pod's filter
  // and prioritize, with a node changed (a pod bound there): two snapshots whose shards differ,
  // alternated pod by pod (the filter misses the memo, prioritize finds it) or request by request
  // (every request misses and keeps its own lookups). The node is removed and added back, so both
  // snapshots hold the same nodes.
  const gte::NodeInfo first = *gte::parseNodeJson(nodes.front());
  builder.removeNode(first.name);
  builder.upsertNode(first, {});
  const gte::ClusterSnapshotConstSharedPtr other = builder.build();
  bool odd = false;
  gte::testing::SnapshotBackend changing(
      gte::testing::SnapshotBackend::Source([&] { return odd ? other : snapshot; }));
  gte::ExtenderService changingMode([policy] { return policy; }, &changing, nullptr, {},
                                    &placements);
  report("filter + prioritize, new snapshot per pod", repeat(iterations, [&] {
           odd = !odd;
           (void)changingMode.filter(namesBody);
           (void)changingMode.prioritize(namesBody);
         }));
  report("filter + prioritize, new snapshot per request", repeat(iterations, [&] {
           odd = !odd;
           (void)changingMode.filter(namesBody);
           odd = !odd;
           (void)changingMode.prioritize(namesBody);
         }));
  // What a pod without GPU demand costs when every pod is sent (extender.dra), alternated with
  // the 2-GPU pod's request so both see the same machine.
  const std::string cpuBody =
      R"({"Pod":)" + kCpuPod + namesBody.substr(namesBody.find(R"(,"Nodes":null)"));
  const auto [gpuRequest, cpuRequest] = repeatAlternating(
      iterations,
      [&] {
        (void)namesMode.filter(namesBody);
        (void)namesMode.prioritize(namesBody);
      },
      [&] {
        if (namesMode.filter(cpuBody).status != 200) std::abort();
        (void)namesMode.prioritize(cpuBody);
      });
  report("filter + prioritize, 2-GPU pod (alternated)", gpuRequest);
  report("filter + prioritize, CPU-only pod (alternated)", cpuRequest);

  // DRA off (no setDra, as without --dra) against DRA on (the snapshot above), alternated: the
  // same 2-GPU device-plugin pod on the same nodes.
  gte::ClusterSnapshotBuilder offBuilder(policy);
  for (const auto& node : nodes)
    offBuilder.upsertNode(*gte::parseNodeJson(node), {});
  offBuilder.setSynced(true);
  gte::testing::SnapshotBackend offBackend(offBuilder.build());
  gte::PlacementRecorder offPlacements(nullptr);
  gte::ExtenderService draOff([policy] { return policy; }, &offBackend, nullptr, {},
                              &offPlacements);
  const auto [draOnRequest, draOffRequest] = repeatAlternating(
      iterations,
      [&] {
        (void)namesMode.filter(namesBody);
        (void)namesMode.prioritize(namesBody);
      },
      [&] {
        (void)draOff.filter(namesBody);
        (void)draOff.prioritize(namesBody);
      });
  report("filter + prioritize, 2-GPU pod, DRA on (alt.)", draOnRequest);

  // Shared GPUs (docs/sharing.md): a quarter of the nodes time-sliced 4 ways with tenants. The
  // 2-GPU pod that accepts shared GPUs (answered from the precomputed answers on every node)
  // against the same pod asking for exclusive GPUs (which reads each node's sharing), alternated.
  gte::ClusterSnapshotBuilder sharedBuilder(policy);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    gte::NodeInfo node = *gte::parseNodeJson(nodes[i]);
    if (i % 4 == 0) {
      node.labels.insert_or_assign("nvidia.com/gpu.sharing-strategy", std::string("time-slicing"));
      node.labels.insert_or_assign("nvidia.com/gpu.replicas", std::string("4"));
      node.labels.insert_or_assign(policy->labelPrefix + "tenants", std::string("01230123"));
    }
    sharedBuilder.upsertNode(std::move(node), {});
  }
  sharedBuilder.setSynced(true);
  gte::testing::SnapshotBackend sharedBackend(sharedBuilder.build());
  gte::PlacementRecorder sharedPlacements(nullptr);
  gte::ExtenderService sharedMode([policy] { return policy; }, &sharedBackend, nullptr, {},
                                  &sharedPlacements);
  std::string exclusivePod = kPod;
  exclusivePod.insert(exclusivePod.find(R"("uid":"p1")") + 10,
                      R"(,"annotations":{"gputopo.dev/isolation":"exclusive"})");
  const std::string exclusiveBody =
      R"({"Pod":)" + exclusivePod + namesBody.substr(namesBody.find(R"(,"Nodes":null)"));
  const auto [sharedRequest, exclusiveRequest] = repeatAlternating(
      iterations,
      [&] {
        (void)sharedMode.filter(namesBody);
        (void)sharedMode.prioritize(namesBody);
      },
      [&] {
        const gte::Reply kept = sharedMode.filter(exclusiveBody);
        if (kept.body.find("GPUs shared by time-slicing") == std::string::npos) std::abort();
        (void)sharedMode.prioritize(exclusiveBody);
      });
  report("filter + prioritize, 1/4 shared, 2-GPU pod", sharedRequest);
  report("filter + prioritize, 1/4 shared, exclusive pod", exclusiveRequest);
  report("filter + prioritize, 2-GPU pod, DRA off (alt.)", draOffRequest);

  // The phases of one NodeNames request, each alone.
  const auto args = gte::wire::parseExtenderArgs(namesBody);
  const auto demand = gte::parsePodDemand(args->pod, *policy);
  // As resolveNodes builds them: each state with its precomputed answers for plain demands.
  std::vector<gte::NodeCandidate> candidates;
  {
    snapshot->nodes.findAll(*args->nodeNames, [&](std::size_t i, gte::NodeStateShard::Found f) {
      candidates.push_back({(*args->nodeNames)[i], f.state, {}, f.plain});
    });
  }
  // The same without the answers: what every demand they do not cover costs.
  std::vector<gte::NodeCandidate> unanswered = candidates;
  for (gte::NodeCandidate& c : unanswered)
    c.plain = nullptr;
  report("  phase: parse the names body", repeat(iterations, [&] {
           if (!gte::wire::parseExtenderArgs(namesBody)) std::abort();
         }));
  report("  phase: look every name up in the snapshot", repeat(iterations, [&] {
           snapshot->nodes.findAll(*args->nodeNames, [](std::size_t, gte::NodeStateShard::Found f) {
             if (f.state == nullptr) std::abort();
           });
         }));
  report("  phase: filterNodes (precomputed answers)",
         repeat(iterations, [&] { (void)gte::filterNodes(demand, candidates, *policy); }));
  report("  phase: filterNodes (checkFit per node)",
         repeat(iterations, [&] { (void)gte::filterNodes(demand, unanswered, *policy); }));
  // As the service calls it: the snapshot's scarce-set holders, counted when it was built.
  const gte::ScarceSets* scarce = &snapshot->scarceSets;
  const auto prioritize = [&](const std::vector<gte::NodeCandidate>& list,
                              gte::PlacementOffer* offer = nullptr) {
    return gte::prioritizeNodes(&*demand, list, *policy, nullptr, offer, scarce);
  };
  const gte::HostScores scores = prioritize(candidates);
  report("  phase: prioritizeNodes (precomputed answers)",
         repeat(iterations, [&] { (void)prioritize(candidates); }));
  report("  phase: prioritizeNodes (scoreTerms per node)",
         repeat(iterations, [&] { (void)prioritize(unanswered); }));
  report("  phase: prioritizeNodes, holders counted per request",
         repeat(iterations, [&] { (void)gte::prioritizeNodes(&*demand, candidates, *policy); }));
  // Placement regret's share of a request, alternated with the same request without it: the
  // offer taken in prioritize's loop, and the decision recorded (docs/topology-health.md).
  gte::ExtenderService withoutRegret([policy] { return policy; }, &backend, nullptr);
  const auto [plainRequest, regretRequest] = repeatAlternating(
      iterations,
      [&] {
        (void)withoutRegret.filter(namesBody);
        (void)withoutRegret.prioritize(namesBody);
      },
      [&] {
        (void)namesMode.filter(namesBody);
        (void)namesMode.prioritize(namesBody);
      });
  report("filter + prioritize, without regret", plainRequest);
  report("filter + prioritize, with regret", regretRequest);
  std::printf("%-44s %8.3f (cpu %.3f)\n", "  regret's cost, ratio of medians",
              regretRequest.median / plainRequest.median,
              regretRequest.cpuMedian / plainRequest.cpuMedian);
  gte::PlacementOffer offer;
  const auto [plainLoop, offerLoop] = repeatAlternating(
      iterations, [&] { (void)prioritize(candidates); },
      [&] { (void)prioritize(candidates, &offer); });
  report("  phase: prioritizeNodes without the offer", plainLoop);
  report("  phase: prioritizeNodes with the offer", offerLoop);
  const gte::PlacementDecision decision{2,
                                        {},
                                        offer.feasibleBest,
                                        offer.topWorst,
                                        std::string(offer.bestNode),
                                        std::string(offer.topNode),
                                        offer.healthyBest,
                                        offer.avoidedAny};
  report("  phase: record the decision",
         repeat(iterations, [&] { placements.decided("p1", decision); }));
  std::vector<gte::wire::HostPriority> list;
  for (const gte::HostScore& score : scores)
    list.push_back({score.host, score.wire});
  report("  phase: write the HostPriorityList",
         repeat(iterations, [&] { (void)gte::wire::writeHostPriorityList(list); }));
  const double oneNode = millis([&] {
    gte::NodeCharges charges;
    charges.put(gte::PodCharge{"pod", true, gte::Allocation{true, {0, 1}, {}}, 0});
    builder.setCharges("gpu-node-7", std::make_shared<const gte::NodeCharges>(charges));
    snapshot = builder.build();
  });
  std::printf("%-44s %8.3f ms\n", "snapshot rebuild after one node's usage change", oneNode);
  return 0;
}
