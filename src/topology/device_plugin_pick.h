#pragma once
// Predicts which GPUs the NVIDIA device plugin hands a pod: go-gpuallocator's best-effort policy
// (its GetPreferredAllocation). It does not take the best set; it takes the best-scoring
// *partition* of all available GPUs (padded to a multiple of the request size) into groups of that
// size, then the best group of that partition, the first enumerated on ties; size 1 takes the first
// available.
//
// Upstream enumerates every partition (2 million for 16 GPUs and size 2). This gives the same
// answer by memoising the best score of each remaining-GPU subset (branch and bound: a group whose
// best possible rest cannot beat the best found is skipped) and then walking the partitions in
// upstream's enumeration order, taking the first group that can still reach the optimum.
#include "topology/pair_table.h"

namespace gte {

// `available` and `required` are masks of GPU indices (upstream orders devices by index); scores
// are PairTable::pluginScore. Returns 0 when upstream returns nothing (size <= 0, too few
// available, more required than size, or `required` not inside `available`).
GpuMask predictDevicePluginPick(const PairTable& table, GpuMask available, GpuMask required,
                                int size);

}  // namespace gte
