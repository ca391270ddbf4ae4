#pragma once
// Reads a --cluster-file: the Nodes and Pods of a cluster without an API server (demos, benchmarks,
// offline replays), and the PodGroups, Jobs and JobSets whose spec gives a pod group's size
// (docs/groups.md). Accepted forms, JSON or YAML:
//   - a v1 List (or NodeList/PodList) with `items`,
//   - a bare array of objects,
//   - a single Node or Pod object,
//   - a multi-document YAML stream, each document being any of the above.
// YAML is converted to JSON and read with the same Node/Pod parsers as the API path, so both accept
// and reject exactly the same objects. Every error names the item's index (in reading order).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cluster/group_owner_sizes.h"
#include "model/node_info.h"
#include "model/pod_info.h"

namespace gte::cluster {

struct FilePod {
  PodInfo pod;
  std::optional<std::int64_t> boundAt;  // the PodInfo::boundAt the item was read with
};

struct ClusterFileContents {
  std::vector<NodeInfo> nodes;
  std::vector<FilePod> pods;                // terminal pods (Succeeded/Failed) are left out
  std::vector<GroupOwnerSize> groupOwners;  // PodGroup, Job, JobSet items
};

Result<ClusterFileContents> parseClusterDocument(std::string_view text);
Result<ClusterFileContents> loadClusterFile(const std::string& path);

}  // namespace gte::cluster
