// A watch started only where discovery lists its resource (DeviceTaintRules, docs/dra.md
// "Watches"): not synced until discovery answered; an answer that does not list the resource is
// synced without a watch and asked again later; once listed, the watch starts and the state is
// synced only after its first full list, which reaches the cluster state.
#include "cluster/apiserver/discovered_watch.h"

#include <catch2/catch_test_macros.hpp>

#include <atomic>
#include <optional>
#include <thread>

#include "cluster/apiserver/dra_sinks.h"
#include "cluster/cluster_test_support.h"
#include "kube/fake_transport.h"

using namespace gte::cluster;
using namespace gte::kube;
using gte::Result;
using gte::testing::blockUntilCancelled;
using gte::testing::FakeTransport;
using gte::testing::ok;
using gte::testing::RecordedRequest;
using std::chrono::milliseconds;

TEST_CASE("DiscoveredWatch: started once discovery lists the resource, synced after its list") {
  std::atomic<int> discovery{0};  // 0: 503, 1: served without the resource, 2: with it
  std::atomic<int> onListed{0};
  auto transport = std::make_shared<FakeTransport>();
  transport->onSend = [&](const RecordedRequest& r) -> Result<HttpResponse> {
    if (r.path == "/apis/resource.k8s.io/v1") {
      if (discovery == 0) return HttpResponse{503, "{}"};
      return ok(std::string(R"({"kind":"APIResourceList","groupVersion":"resource.k8s.io/v1",)") +
                R"("resources":[{"name":"resourceslices"})" +
                (discovery == 2 ? R"(,{"name":"devicetaintrules"})" : "") + "]}");
    }
    if (r.path.rfind("/apis/resource.k8s.io/v1/devicetaintrules?", 0) == 0) {
      return ok(R"({"metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"r"},)"
                R"("spec":{"deviceSelector":{},"taint":{"key":"k","effect":"NoSchedule"}}}]})");
    }
    return HttpResponse{404, "{}"};
  };
  transport->onStream = [&](int, const std::string&, const auto&,
                            Cancellation& cancel) -> Result<HttpResponse> {
    return blockUntilCancelled(cancel);
  };
  auto state = std::make_shared<ClusterState>(gte::testing::testPolicy());
  state->enableDra();
  DiscoveredWatch watch(
      transport, kDeviceTaintRules,
      [&](std::function<void()> markListed) {
        ReflectorOptions options;
        options.resource = "devicetaintrules";
        options.path = collectionPath(kDeviceTaintRules);
        return std::make_unique<Reflector>(
            transport,
            reflectorSink<WatchedTaintRule>(readWatchedTaintRule,
                                            makeTaintRuleSink(state, std::move(markListed))),
            options);
      },
      [&] { ++onListed; });

  CHECK_FALSE(watch.discover());  // 503: cannot tell, ask again soon
  CHECK_FALSE(watch.synced());
  CHECK_FALSE(watch.counts().watched);
  CHECK_FALSE(watch.counts().served.has_value());  // unknown: no metric series yet

  discovery = 1;
  CHECK(watch.discover());  // answered: not served
  CHECK(watch.synced());
  CHECK_FALSE(watch.counts().watched);
  CHECK(watch.counts().served == std::optional<bool>(false));
  CHECK(state->draCounts().taintRules == 0);

  discovery = 2;  // the API server upgraded: the next discover() starts the watch
  CHECK(watch.discover());
  CHECK(watch.counts().watched);
  CHECK(watch.counts().served == std::optional<bool>(true));
  const auto deadline = std::chrono::steady_clock::now() + milliseconds(3000);
  while (!watch.synced() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(milliseconds(5));
  CHECK(watch.synced());
  CHECK(state->draCounts().taintRules == 1);
  CHECK(watch.counts().lists == 1);
  CHECK(onListed >= 3);  // two answered discoveries and the list
  std::string why;
  CHECK(watch.healthy(&why));
  watch.stop(milliseconds(2000));
}
