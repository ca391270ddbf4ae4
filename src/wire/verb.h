#pragma once
// The endpoints under the path prefix that the decision pool answers: kube-scheduler's four
// extender verbs (POST {prefix}/<name>), explain (what filter and prioritize decide for a pod),
// whatif (where pods arriving now would go, on a copy of the cluster cache) and nodes (the cache's
// nodes as the extender sees them). The one verb enum of the router, the error table
// (service/error_reply.h) and the request metrics.
#include <cstdint>
#include <string_view>

namespace gte::wire {

enum class Verb : std::uint8_t { kFilter, kPrioritize, kBind, kPreempt, kExplain, kWhatif, kNodes };

inline constexpr Verb kVerbs[] = {Verb::kFilter,  Verb::kPrioritize, Verb::kBind, Verb::kPreempt,
                                  Verb::kExplain, Verb::kWhatif,     Verb::kNodes};

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
    case Verb::kWhatif:
      return "whatif";
    case Verb::kNodes:
      return "nodes";
  }
  return "explain";
}

}  // namespace gte::wire
