#pragma once
// Predicts which GPUs the NVIDIA device plugin hands a pod: go-gpuallocator's best-effort policy
// (its GetPreferredAllocation). It does not take the best set; it takes the best-scoring
// *partition* of all available GPUs (padded to a multiple of the request size) into groups of that
// size, then the best group of that partition, the first enumerated on ties; size 1 takes the first
// available.
//
// Upstream enumerates every partition (2 million for 16 GPUs and size 2). This gives the same
// answer without doing so: up to 8 available GPUs by memoising the best score of each
// remaining-GPU subset, above that first by a depth-first search in upstream's order with a bound
// and mirror cuts (GPUs or blocks of GPUs that a swap maps onto earlier ones), which proves the
// first best partition on switch hierarchies such as the DGX-2's in about a thousand groups.
#include "topology/pair_table.h"

namespace gte {

// Work a caller allows the picks of one node (groups the depth-first search may try). Score
// tables with no such structure make the exact replay exponential (about 40 ms per size on 16
// GPUs); above kExactWithoutBudgetUpTo available GPUs the search then stops when the allowance is
// spent and takes the best partition it found, which may differ from upstream's: `approximate`
// says so.
struct PickBudget {
  static constexpr int kExactWithoutBudgetUpTo = 12;
  long groups = 0;
  bool approximate = false;
};

// `available` and `required` are masks of GPU indices (upstream orders devices by index); scores
// are PairTable::pluginScore. Returns 0 when upstream returns nothing (size <= 0, too few
// available, more required than size, or `required` not inside `available`). Exact without a
// budget, and with one for up to kExactWithoutBudgetUpTo available GPUs.
GpuMask predictDevicePluginPick(const PairTable& table, GpuMask available, GpuMask required,
                                int size, PickBudget* budget = nullptr);

}  // namespace gte
