package e2e

// Expected texts, kept in this one file so they can follow the extender's wording in one place.
//
// Each constant is a substring, matched case-sensitively, of a message the extender produces. Pick
// the most stable part of a message (the words that name the cause), not a full sentence: the
// scheduler wraps filter messages as "0/3 nodes are available: 2 <message>, 1 <message>." and the
// exact wording is the extender's business (docs/api.md, "Filter reasons").
const (
	// reasonPrefix starts every filter message of the extender; it tells them apart from the
	// in-tree plugins' (for example "Insufficient nvidia.com/gpu" from NodeResourcesFit).
	reasonPrefix = "gpu-topology: "

	// reasonTooFewFreeGPUs: a node has fewer free whole GPUs (labels-v1 `used`/`health`, minus the
	// extender's own assumptions) than the pod requests.
	reasonTooFewFreeGPUs = "free GPU"

	// reasonMIGPlacement: the requested MIG profile has no legal placement on a node (no free
	// instance of that profile, nor, with dynamic MIG, a legal start over unpartitioned slices).
	reasonMIGPlacement = "MIG"

	// reasonGPUsShared: a pod asking for exclusive GPUs on a node whose device plugin shares its
	// GPUs (time-slicing, MPS; docs/sharing.md).
	reasonGPUsShared = "GPUs shared by time-slicing"

	// reasonNoFreeReplica: a pod of one replica on a node whose shared GPUs have none left
	// (docs/sharing.md#replicas-counted).
	reasonNoFreeReplica = "no free replica"

	// reasonOneReplicaPerContainer: a container of more than one replica on a node whose device
	// plugin admits one per container (MPS, or time-slicing with failRequestsGreaterThanOne, which
	// the agent reads from the plugin's configuration; docs/sharing.md).
	reasonOneReplicaPerContainer = "one replica per container"

	// logMalformedLabels: the extender logs a line containing this and the node's name for a node
	// whose labels-v1 values are malformed.
	logMalformedLabels = "malformed"
)
