#pragma once
// Keeps this node's companion ResourceSlice (agent/companion_slice.h) in step with the discovery
// through the API client: created when missing, replaced (generation + 1) when its content digest
// differs, deleted when the node has no GPUs or on --cleanup.
//
// The guard: `spec.skipNodeOperations: ["*"]` is what lets kubelet run a pod whose claim holds
// companion devices without a DRA plugin for this driver. An API server without the
// DRAOptionalNodeOperations gate drops the field; pods would then hang at kubelet ("DRA driver
// ... is not registered"). So every write is read back (the API server's answer), and a slice
// without the field is deleted at once, logged and counted (`Refused`); the next pass tries
// again.
//
// The kubelet side: a kubelet without the gate would call a DRA plugin for this driver too. It
// declares the feature in its Node's status.declaredFeatures when the gate is on, so the slice is
// published only while the Node declares DRAOptionalNodeOperations, and deleted otherwise
// (`NodeLacksFeature`).
#include <cstdint>
#include <string>
#include <vector>

#include "agent/companion_slice.h"
#include "base/result.h"
#include "kube/api_transport.h"

namespace gte::agent {

enum class CompanionOutcome {
  kUnchanged,         // the stored slice already says this
  kWritten,           // created or replaced, and the API server kept skipNodeOperations
  kDeleted,           // no GPUs: the slice was removed (or was not there)
  kRefused,           // the API server dropped skipNodeOperations: the slice was deleted again
  kNodeLacksFeature,  // the Node does not declare DRAOptionalNodeOperations: no slice
};

class CompanionPublisher {
 public:
  CompanionPublisher(kube::ApiTransport& api, std::string node, std::string driver,
                     std::string labelPrefix);

  // `devices` empty: delete the slice.
  Result<CompanionOutcome> publish(const std::vector<CompanionDevice>& devices);
  // Deletes the slice; true when there was one.
  Result<bool> remove();

 private:
  Result<CompanionOutcome> write(const std::vector<CompanionDevice>& devices,
                                 const StoredSlice* stored, const std::string& nodeUid);

  kube::ApiTransport& api_;
  std::string node_;
  std::string driver_;
  std::string labelPrefix_;
  std::string digestKey_;
  std::int64_t lastGeneration_ = 0;  // generations only grow, even across a delete
};

}  // namespace gte::agent
