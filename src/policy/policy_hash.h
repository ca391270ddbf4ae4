#pragma once
// A stable identity for a policy's content, exported as a metric label and logged on reload so an
// operator can tell which policy each replica runs. Equal policies hash equal whatever YAML
// spelling (comments, key order, defaults left out) produced them.
#include <string>

#include "policy/policy.h"

namespace gte {

// Every field in a fixed order, one `path=value` per line.
std::string canonicalPolicyText(const Policy& policy);

// FNV-1a 64 of canonicalPolicyText, as 16 lowercase hex digits.
std::string policyHash(const Policy& policy);

// FNV-1a 64 of arbitrary bytes (the store uses it to notice file content changes).
std::uint64_t fnv1a64(std::string_view bytes) noexcept;

}  // namespace gte
