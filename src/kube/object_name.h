#pragma once
// Kubernetes object-name rules, checked before a name from a request becomes part of an API path:
// a namespace is a DNS-1123 label, a pod name a DNS-1123 subdomain. Neither can then hold '/',
// '?', '%' or a "." / ".." segment.
#include <string_view>

namespace gte::kube {

// At most 63 characters of [a-z0-9-], starting and ending with a letter or digit.
bool isDns1123Label(std::string_view name) noexcept;
// At most 253 characters: DNS-1123 labels joined by '.'.
bool isDns1123Subdomain(std::string_view name) noexcept;

}  // namespace gte::kube
