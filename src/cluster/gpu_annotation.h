#pragma once
// The pod annotation `<prefix>gpus` that records which GPUs the extender predicted for a pod when
// it bound it: "0,1,2,3" for whole GPUs, "mig:<gpu>:<profile>@<start>" per MIG instance (e.g.
// "mig:0:3g.40gb@4"), "replicas:<count>" for replicas of shared GPUs (docs/sharing.md: they name
// no GPU), comma-separated, whole GPUs first. It is informational for people
// (kubectl describe) and lets a restarted or second replica account the pod exactly as predicted
// instead of predicting again.
#include <string>
#include <string_view>

#include "base/result.h"
#include "core/allocation.h"

namespace gte::cluster {

inline constexpr std::string_view kGpusAnnotation = "gpus";
inline constexpr std::string_view kReplicasToken = "replicas:";

std::string formatGpuAnnotation(const Allocation& allocation);

// The inverse; the result has complete = true. Errors name the bad token.
Result<Allocation> parseGpuAnnotation(std::string_view value);

}  // namespace gte::cluster
