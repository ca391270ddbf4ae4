#pragma once
// /healthz and /metrics of the agent (cpprest http_listener; its headers stay in agent_http.cpp).
//   GET /healthz  200 "ok" while a pass succeeded within the staleness window, else 503 with the
//                 last error (no driver, API server down, kubelet socket missing, ...).
//   GET /metrics  AgentMetrics in the Prometheus text format.
#include <chrono>
#include <memory>
#include <string>

#include "agent/agent_metrics.h"
#include "base/result.h"

namespace gte::agent {

class AgentHttp {
 public:
  // `listen` is "host:port" or ":port" (all interfaces).
  AgentHttp(std::string listen, const AgentMetrics& metrics, std::chrono::seconds staleAfter);
  ~AgentHttp();
  AgentHttp(const AgentHttp&) = delete;
  AgentHttp& operator=(const AgentHttp&) = delete;

  Status start();
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gte::agent
