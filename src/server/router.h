#pragma once
// Maps (method, path, body) to a reply: the extender verbs, explain, whatif and nodes under the
// path prefix (the last three also at the root), plus health, readiness, metrics and version.
// Explain, whatif and nodes answer JSON, or with ?format=table the same answer as the operator
// table (src/report), which the commands and the kubectl plugin print. No sockets: the transport in
// http_server.cpp calls it, and the routing tests call it directly. Every refusal it answers goes
// through the error table (service/error_reply.h).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/result.h"
#include "metrics/metrics.h"
#include "service/cluster_backend.h"
#include "service/reply.h"
#include "wire/verb.h"

namespace gte {
class ExtenderService;

namespace server {

struct RouterOptions {
  // false: only /healthz, /livez, /readyz, /metrics and /version (the --metrics-listen port).
  bool serveVerbs = true;
  // Nodes (Nodes.items or NodeNames) or preemption candidates in one request.
  std::size_t maxNodesPerRequest = 10000;
  // A cluster cache serves the nodes (kube-scheduler runs with nodeCacheCapable: true): full Node
  // objects, which would make the extender build node states from whatever a caller sends, are
  // refused.
  bool namesOnly = false;
  // POST {prefix}/explain and GET {prefix}/explain?pod= (also GET /explain?pod=); false
  // (--disable-explain) answers them 404 like any unknown path.
  bool explain = true;
  // POST {prefix}/whatif (also /whatif); false (--disable-whatif) answers 404.
  bool whatif = true;
  // GET {prefix}/nodes (also /nodes); false (--disable-nodes) answers 404.
  bool nodes = true;
};

class Router {
 public:
  // `prefix` like "/scheduler" (trailing slashes are stripped; "" or "/" serve verbs at the root).
  Router(std::string prefix, const ExtenderService& service, metrics::Metrics* metrics,
         std::string versionJson, RouterOptions options = {});

  // What the transport calls: bind completes later on another thread (it waits on the API server,
  // which must not hold a decision thread); everything else calls `done` at once. `caller` tells
  // bind when the request arrived and whether its client has gone.
  void dispatch(std::string_view method, std::string_view path, std::string_view body,
                std::function<void(Reply)> done, BindCaller caller = {}) const;
  // Replies used by the transport before a body is read (httpErrorReply: the same for every path).
  Reply tooLarge(std::string_view path, std::size_t limit) const;
  Reply badRequest(std::string_view path, std::string_view why) const;
  Reply headerTooLarge(std::size_t limit) const;
  // A connection dropped without an answer (timeout, connection cap), counted by reason.
  void countRejected(std::string_view reason) const;

  // Graceful shutdown: from now on /readyz fails, so load balancers stop sending new work.
  void setDraining(bool draining) { draining_ = draining; }

  // True for requests whose bodies should be read at all and that go to the decision pool (a verb
  // or explain); anything else is answered at once.
  bool acceptsBody(std::string_view method, std::string_view path) const;
  // True for a POST to bind: the transport then watches whether the caller hangs up meanwhile.
  bool isBind(std::string_view method, std::string_view path) const;

 private:
  // The verb or explain a path names (query stripped); nullopt for any other path.
  std::optional<wire::Verb> verbAt(std::string_view path) const;
  // Probes, metrics, version and unknown paths.
  Reply route(std::string_view method, std::string_view path) const;
  Reply explain(std::string_view method, std::string_view rawPath, std::string_view body) const;
  Reply nodes(std::string_view rawPath) const;
  // Explain, whatif and nodes: the answer `run` gives, as JSON or, for ?format=table, as its
  // table. A bad format (or top) is refused before `run` runs.
  Reply viewed(wire::Verb verb, std::string_view rawPath, const std::function<Reply()>& run) const;
  bool served(wire::Verb verb) const noexcept;
  void observe(wire::Verb verb, int status, std::chrono::steady_clock::time_point started) const;
  // A refusal when the body asks for more than the limits allow; nullopt to go ahead. Preempt and
  // explain skim the body for this first; filter and prioritize, the verbs of every scheduling
  // cycle, have their parse enforce the limits instead (one pass over the body, not two).
  std::optional<Reply> refuseShape(wire::Verb verb, std::string_view body) const;
  // A request over the limits (wire::nodeObjectsRefused, wire::tooManyNodes): logged, counted by
  // reason, answered per the error table.
  Reply refuse(wire::Verb verb, const Error& refusal) const;
  // Filter and prioritize: parse with the limits, then decide.
  Reply decide(wire::Verb verb, std::string_view body) const;
  Reply readiness() const;

  std::string prefix_;
  const ExtenderService& service_;
  metrics::Metrics* metrics_;
  std::string versionJson_;
  RouterOptions options_;
  std::atomic<bool> draining_{false};
};

}  // namespace server
}  // namespace gte
