#pragma once
// The Kubernetes label syntax (metadata.labels validation): a key is an optional DNS-1123
// subdomain prefix (lowercase [a-z0-9.-], at most 253 characters) and '/', then a name of 1-63
// characters of [A-Za-z0-9._-] starting and ending alphanumeric; a value is empty or the same
// shape as a name. The agent checks every label before it writes, so a bad value is an error it
// reports, never a rejected PATCH.
#include <string_view>

#include "base/result.h"
#include "model/string_map.h"

namespace gte::agent {

Status checkLabelKey(std::string_view key);
Status checkLabelValue(std::string_view value);
// Every key and value of `labels`; the error names the first bad one.
Status checkLabels(const StringMap& labels);

}  // namespace gte::agent
