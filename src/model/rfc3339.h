#pragma once
// Kubernetes timestamps (metav1.Time) as unix seconds: "2026-07-01T10:00:00Z", RFC 3339 with any
// offset and an optional fraction, which is dropped.
#include <cstdint>
#include <optional>
#include <string_view>

namespace gte {

// nullopt when `text` is not such a time.
std::optional<std::int64_t> parseRfc3339(std::string_view text);

}  // namespace gte
