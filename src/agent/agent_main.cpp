// gpu-topology-agent: publishes this node's GPU topology as labels-v1 (docs/agent.md).
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "agent/agent_options.h"
#include "agent/discover_command.h"
#include "agent/run_command.h"

namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gte::agent;
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto invocation = parseAgentCommandLine(args, env("NODE_NAME"));
  if (!invocation.ok()) {
    std::cerr << "gpu-topology-agent: " << invocation.error().message << "\n";
    return kExitUsage;
  }
  switch (invocation->command) {
    case AgentCommand::kDiscover:
      return runDiscover(*invocation, std::cout, std::cerr);
    case AgentCommand::kVersion:
      std::cout << "gpu-topology-agent " << GTE_VERSION << " (" << GTE_GIT_REV << ")\n";
      return kExitOk;
    case AgentCommand::kRun:
      return runDaemon(*invocation);
    case AgentCommand::kHelp:
      std::cout << invocation->helpText;
      return kExitOk;
  }
  return kExitFailed;
}
