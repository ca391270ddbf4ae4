#pragma once
// Writes a node's GPU topology as labels-v1 (docs/labels.md): the inverse of readLabelsV1. The node
// agent publishes with this and the extender reads with topology_labels.h, so one codec owns the
// format and `readLabelsV1(writeLabelsV1(t)) == t` for every topology the writer accepts.
#include <string>
#include <string_view>

#include "base/result.h"
#include "model/string_map.h"
#include "topology/gpu_topology.h"

namespace gte {

// Every labels-v1 key for `topo`, each prefixed with `prefix`. Optional facts are written only when
// known: `model` and `fabric` when non-empty, `nvl`/`pci` when linksKnown, `mig<i>` for GPUs with
// instances, `gen` when non-zero. Pair strings over 60 characters are chunked. Errors name the
// field: per-GPU vectors whose length is not gpuCount, more than 16 GPUs, a link count over 35, a
// NUMA node over 35, more than 8 MIG instances on a GPU, instances on a GPU without MIG.
Result<StringMap> writeLabelsV1(const GpuTopology& topo, std::string_view prefix);

// The product name as NVIDIA GPU Feature Discovery sanitises it for `nvidia.com/gpu.product`:
// characters outside [A-Za-z0-9-_. ] dropped, whitespace runs joined with '-'; then truncated to 63
// characters and trailing '-', '_', '.' stripped so it is a valid label value.
std::string sanitiseModelName(std::string_view nvmlName);

}  // namespace gte
