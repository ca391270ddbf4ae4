#include "server/router.h"

#include <chrono>

#include "log/logger.h"
#include "metrics/metrics.h"
#include "server/query_parameter.h"
#include "server/request_shape.h"
#include "service/extender_service.h"
#include "wire/extender_args.h"
#include "wire/extender_results.h"
#include "wire/reason.h"

namespace gte::server {
namespace {

using metrics::Verb;

constexpr VerbRoute kVerbs[] = {{"filter", Verb::kFilter},
                                {"prioritize", Verb::kPrioritize},
                                {"bind", Verb::kBind},
                                {"preempt", Verb::kPreempt}};

std::string stripTrailingSlashes(std::string p) {
  while (!p.empty() && p.back() == '/')
    p.pop_back();
  return p;
}

std::string_view stripQuery(std::string_view path) {
  const auto q = path.find('?');
  return q == std::string_view::npos ? path : path.substr(0, q);
}

Reply jsonError(int status, std::string_view message) {
  Reply r;
  r.status = status;
  r.body = wire::writeErrorBody(message);
  return r;
}

Reply textReply(int status, std::string body,
                std::string contentType = "text/plain; charset=utf-8") {
  Reply r;
  r.status = status;
  r.contentType = std::move(contentType);
  r.body = std::move(body);
  return r;
}

}  // namespace

Router::Router(std::string prefix, const ExtenderService& service, metrics::Metrics* metrics,
               std::string versionJson, RouterOptions options)
    : prefix_(stripTrailingSlashes(std::move(prefix))),
      service_(service),
      metrics_(metrics),
      versionJson_(std::move(versionJson)),
      options_(options) {}

bool Router::acceptsBody(std::string_view method, std::string_view path) const {
  // Explain by pod name may wait on the API server: it goes to the decision pool like a verb.
  if (isExplain(stripQuery(path))) return method == "POST" || method == "GET";
  return method == "POST" && findVerb(stripQuery(path)) != nullptr;
}

bool Router::isExplain(std::string_view path) const {
  if (!options_.serveVerbs || !options_.explain) return false;
  return path == "/explain" || (path.size() == prefix_.size() + 8 && path.starts_with(prefix_) &&
                                path.substr(prefix_.size()) == "/explain");
}

Reply Router::explain(std::string_view method, std::string_view rawPath,
                      std::string_view body) const {
  const auto started = std::chrono::steady_clock::now();
  Reply reply;
  if (method == "POST") {
    if (auto refusal = refuseShape(Verb::kOther, body)) {
      observe(Verb::kOther, refusal->status, started);
      return std::move(*refusal);
    }
    ServiceReply sr = service_.explain(body);
    reply.status = sr.status;
    reply.body = std::move(sr.body);
  } else if (method == "GET") {
    const auto pod = queryParameter(rawPath, "pod");
    ServiceReply sr = pod ? service_.explainPod(*pod)
                          : ServiceReply{400, wire::writeErrorBody(wire::prefixedReason(
                                                  "explain: GET needs ?pod=NAMESPACE/NAME; or "
                                                  "POST an ExtenderArgs body"))};
    reply.status = sr.status;
    reply.body = std::move(sr.body);
  } else {
    reply = jsonError(405, "method " + std::string(method) + " not allowed on " +
                               std::string(stripQuery(rawPath)) + "; use GET or POST");
    reply.headers.emplace_back("Allow", "GET, POST");
  }
  observe(Verb::kOther, reply.status, started);
  return reply;
}

bool Router::isBind(std::string_view method, std::string_view path) const {
  const VerbRoute* verb = findVerb(stripQuery(path));
  return method == "POST" && verb != nullptr && verb->verb == Verb::kBind;
}

void Router::dispatch(std::string_view method, std::string_view rawPath, std::string_view body,
                      std::function<void(Reply)> done, BindCaller caller) const {
  const auto path = stripQuery(rawPath);
  if (isExplain(path)) {
    done(explain(method, rawPath, body));
    return;
  }
  const VerbRoute* verb = findVerb(path);
  if (!verb || method != "POST" || verb->verb != Verb::kBind) {
    done(route(method, rawPath, body));
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  service_.bind(
      body,
      [this, started, done = std::move(done)](ServiceReply sr) {
        Reply reply;
        reply.status = sr.status;
        reply.body = std::move(sr.body);
        observe(Verb::kBind, reply.status, started);
        done(std::move(reply));
      },
      std::move(caller));
}

const VerbRoute* Router::findVerb(std::string_view path) const {
  if (!options_.serveVerbs) return nullptr;
  if (!path.starts_with(prefix_) || path.size() <= prefix_.size() + 1 ||
      path[prefix_.size()] != '/') {
    return nullptr;
  }
  const auto name = path.substr(prefix_.size() + 1);
  for (const auto& v : kVerbs) {
    if (name == v.name) return &v;
  }
  return nullptr;
}

void Router::observe(Verb verb, int status, std::chrono::steady_clock::time_point started) const {
  if (!metrics_) return;
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  metrics_->observeRequest(verb, status, took.count());
}

Reply Router::route(std::string_view method, std::string_view rawPath,
                    std::string_view body) const {
  const auto path = stripQuery(rawPath);
  const auto started = std::chrono::steady_clock::now();
  // Extender verbs: POST {prefix}/{verb}.
  if (const VerbRoute* v = findVerb(path)) {
    Reply reply;
    if (method != "POST") {
      reply = jsonError(405, "method " + std::string(method) + " not allowed on " +
                                 std::string(path) + "; use POST");
      reply.headers.emplace_back("Allow", "POST");
    } else {
      if (v->verb == Verb::kFilter || v->verb == Verb::kPrioritize) {
        return decide(v->verb, body, started);
      }
      if (auto refusal = refuseShape(v->verb, body)) {
        observe(v->verb, refusal->status, started);
        return std::move(*refusal);
      }
      ServiceReply sr;
      switch (v->verb) {
        case Verb::kFilter:
        case Verb::kPrioritize:
          break;  // decided above
        case Verb::kBind:
          // dispatch() answers bind asynchronously and never routes it here; reaching this is a
          // broken invariant, answered as an error rather than by waiting on a pool thread.
          log::error("bind routed synchronously", {{"path", path}});
          sr = ServiceReply{500, wire::writeErrorBody(wire::prefixedReason("internal error"))};
          break;
        case Verb::kPreempt:
        case Verb::kOther:
          sr = service_.preempt(body);
          break;
      }
      reply.status = sr.status;
      reply.body = std::move(sr.body);
    }
    observe(v->verb, reply.status, started);
    return reply;
  }
  Reply reply;
  const bool isGet = method == "GET" || method == "HEAD";
  std::string why;
  if (path == "/healthz" || path == "/livez") {
    reply = service_.healthy(&why) ? textReply(200, "ok\n")
                                   : textReply(503, "unhealthy: " + why + "\n");
  } else if (path == "/readyz") {
    reply = readiness();
  } else if (path == "/metrics") {
    reply = textReply(200, metrics_ ? metrics_->serialize() : std::string(),
                      "text/plain; version=0.0.4; charset=utf-8");
  } else if (path == "/version") {
    reply = textReply(200, versionJson_, "application/json");
  } else {
    reply = jsonError(404, "no such endpoint: " + std::string(path));
    if (metrics_) metrics_->observeRequest(Verb::kOther, 404, 0);
    return reply;
  }
  if (!isGet) {
    reply =
        jsonError(405, "method " + std::string(method) + " not allowed on " + std::string(path));
    reply.headers.emplace_back("Allow", "GET, HEAD");
  }
  if (method == "HEAD") reply.body.clear();
  return reply;
}

Reply Router::readiness() const {
  if (draining_) return textReply(503, "not ready: shutting down\n");
  std::string why;
  return service_.ready(&why) ? textReply(200, "ok\n") : textReply(503, "not ready: " + why + "\n");
}

Reply Router::decide(Verb verb, std::string_view body,
                     std::chrono::steady_clock::time_point started) const {
  wire::ArgsLimits limits;
  limits.maxNodes = options_.maxNodesPerRequest;
  limits.nodeObjectsRefused = options_.namesOnly;
  auto args = wire::parseExtenderArgs(body, limits);
  Reply reply;
  if (!args && args.error().code == ErrorCode::kFailedPrecondition) {
    reply = refuse(verb, Refusal::kNodeObjects);
  } else if (!args && args.error().code == ErrorCode::kTooLarge) {
    reply = refuse(verb, Refusal::kTooManyNodes);
  } else {
    ServiceReply sr = verb == Verb::kFilter ? service_.filter(std::move(args))
                                            : service_.prioritize(std::move(args));
    reply.status = sr.status;
    reply.body = std::move(sr.body);
  }
  observe(verb, reply.status, started);
  return reply;
}

std::optional<Reply> Router::refuseShape(Verb verb, std::string_view body) const {
  if (verb == Verb::kBind) return std::nullopt;
  const auto shape = scanRequestShape(body, options_.maxNodesPerRequest);
  if (!shape) return std::nullopt;  // malformed: the verb's parser says precisely how
  if (options_.namesOnly && shape->fullNodes && verb != Verb::kPreempt) {
    return refuse(verb, Refusal::kNodeObjects);
  }
  if (shape->nodes > options_.maxNodesPerRequest) return refuse(verb, Refusal::kTooManyNodes);
  return std::nullopt;
}

Reply Router::refuse(Verb verb, Refusal refusal) const {
  std::string why;
  std::string_view reason;
  if (refusal == Refusal::kNodeObjects) {
    reason = "full_nodes_refused";
    why =
        "gpu-topology: full Node objects refused: this extender reads nodes from its cluster "
        "cache; configure kube-scheduler with nodeCacheCapable: true";
  } else {
    reason = "too_many_nodes";
    why = "gpu-topology: request names more than " + std::to_string(options_.maxNodesPerRequest) +
          " nodes (--max-nodes-per-request)";
  }
  log::warn("request refused", {{"reason", reason}, {"error", why}});
  if (metrics_) metrics_->countRejectedRequest(reason);
  // Filter reports errors in its Error field with HTTP 200 (kube-scheduler shows no body of a
  // non-200 answer); prioritize and preempt have no such field.
  if (verb == Verb::kFilter) return textReply(200, wire::writeFilterError(why), "application/json");
  return jsonError(400, why);
}

Reply Router::headerTooLarge(std::size_t limit) const {
  log::warn("request header too large", {{"limit_bytes", std::to_string(limit)}});
  if (metrics_) metrics_->countRejectedRequest("header_too_large");
  return jsonError(431, "request header exceeds the limit of " + std::to_string(limit) +
                            " bytes (--max-header-bytes)");
}

void Router::countRejected(std::string_view reason) const {
  if (metrics_) metrics_->countRejectedRequest(reason);
}

Reply Router::tooLarge(std::string_view path, std::size_t limit) const {
  log::warn("request body too large", {{"path", path}, {"limit_bytes", std::to_string(limit)}});
  if (metrics_) metrics_->countRejectedRequest("body_too_large");
  return jsonError(413, "request body exceeds the limit of " + std::to_string(limit) +
                            " bytes (--max-body-bytes)");
}

Reply Router::badRequest(std::string_view path, std::string_view why) const {
  log::warn("bad request", {{"path", path}, {"error", why}});
  if (metrics_) metrics_->countRejectedRequest("bad_request");
  return jsonError(400, why);
}

}  // namespace gte::server
