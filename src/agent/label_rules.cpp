#include "agent/label_rules.h"

#include <string>

namespace gte::agent {
namespace {

constexpr std::size_t kMaxName = 63;
constexpr std::size_t kMaxPrefix = 253;

bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, at most 63.
bool qualifiedName(std::string_view text) {
  if (text.empty() || text.size() > kMaxName || !alnum(text.front()) || !alnum(text.back())) {
    return false;
  }
  for (const char c : text) {
    if (!alnum(c) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

// DNS-1123 subdomain: dot-separated labels of [a-z0-9-], each starting and ending alphanumeric.
bool dnsSubdomain(std::string_view text) {
  if (text.empty() || text.size() > kMaxPrefix) {
    return false;
  }
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t dot = std::min(text.find('.', begin), text.size());
    const std::string_view part = text.substr(begin, dot - begin);
    if (part.empty() || part.size() > kMaxName || part.front() == '-' || part.back() == '-') {
      return false;
    }
    for (const char c : part) {
      if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
        return false;
      }
    }
    begin = dot + 1;
  }
  return true;
}

}  // namespace

Status checkLabelKey(std::string_view key) {
  const std::size_t slash = key.find('/');
  const std::string_view name = slash == std::string_view::npos ? key : key.substr(slash + 1);
  if (slash != std::string_view::npos && !dnsSubdomain(key.substr(0, slash))) {
    return invalidArgument("label key '" + std::string(key) +
                           "': prefix is not a DNS-1123 subdomain of at most 253 characters");
  }
  if (!qualifiedName(name)) {
    return invalidArgument("label key '" + std::string(key) +
                           "': name must be 1-63 characters of [A-Za-z0-9._-], alphanumeric at "
                           "both ends");
  }
  return Ok{};
}

Status checkLabelValue(std::string_view value) {
  if (!value.empty() && !qualifiedName(value)) {
    return invalidArgument("label value '" + std::string(value) +
                           "': must be at most 63 characters of [A-Za-z0-9._-], alphanumeric at "
                           "both ends");
  }
  return Ok{};
}

Status checkLabels(const StringMap& labels) {
  for (const auto& [key, value] : labels) {
    if (auto status = checkLabelKey(key); !status.ok()) {
      return status;
    }
    if (auto status = checkLabelValue(value); !status.ok()) {
      return invalidArgument(key + ": " + status.error().message);
    }
  }
  return Ok{};
}

}  // namespace gte::agent
