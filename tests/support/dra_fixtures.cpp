#include "support/dra_fixtures.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "dra/resource_slice_json.h"
#include "json/json_reader.h"

namespace gte::testing {
namespace {

template <typename T>
T orThrow(Result<T> result, const std::string& file) {
  if (!result.ok()) throw std::runtime_error(file + ": " + result.error().message);
  return std::move(result).value();
}

}  // namespace

std::string draFixtureText(const std::string& file) {
  const std::string path = std::string(GTE_TEST_DATA_DIR) + "/dra/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

dra::ResourceSliceConstSharedPtr draSlice(const std::string& file) {
  return orThrow(dra::parseResourceSliceJson(draFixtureText(file)), file);
}

std::vector<dra::DeviceClassConstSharedPtr> draClasses(const std::string& file) {
  return orThrow(dra::parseDeviceClassListJson(draFixtureText(file)), file);
}

dra::ResourceClaimConstSharedPtr draClaim(const std::string& file) {
  return orThrow(dra::parseResourceClaimJson(draFixtureText(file)), file);
}

dra::ResourceClaimTemplateConstSharedPtr draTemplate(const std::string& file) {
  return orThrow(dra::parseResourceClaimTemplateJson(draFixtureText(file)), file);
}

}  // namespace gte::testing

namespace gte::testing {

std::string draSliceJson(const std::string& name, const std::string& node, const std::string& pool,
                         const std::string& devices, const std::string& spec, int generation,
                         int sliceCount) {
  std::string out = R"({"metadata":{"name":")" + name + R"("},"spec":{"driver":"gpu.nvidia.com",)";
  if (!node.empty()) out += R"("nodeName":")" + node + R"(",)";
  if (!spec.empty()) out += spec + ",";
  out += R"("pool":{"name":")" + pool + R"(","generation":)" + std::to_string(generation) +
         R"(,"resourceSliceCount":)" + std::to_string(sliceCount) + R"(},"devices":)" + devices +
         "}}";
  return out;
}

std::string draGpuDevice(const std::string& name, int numa, const std::string& pcieRoot,
                         const std::string& extra) {
  std::string out = R"({"name":")" + name + R"(","attributes":{"type":{"string":"gpu"},)" +
                    R"("resource.kubernetes.io/numaNode":{"int":)" + std::to_string(numa) + "}," +
                    R"("resource.kubernetes.io/pcieRoot":{"string":")" + pcieRoot + R"("}})";
  if (!extra.empty()) out += "," + extra;
  out += "}";
  return out;
}

std::string draDgx1Slice(const std::string& node, const std::vector<int>& order) {
  std::string devices = "[";
  for (const int gpu : order) {
    if (devices.size() > 1) devices += ",";
    devices +=
        draGpuDevice("gpu-" + std::to_string(gpu), gpu / 4, "pci0000:" + std::to_string(gpu / 2));
  }
  return draSliceJson(node + "-slice", node, node, devices + "]");
}

dra::ResourceClaimConstSharedPtr draGpuClaim(const std::string& name, int count) {
  auto claim = std::make_shared<dra::ResourceClaim>();
  claim->name = name;
  claim->ns = "ml";
  dra::DeviceRequest request;
  request.name = "gpus";
  dra::DeviceRequestShape shape;
  shape.name = "gpus";
  shape.deviceClassName = "gpu.nvidia.com";
  shape.count = count;
  request.alternatives.push_back(shape);
  claim->spec.requests.push_back(request);
  return claim;
}

std::string draSharedH100SliceJson() {
  std::string text = draFixtureText("hgx-h100-slice.json");
  const std::size_t at = text.find("\"capacity\": {");
  if (at == std::string::npos) throw std::runtime_error("the H100 slice lists no capacity");
  text.insert(at, "\"allowMultipleAllocations\": true, ");
  return text;
}

dra::ResourceClaimConstSharedPtr draMemoryClaim(const std::string& name, const std::string& memory,
                                                const std::string& heldBy) {
  std::string json = R"({"metadata":{"name":")" + name + R"(","namespace":"ml","uid":"uid-)" +
                     name + R"("},
    "spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com",
      "capacity":{"requests":{"memory":")" +
                     memory + R"("}}}}]}})";
  if (!heldBy.empty()) {
    json += R"(,"status":{"allocation":{"devices":{"results":[{"request":"gpu",
      "driver":"gpu.nvidia.com","pool":"hgx-h100-a","device":"gpu-1","shareID":"s-)" +
            name + R"(","consumedCapacity":{"memory":")" + memory + R"("}}]}},
      "reservedFor":[{"resource":"pods","name":")" +
            heldBy + R"(","uid":"uid-)" + heldBy + R"("}]})";
  }
  json += "}";
  return orThrow(dra::parseResourceClaimJson(json), "claim");
}

}  // namespace gte::testing

#include "dra/resource_claim.h"
#include "dra_placement/dra_node_state.h"

namespace gte::testing {

DraCluster::DraCluster()
    : classes(std::make_shared<const dra::ClassCatalog>(draClasses("nvidia-device-classes.json"))),
      objects(std::make_shared<dra::DraObjectMaps>(classes)) {}

void DraCluster::addSlice(const std::string& file) {
  slices.upsert(draSlice(file));
}

void DraCluster::addSliceJson(const std::string& json) {
  slices.upsert(orThrow(dra::parseResourceSliceJson(json), "slice"));
}

void DraCluster::addClaim(const dra::ResourceClaimConstSharedPtr& claim) {
  objects->add(claim);
  allocated.addClaim(*claim);
}

NodeStateConstSharedPtr DraCluster::nodeState(const NodeInfo& node, const Policy& policy,
                                              NodeChargesConstSharedPtr charges) const {
  const NodeStateConstSharedPtr read = readNodeState(node, policy);
  auto dra = buildDraNodeState(node, read->topology, slices, allocated, classes);
  return chargeNodeState(*read, std::move(charges), policy, std::move(dra));
}

PodInfo makeClaimPod(const std::string& name, const std::string& ns,
                     const std::vector<std::pair<std::string, std::string>>& claims,
                     const std::vector<std::pair<std::string, std::string>>& templates,
                     const std::vector<std::pair<std::string, std::string>>& statuses) {
  PodInfo pod;
  pod.name = name;
  pod.ns = ns;
  pod.uid = "uid-" + name;
  for (const auto& [entry, claim] : claims)
    pod.resourceClaims.push_back({entry, claim, ""});
  for (const auto& [entry, tmpl] : templates)
    pod.resourceClaims.push_back({entry, "", tmpl});
  for (const auto& [entry, claim] : statuses)
    pod.resourceClaimStatuses.push_back({entry, claim});
  return pod;
}

}  // namespace gte::testing
