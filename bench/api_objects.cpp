#include "api_objects.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>

namespace gte::bench {
namespace {

constexpr std::int64_t kAgentGen = 1764670000;  // 2025-12-02T10:06:40Z, the agent's last write

std::string pairs(char c) {
  return std::string(28, c);
}

constexpr const char* kBus[8] = {"18", "2a", "3a", "5d", "9a", "ab", "ba", "db"};

std::string hex2(unsigned v) {
  constexpr char kHex[] = "0123456789abcdef";
  return {kHex[(v >> 4) & 15], kHex[v & 15]};
}

std::string deviceJson(int node, int g) {
  return R"({"name":"gpu-)" + std::to_string((g + 4) % 8) + R"(","attributes":{)" +
         R"("architecture":{"string":"Hopper"},"brand":{"string":"Nvidia"},)" +
         R"("cudaComputeCapability":{"version":"9.0.0"},"cudaDriverVersion":{"version":"12.8.0"},)" +
         R"("driverVersion":{"version":"570.124.6"},"productName":{"string":"NVIDIA H100 80GB HBM3"},)" +
         R"("resource.kubernetes.io/numaNode":{"int":)" + std::to_string(g / 4) + "}," +
         R"("resource.kubernetes.io/pciBusID":{"string":"0000:)" + kBus[g] + R"(:00.0"},)" +
         R"("resource.kubernetes.io/pcieRoot":{"string":"pci0000:)" +
         hex2(0x15u + 0x11u * static_cast<unsigned>(g)) + R"("},)" +
         R"("type":{"string":"gpu"},"uuid":{"string":")" + gpuUuid(node, g) + R"("}},)" +
         R"("capacity":{"memory":{"value":"81559Mi"}}})";
}

}  // namespace

std::string nodeJson(int i, const std::string& used, bool devicePlugin) {
  const std::string gpus = devicePlugin ? R"("nvidia.com/gpu":"8",)" : "";
  const std::string name = "gpu-node-" + std::to_string(i);
  std::string labels =
      R"("kubernetes.io/hostname":")" + name +
      R"(","kubernetes.io/arch":"amd64",)"
      R"("kubernetes.io/os":"linux","node.kubernetes.io/instance-type":"p5.48xlarge",)"
      R"("topology.kubernetes.io/region":"us-east-1","topology.kubernetes.io/zone":"us-east-1a",)"
      R"("nvidia.com/gpu.present":"true","nvidia.com/gpu.count":"8",)"
      R"("nvidia.com/gpu.product":"NVIDIA-H100-80GB-HBM3","nvidia.com/gpu.memory":"81559",)"
      R"("nvidia.com/cuda.driver.major":"550","nvidia.com/mig.capable":"true",)"
      R"("nvidia.com/gpu.family":"hopper","feature.node.kubernetes.io/pci-10de.present":"true",)";
  labels +=
      R"("gputopo.dev/v":"1","gputopo.dev/n":"8","gputopo.dev/model":"NVIDIA-H100-80GB-HBM3",)"
      R"("gputopo.dev/fabric":"nvsw4","gputopo.dev/nvl":")" +
      pairs('i') + R"(","gputopo.dev/pci":")" + pairs('S') +
      R"(","gputopo.dev/numa":"00001111","gputopo.dev/health":"11111111","gputopo.dev/used":")" +
      used + R"(","gputopo.dev/mig":"00000000","gputopo.dev/gen":")" + std::to_string(kAgentGen) +
      "\"";
  return R"({"metadata":{"name":")" + name + R"(","uid":"8a3c2f6e-0000-4000-8000-)" +
         std::to_string(100000000000 + i) + R"(","resourceVersion":")" + std::to_string(1000 + i) +
         R"(","creationTimestamp":"2025-11-01T00:00:00Z","labels":{)" + labels +
         R"(},"annotations":{"node.alpha.kubernetes.io/ttl":"0","volumes.kubernetes.io/controller-managed-attach-detach":"true"}},)"
         R"("spec":{"podCIDR":"10.244.3.0/24","providerID":"aws:///us-east-1a/i-0123456789abcdef0"},)"
         R"("status":{"capacity":{"cpu":"192","memory":"2113425220Ki",)" +
         gpus +
         R"("pods":"110","ephemeral-storage":"1844532280Ki","hugepages-2Mi":"0"},)"
         R"("allocatable":{"cpu":"191450m","memory":"2113220420Ki",)" +
         gpus +
         R"("pods":"110","ephemeral-storage":"1699927071495","hugepages-2Mi":"0"},)"
         R"("conditions":[{"type":"Ready","status":"True","lastHeartbeatTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2025-11-01T00:00:00Z","reason":"KubeletReady","message":"kubelet is posting ready status"}],)"
         R"("addresses":[{"type":"InternalIP","address":"10.0.3.11"},{"type":"Hostname","address":")" +
         name +
         R"("}],"daemonEndpoints":{"kubeletEndpoint":{"Port":10250}},)"
         R"("nodeInfo":{"machineID":"ec2abc","systemUUID":"ec2abc","bootID":"b","kernelVersion":"6.1.0","osImage":"Debian GNU/Linux 12","containerRuntimeVersion":"containerd://1.7.0","kubeletVersion":"v1.31.0","kubeProxyVersion":"","operatingSystem":"linux","architecture":"amd64"}}})";
}

