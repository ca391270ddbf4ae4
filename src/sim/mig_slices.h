#pragma once
// What a MIG-naive scheduler sees of a node: slice counts. A GPU in MIG mode has 8 memory slices
// and 7 compute slices; a profile "Ng.*" takes N compute slices and the memory slices of the
// product table. Counts adding up do not make a placement legal (an instance needs a legal start
// none of whose slices is taken): the simulator uses these counts for the MIG-naive baselines and
// to tell a MIG failure caused by placement rules ("the slice counts merely add up") from one where
// no GPU had the slices at all.
#include "core/node_state.h"
#include "policy/mig_product.h"

namespace gte::sim {

inline constexpr int kMigComputeSlices = 7;

// N of an "Ng.*" profile name; 1 when the name does not start that way.
int computeSlices(const MigProfile& profile) noexcept;

// Some MIG-enabled, healthy GPU of the node has at least the profile's unpartitioned memory slices
// (covered by no instance) and free compute slices, wherever they lie.
bool sliceCountsFit(const NodeState& state, const MigProfile& profile) noexcept;

// A free existing instance of the profile on the node: with static MIG layouts (`mig.dynamic`
// off) all a scheduler sees, as the device plugin's `nvidia.com/mig-<profile>` count.
bool freeInstanceExists(const NodeState& state, const MigProfile& profile) noexcept;

// Memory slices no pod holds over the node's MIG-enabled, healthy GPUs: unpartitioned ones and
// those of free instances.
int freeMigSlices(const NodeState& state) noexcept;

}  // namespace gte::sim
