#pragma once
// Reads `nvidia-smi mig -lgi` (existing GPU instances with Start:Size), `-lgip` (profiles with
// their IDs and free/total counts) and `-lgipp` (possible placements per profile, both the
// `Placements:` and the singular `Placement :` spelling). One file may hold any of them one after
// another. "No MIG-enabled devices found" and "No GPU instances found" are valid empty answers.
// Rejected with the line number: a table row that does not parse, a table cut off before its
// closing border, a placement line cut short.
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace gte::agent {

struct GpuInstanceRow {  // -lgi
  int gpu = 0;
  std::string profile;  // "1g.10gb", "1g.10gb+me"
  int profileId = 0;    // nvidia-smi profile ID (19, 20, 15, 14, 9, 5, 0 on A100/H100)
  int instanceId = 0;
  int start = 0;
  int size = 0;
  int line = 0;
};

struct ProfileRow {  // -lgip
  int gpu = 0;
  std::string profile;
  int profileId = 0;
  int freeInstances = 0;
  int totalInstances = 0;
  int line = 0;
};

struct PlacementRow {  // -lgipp
  int gpu = 0;
  int profileId = 0;
  std::vector<int> starts;
  int size = 0;
  int line = 0;
};

struct MigListing {
  std::vector<GpuInstanceRow> instances;
  std::vector<ProfileRow> profiles;
  std::vector<PlacementRow> placements;
};

Result<MigListing> parseMigListing(std::string_view text);

}  // namespace gte::agent
