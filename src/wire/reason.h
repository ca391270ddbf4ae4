#pragma once
// Every message kube-scheduler shows users (pod events, conditions, bind and request errors)
// starts with this prefix, so they can tell the extender's reasons from the in-tree plugins'.
#include <string>
#include <string_view>

namespace gte::wire {

inline constexpr std::string_view kReasonPrefix = "gpu-topology: ";

inline std::string prefixedReason(std::string_view text) {
  std::string out(kReasonPrefix);
  out.append(text);
  return out;
}

}  // namespace gte::wire
