// The node agent's read of its companion ResourceSlice as the API server returns it
// (agent/companion_slice.h, readStoredSlice). An accepted object has a resourceVersion; a slice
// the agent wrote reads back with its generation, digest and skipNodeOperations.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "agent/companion_slice.h"
#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto read = gte::agent::readStoredSlice(text, "gputopo.dev/companion-digest");
  if (read.ok()) {
    gte::fuzz::check(!read->resourceVersion.empty(), "an accepted slice has a resourceVersion");
    // Writing the slice back with what was read and reading it again keeps every field.
    // Built in place: assigning literals to the members trips GCC 12's -Wrestrict at -O3.
    const gte::agent::CompanionSlice slice{.name = "n-topology.gputopo.dev",
                                           .node = "n",
                                           .nodeUid = "u",
                                           .driver = "topology.gputopo.dev",
                                           .labelPrefix = "gputopo.dev/",
                                           .generation = read->generation,
                                           .resourceVersion = read->resourceVersion,
                                           .devices = {}};
    const auto again = gte::agent::readStoredSlice(gte::agent::companionSliceJson(slice),
                                                   "gputopo.dev/companion-digest");
    gte::fuzz::check(again.ok(), "a written slice reads back");
    gte::fuzz::check(again->resourceVersion == read->resourceVersion &&
                         again->generation == read->generation && again->skipsNodeOperations,
                     "a written slice reads back unchanged");
  }
  return 0;
}
