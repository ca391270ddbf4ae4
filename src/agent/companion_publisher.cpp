#include "agent/companion_publisher.h"

#include "kube/api_status.h"
#include "kube/resource_path.h"
#include "log/logger.h"
#include "model/node_info.h"

namespace gte::agent {

CompanionPublisher::CompanionPublisher(kube::ApiTransport& api, std::string node,
                                       std::string driver, std::string labelPrefix)
    : api_(api),
      node_(std::move(node)),
      driver_(std::move(driver)),
      labelPrefix_(std::move(labelPrefix)),
      digestKey_(labelPrefix_ + "companion-digest") {}

Result<bool> CompanionPublisher::remove() {
  auto name = companionSliceName(node_, driver_);
  if (!name.ok()) return name.error();
  auto response = api_.send("DELETE", kube::objectPath(kube::kResourceSlices, "", *name));
  if (!response.ok()) return response.error();
  if (response->status == 404) return false;
  if (!response->success()) return kube::statusError("DELETE resourceslice " + *name, *response);
  return true;
}

Result<CompanionOutcome> CompanionPublisher::publish(const std::vector<CompanionDevice>& devices) {
  if (devices.empty()) {
    auto removed = remove();
    if (!removed.ok()) return removed.error();
    if (*removed) log::info("companion slice deleted: the node has no GPUs", {{"node", node_}});
    return CompanionOutcome::kDeleted;
  }
  auto name = companionSliceName(node_, driver_);
  if (!name.ok()) return name.error();
  auto nodeResponse = api_.send("GET", kube::objectPath(kube::kNodes, "", node_));
  if (!nodeResponse.ok()) return nodeResponse.error();
  if (!nodeResponse->success()) return kube::statusError("GET node " + node_, *nodeResponse);
  auto node = parseNodeJson(nodeResponse->body);
  if (!node.ok()) return node.error();
  if (node->uid.empty()) {
    return Error{ErrorCode::kFailedPrecondition, "node " + node_ + " has no metadata.uid"};
  }
  if (!node->declaresDraOptionalNodeOperations) {
    auto removed = remove();
    if (!removed.ok()) return removed.error();
    log::error(
        "no companion slice: the Node does not declare DRAOptionalNodeOperations in "
        "status.declaredFeatures (kubelet gate off); kubelet would need a DRA plugin for " +
            driver_ + " and pods holding companion devices would not start",
        {{"node", node_}, {"deleted", *removed ? "true" : "false"}});
    return CompanionOutcome::kNodeLacksFeature;
  }
  auto response = api_.send("GET", kube::objectPath(kube::kResourceSlices, "", *name));
  if (!response.ok()) return response.error();
  if (response->status == 404) return write(devices, nullptr, node->uid);
  if (!response->success()) return kube::statusError("GET resourceslice " + *name, *response);
  auto stored = readStoredSlice(response->body, digestKey_);
  if (!stored.ok()) return stored.error();
  lastGeneration_ = std::max(lastGeneration_, stored->generation);
  if (stored->digest == companionDigest(node_, driver_, devices) && stored->skipsNodeOperations) {
    return CompanionOutcome::kUnchanged;
  }
  return write(devices, &*stored, node->uid);
}

Result<CompanionOutcome> CompanionPublisher::write(const std::vector<CompanionDevice>& devices,
                                                   const StoredSlice* stored,
                                                   const std::string& nodeUid) {
  CompanionSlice slice;
  slice.name = *companionSliceName(node_, driver_);
  slice.node = node_;
  slice.nodeUid = nodeUid;
  slice.driver = driver_;
  slice.labelPrefix = labelPrefix_;
  slice.generation = lastGeneration_ + 1;
  slice.devices = devices;
  if (stored != nullptr) slice.resourceVersion = stored->resourceVersion;
  const std::string body = companionSliceJson(slice);
  auto response =
      stored == nullptr
          ? api_.send("POST", kube::collectionPath(kube::kResourceSlices), body)
          : api_.send("PUT", kube::objectPath(kube::kResourceSlices, "", slice.name), body);
  if (!response.ok()) return response.error();
  if (!response->success()) {
    return kube::statusError(
        (stored == nullptr ? "POST resourceslice " : "PUT resourceslice ") + slice.name, *response);
  }
  lastGeneration_ = slice.generation;
  auto written = readStoredSlice(response->body, digestKey_);
  if (!written.ok()) return written.error();
  if (written->skipsNodeOperations) {
    log::info("companion slice published",
              {{"slice", slice.name}, {"generation", std::to_string(slice.generation)}});
    return CompanionOutcome::kWritten;
  }
  log::error(
      "companion slice refused: the API server dropped spec.skipNodeOperations (feature gate "
      "DRAOptionalNodeOperations off); without it kubelet would need a DRA plugin for " +
          driver_ + " and pods holding companion devices would not start. Deleting the slice",
      {{"slice", slice.name}});
  auto removed = remove();
  if (!removed.ok()) return removed.error();
  return CompanionOutcome::kRefused;
}

}  // namespace gte::agent
