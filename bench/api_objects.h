#pragma once
// Node and Pod objects as the API server lists and watches them, for the cluster-cache and watch
// benchmarks: the labels, annotations and status fields real clusters carry, most of which the
// readers skip.
#include <random>
#include <string>
#include <vector>

namespace gte::bench {

// A DGX-H100-like Node: well-known, GPU Feature Discovery and labels-v1 labels (`used` is the
// labels-v1 `used` string), the usual status (conditions, addresses, node info). Without the
// device plugin (a DRA node) it has no `nvidia.com/gpu` capacity.
std::string nodeJson(int i, const std::string& used, bool devicePlugin = true);

// A Pod of a training job: two containers (one with `gpus` GPUs when non-zero), bound to `node`
// (or only nominated to it), its PodScheduled time, and for a third of them kubectl's
// last-applied-configuration annotation.
std::string podJson(int i, const std::string& node, bool nominatedOnly, int gpus,
                    const std::string& scheduledAt);

// GPU g (0-7) of node i of an HGX H100: its UUID, unique per node and GPU, and its PCI bus number
// (two hex digits).
std::string gpuUuid(int node, int gpu);
const char* gpuBus(int gpu);

// The ResourceSlice the NVIDIA DRA driver publishes for node i (`gpu-node-<i>`, its own pool): 8
// H100 devices with the driver's attributes, in a random order (the driver's map order). Device
// `gpu-<k>` is GPU (k + 4) % 8 of the node's topology.
std::string resourceSliceJson(int node, std::mt19937& rng);

// The DeviceClasses the NVIDIA DRA driver's chart installs (gpu, mig, vfio).
std::vector<std::string> nvidiaDeviceClassJsons();

// A ResourceClaim made from a pod's template (`claim-<i>` in `team-<i % 40>`), asking for
// `devices.size()` GPUs; when `allocated`, allocated to those devices (`gpu-<k>`) of `node` and
// reserved for its pod, else pending.
std::string resourceClaimJson(int i, const std::string& node, const std::vector<int>& devices,
                              bool allocated);

}  // namespace gte::bench
