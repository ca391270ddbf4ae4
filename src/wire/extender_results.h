#pragma once
// Response bodies kube-scheduler accepts, with the capitalised Go field names it expects.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gte::wire {

// Names and reasons are views: a result lists every node of a request (5,000 in a large cluster)
// and is written out at once, while the request, its nodes and `FilterResult::reasonTexts` are
// still alive.
struct FailedNode {
  std::string_view name;
  std::string_view reason;
};

// ExtenderFilterResult. In full-Node mode `keptNodes` are the raw objects (echoed byte for byte)
// and `keptNames` is unused; in names mode the reverse.
struct FilterResult {
  bool nodesMode = false;
  std::vector<std::string_view> keptNodes;
  std::vector<std::string_view> keptNames;
  std::vector<FailedNode> failed;              // -> FailedNodes (preemption may help)
  std::vector<FailedNode> failedUnresolvable;  // -> FailedAndUnresolvableNodes
  std::string error;
  // The distinct reason texts the failed nodes' views point into (few per request).
  std::vector<std::string> reasonTexts;
};

std::string writeFilterResult(const FilterResult& result);
// {"Error":"..."} with every node field null: what a filter call that could not decide answers.
std::string writeFilterError(std::string_view message);

struct HostPriority {
  std::string_view host;   // a view, like FailedNode::name
  std::int64_t score = 0;  // 0..10 (MaxExtenderPriority)
};

// HostPriorityList: a bare JSON array.
std::string writeHostPriorityList(const std::vector<HostPriority>& list);

// ExtenderBindingResult.
std::string writeBindingResult(std::string_view error);

struct MetaVictims {
  std::string node;
  std::vector<std::string> podUids;  // most important first
  std::int64_t numPdbViolations = 0;
};

// ExtenderPreemptionResult: always the Meta form, whatever nodeCacheCapable is.
std::string writePreemptionResult(const std::vector<MetaVictims>& nodes);

// {"Error":"..."}: for HTTP-level errors (400/404/405/413) and a preempt that could not decide.
std::string writeErrorBody(std::string_view message);

}  // namespace gte::wire
