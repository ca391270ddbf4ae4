#pragma once
// Standard base64 (RFC 4648, with padding) decoding for the `*-data` fields of a kubeconfig, which
// carry PEM certificates and keys base64-encoded.
#include <string>
#include <string_view>

#include "base/result.h"

namespace gte::kube {

// Decodes `text`, ignoring ASCII whitespace (YAML block scalars wrap long values). Errors name the
// offending character position.
Result<std::string> decodeBase64(std::string_view text);

}  // namespace gte::kube
