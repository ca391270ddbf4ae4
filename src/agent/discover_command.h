#pragma once
// `gpu-topology-agent discover`: one discovery, printed as the labels the agent would write.
#include <iosfwd>

#include "agent/agent_options.h"
#include "agent/discovery.h"
#include "base/result.h"
#include "policy/policy.h"

namespace gte::agent {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitBadCapture = 2;
inline constexpr int kExitUsage = 64;

// Runs the discovery the source options select (NVML or text captures) and applies --used.
// Text capture errors exit 2; everything else 1.
Result<Discovery> discoverNode(const SourceOptions& source, const Policy& policy,
                               int& exitCodeOnError);

// Prints sorted `key=value` lines to `out`, or one error line to `err`; returns the exit code.
int runDiscover(const AgentInvocation& invocation, std::ostream& out, std::ostream& err);

}  // namespace gte::agent