std::string podJson(int i, const std::string& node, bool nominatedOnly, int gpus,
                    const std::string& scheduledAt) {
  const std::string name = "job-" + std::to_string(i / 8) + "-worker-" + std::to_string(i % 8);
  std::string annotations = R"("prometheus.io/scrape":"true")";
  if (i % 3 == 0) {
    annotations +=
        R"(,"kubectl.kubernetes.io/last-applied-configuration":")" + std::string(1500, 'x') + "\"";
  }
  const std::string gpuLimits =
      gpus > 0 ? R"(,"limits":{"nvidia.com/gpu":")" + std::to_string(gpus) + R"("})" : "";
  return R"({"metadata":{"name":")" + name + R"(","namespace":"team-)" + std::to_string(i % 40) +
         R"(","uid":"5c1f0000-0000-4000-8000-)" + std::to_string(100000000000 + i) +
         R"(","resourceVersion":")" + std::to_string(200000 + i) +
         R"(","creationTimestamp":"2025-11-30T00:00:00Z","labels":{"app":"trainer","job":"j)" +
         std::to_string(i / 8) + R"("},"annotations":{)" + annotations +
         R"(},"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"j","uid":"x","controller":true}]},)"
         R"("spec":{)" +
         (nominatedOnly ? std::string() : R"("nodeName":")" + node + R"(",)") +
         R"("containers":[{"name":"main","image":"registry.example.com/trainer:1.2.3","resources":{"requests":{"cpu":"4","memory":"32Gi"})" +
         gpuLimits +
         R"(}},{"name":"sidecar","image":"registry.example.com/log:1","resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}],)"
         R"("schedulerName":"gpu-scheduler","priority":1000,"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists","effect":"NoSchedule"}]},)"
         R"("status":{"phase":")" +
         (nominatedOnly ? std::string("Pending") : std::string("Running")) + R"(",)" +
         (nominatedOnly ? R"("nominatedNodeName":")" + node + R"(",)" : std::string()) +
         R"("qosClass":"Burstable","conditions":[{"type":"PodScheduled","status":"True","lastProbeTime":null,"lastTransitionTime":")" +
         scheduledAt + R"("}]}})";
}

std::string gpuUuid(int node, int gpu) {
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%08x-0000-4000-8000-0000000000%s",
                static_cast<unsigned>(node), hex2(static_cast<unsigned>(gpu)).c_str());
  return text;
}

const char* gpuBus(int gpu) {
  return kBus[gpu];
}

std::string resourceSliceJson(int i, std::mt19937& rng) {
  std::vector<int> order = {0, 1, 2, 3, 4, 5, 6, 7};
  std::shuffle(order.begin(), order.end(), rng);
  const std::string node = "gpu-node-" + std::to_string(i);
  std::string devices;
  for (const int g : order) {
    if (!devices.empty()) devices += ',';
    devices += deviceJson(i, g);
  }
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":")" +
         node + R"(-gpu.nvidia.com-7xk2p","generateName":")" + node +
         R"(-gpu.nvidia.com-","uid":"7d1e0000-0000-4000-8000-)" + std::to_string(100000000000 + i) +
         R"(","resourceVersion":")" + std::to_string(5000 + i) +
         R"(","creationTimestamp":"2025-11-01T00:00:00Z","ownerReferences":[{"apiVersion":"v1","kind":"Node","name":")" +
         node +
         R"(","uid":"8a3c2f6e","controller":true}]},"spec":{"driver":"gpu.nvidia.com","nodeName":")" +
         node + R"(","pool":{"name":")" + node +
         R"(","generation":1,"resourceSliceCount":1},"devices":[)" + devices + "]}}";
}

std::vector<std::string> nvidiaDeviceClassJsons() {
  std::vector<std::string> out;
  for (const char* type : {"gpu", "mig", "vfio"}) {
    const std::string name =
        std::string(type == std::string("vfio") ? "vfio.gpu" : type) + ".nvidia.com";
    out.push_back(
        R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass","metadata":{"name":")" + name +
        R"(","resourceVersion":"1"},"spec":{"selectors":[{"cel":{"expression":"device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == ')" +
        type + R"('"}}])" +
        (type == std::string("gpu") ? R"(,"extendedResourceName":"nvidia.com/gpu")" : "") + "}}");
  }
  return out;
}

std::string resourceClaimJson(int i, const std::string& node, const std::vector<int>& devices,
                              bool allocated) {
  const std::string pod = "job-" + std::to_string(i / 8) + "-worker-" + std::to_string(i % 8);
  const std::string podUid = "5c1f0000-0000-4000-8000-" + std::to_string(100000000000 + i);
  std::string status;
  if (allocated) {
    std::string results;
    for (const int k : devices) {
      if (!results.empty()) results += ',';
      results += R"({"request":"gpus","driver":"gpu.nvidia.com","pool":")" + node +
                 R"(","device":"gpu-)" + std::to_string(k) + R"("})";
    }
    status =
        R"({"allocation":{"devices":{"results":[)" + results +
        R"(]},"nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In","values":[")" +
        node + R"("]}]}]}},"reservedFor":[{"resource":"pods","name":")" + pod + R"(","uid":")" +
        podUid + R"("}]})";
  } else {
    status = "{}";
  }
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"claim-)" +
         std::to_string(i) + R"(","namespace":"team-)" + std::to_string(i % 40) +
         R"(","uid":"9e2d0000-0000-4000-8000-)" + std::to_string(100000000000 + i) +
         R"(","resourceVersion":")" + std::to_string(300000 + i) +
         R"(","creationTimestamp":"2025-11-30T00:00:00Z","annotations":{"resource.kubernetes.io/pod-claim-name":"gpus"},)"
         R"("ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":")" +
         pod + R"(","uid":")" + podUid +
         R"(","controller":true,"blockOwnerDeletion":true}]},)"
         R"("spec":{"devices":{"requests":[{"name":"gpus","exactly":{"deviceClassName":"gpu.nvidia.com","allocationMode":"ExactCount","count":)" +
         std::to_string(devices.size()) + "}}]}},\"status\":" + status + "}";
}

}  // namespace gte::bench
