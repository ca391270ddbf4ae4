// Usage from the kubelet: a fake kubelet PodResources gRPC server on a unix socket answers List;
// the agent keeps only NVIDIA GPU and MIG devices and maps their ids onto GPUs and MIG slots.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "agent/nvml_discovery.h"
#include "agent/pod_resources_client.h"
#include "agent/publishable_labels.h"
#include "agent/usage.h"
#include "podresources/v1/api.grpc.pb.h"
#include "policy/default_policy.h"

namespace gte::agent {
namespace {

using Catch::Matchers::ContainsSubstring;

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    addPod(*response, "train", {{"nvidia.com/gpu", {"GPU-a100-3"}}, {"example.com/nic", {"nic0"}}});
    addPod(*response, "infer",
           {{"nvidia.com/mig-2g.20gb", {"MIG-a100-0-gi3"}},
            {"nvidia.com/mig-1g.10gb", {"MIG-a100-0-gi10", "MIG-a100-1-gi9", "MIG-a100-1-gi12"}}});
    return grpc::Status::OK;
  }

 private:
  using Devices = std::vector<std::pair<std::string, std::vector<std::string>>>;
  static void addPod(v1::ListPodResourcesResponse& response, const std::string& name,
                     const Devices& devices) {
    auto* pod = response.add_pod_resources();
    pod->set_name(name);
    pod->set_namespace_("default");
    auto* container = pod->add_containers();
    container->set_name("main");
    for (const auto& [resource, ids] : devices) {
      auto* entry = container->add_devices();
      entry->set_resource_name(resource);
      for (const auto& id : ids) {
        entry->add_device_ids(id);
      }
    }
  }
};

struct KubeletServer {
  FakeKubelet service;
  std::unique_ptr<grpc::Server> server;
  std::string socket;

  KubeletServer() {
    socket = (std::filesystem::temp_directory_path() /
              ("gte-kubelet-" + std::to_string(::getpid()) + ".sock"))
                 .string();
    std::filesystem::remove(socket);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + socket, grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~KubeletServer() {
    server->Shutdown();
    std::filesystem::remove(socket);
  }
};

TEST_CASE("List: only GPU and MIG devices, in order", "[agent][podresources]") {
  KubeletServer kubelet;
  REQUIRE(kubelet.server);
  auto ids = listAllocatedGpuDevices(kubelet.socket);
  REQUIRE(ids.ok());
  CHECK(*ids == std::vector<std::string>{"GPU-a100-3", "MIG-a100-0-gi3", "MIG-a100-0-gi10",
                                         "MIG-a100-1-gi9", "MIG-a100-1-gi12"});
}

TEST_CASE("kubelet usage on the DGX A100 gives the spec's worked example",
          "[agent][podresources]") {
  KubeletServer kubelet;
  REQUIRE(kubelet.server);
  ::setenv("GTE_FAKE_NVML_MACHINE", "dgx-a100-mig", 1);
  auto discovery = discoverWithNvml(std::string(GTE_FAKE_NVML_DIR) + "/libnvidia-ml.so.1");
  REQUIRE(discovery.ok());
  auto ids = listAllocatedGpuDevices(kubelet.socket);
  REQUIRE(ids.ok());
  CHECK(applyDeviceIds(*discovery, *ids).empty());
  auto labels = publishableLabels(*discovery, 1, defaultPolicy());
  REQUIRE(labels.ok());
  CHECK(labels->at("gputopo.dev/used") == "mm010000");
  CHECK(labels->at("gputopo.dev/mig0") == "10u02f03u24f");
  CHECK(labels->at("gputopo.dev/mig1") == "00f01f02u03f04f05u06f");
}

TEST_CASE("no kubelet socket: an error naming it", "[agent][podresources]") {
  auto ids = listAllocatedGpuDevices("/nonexistent/kubelet.sock", std::chrono::milliseconds(500));
  REQUIRE_FALSE(ids.ok());
  CHECK_THAT(ids.error().message, ContainsSubstring("/nonexistent/kubelet.sock"));
}

}  // namespace
}  // namespace gte::agent
