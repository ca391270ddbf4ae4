#pragma once
// The JSON merge patch (RFC 7386) that moves a Node's labels under the agent's prefix to the
// desired set: changed and new keys with their values, keys the agent no longer produces as null.
// Pure: the publisher decides when to send it.
#include <optional>
#include <string>
#include <string_view>

#include "model/string_map.h"

namespace gte::agent {

// nullopt when nothing but `<prefix>gen` would change: a write means a fact changed, and `gen`
// (the discovery time) alone is not one. Otherwise the patch carries every desired label
// (including the new `gen`) that differs, and null for every current prefix key not desired.
std::optional<std::string> labelPatch(const StringMap& current, const StringMap& desired,
                                      std::string_view prefix);

// Null for every current label under `prefix`; nullopt when there is none.
std::optional<std::string> cleanupPatch(const StringMap& current, std::string_view prefix);

}  // namespace gte::agent
