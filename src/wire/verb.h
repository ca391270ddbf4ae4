#pragma once
// The endpoints that decide for a pod: kube-scheduler's four extender verbs (POST {prefix}/<name>)
// and explain, which answers what filter and prioritize decide. The one verb enum of the router,
// the error table (service/error_reply.h) and the request metrics.
#include <cstdint>
#include <string_view>

namespace gte::wire {

enum class Verb : std::uint8_t { kFilter, kPrioritize, kBind, kPreempt, kExplain };

inline constexpr Verb kVerbs[] = {Verb::kFilter, Verb::kPrioritize, Verb::kBind, Verb::kPreempt,
                                  Verb::kExplain};

// The path segment after the prefix, and the `verb` of log lines.
constexpr std::string_view verbName(Verb verb) noexcept {
  switch (verb) {
    case Verb::kFilter:
      return "filter";
    case Verb::kPrioritize:
      return "prioritize";
    case Verb::kBind:
      return "bind";
    case Verb::kPreempt:
      return "preempt";
    case Verb::kExplain:
      return "explain";
  }
  return "explain";
}

}  // namespace gte::wire
