#pragma once
// `gpu-topology-agent run`: the daemon. Wires the API client (kubeconfig or in-cluster), the
// publishing loop, /healthz and /metrics, and SIGTERM/SIGINT.
#include "agent/agent_options.h"

namespace gte::agent {

int runDaemon(const AgentInvocation& invocation);

}  // namespace gte::agent
