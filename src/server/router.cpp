#include "server/router.h"

#include <charconv>
#include <chrono>

#include "log/logger.h"
#include "metrics/metrics.h"
#include "report/explain_table.h"
#include "report/nodes_table.h"
#include "report/whatif_table.h"
#include "server/query_parameter.h"
#include "server/request_shape.h"
#include "service/error_reply.h"
#include "service/extender_service.h"
#include "wire/extender_args.h"

namespace gte::server {
namespace {

using wire::Verb;

std::string stripTrailingSlashes(std::string p) {
  while (!p.empty() && p.back() == '/')
    p.pop_back();
  return p;
}

std::string_view stripQuery(std::string_view path) {
  const auto q = path.find('?');
  return q == std::string_view::npos ? path : path.substr(0, q);
}

Reply textReply(int status, std::string body,
                std::string contentType = "text/plain; charset=utf-8") {
  Reply r;
  r.status = status;
  r.contentType = std::move(contentType);
  r.body = std::move(body);
  return r;
}

// `allow`: the methods the path takes, as the Allow header lists them.
Reply methodNotAllowed(std::string_view method, std::string_view path, std::string_view allow) {
  Reply reply = httpErrorReply(405, "method " + std::string(method) + " not allowed on " +
                                        std::string(path) + "; use " + std::string(allow));
  reply.headers.emplace_back("Allow", allow);
  return reply;
}

// The methods each endpoint takes, as the Allow header lists them.
std::string_view allowedMethods(Verb verb) {
  switch (verb) {
    case Verb::kExplain:
      return "GET, POST";
    case Verb::kNodes:
      return "GET";
    case Verb::kFilter:
    case Verb::kPrioritize:
    case Verb::kBind:
    case Verb::kPreempt:
    case Verb::kWhatif:
      break;
  }
  return "POST";
}

bool methodAllowed(Verb verb, std::string_view method) {
  const std::string_view allowed = allowedMethods(verb);
  return (method == "POST" && allowed.find("POST") != std::string_view::npos) ||
         (method == "GET" && allowed.find("GET") != std::string_view::npos);
}

// ?format=json (the default) or ?format=table, and explain's ?top=N for the table.
struct View {
  bool table = false;
  std::size_t top = 0;
};

Result<View> viewOf(Verb verb, std::string_view rawPath) {
  View view;
  if (const auto format = queryParameter(rawPath, "format")) {
    if (*format == "table") {
      view.table = true;
    } else if (*format != "json") {
      return invalidArgument("format: one of json, table; got \"" + *format + "\"");
    }
  }
  if (const auto top = queryParameter(rawPath, "top"); top && verb == Verb::kExplain) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(top->data(), top->data() + top->size(), n);
    if (top->empty() || ec != std::errc{} || end != top->data() + top->size() || n == 0) {
      return invalidArgument("top: expected a positive whole number; got \"" + *top + "\"");
    }
    view.top = n;
  }
  return view;
}

Result<std::string> tableOf(Verb verb, std::string_view json, std::size_t top) {
  switch (verb) {
    case Verb::kWhatif:
      return report::whatifTable(json);
    case Verb::kNodes:
      return report::nodesTable(json);
    case Verb::kExplain:
    case Verb::kFilter:
    case Verb::kPrioritize:
    case Verb::kBind:
    case Verb::kPreempt:
      break;
  }
  return report::explainTable(json, top);
}

}  // namespace

Router::Router(std::string prefix, const ExtenderService& service, metrics::Metrics* metrics,
               std::string versionJson, RouterOptions options)
    : prefix_(stripTrailingSlashes(std::move(prefix))),
      service_(service),
      metrics_(metrics),
      versionJson_(std::move(versionJson)),
      options_(options) {}

std::optional<Verb> Router::verbAt(std::string_view path) const {
  if (!options_.serveVerbs) return std::nullopt;
  // Explain, whatif and nodes are also served at the root, whatever the prefix.
  for (const Verb verb : {Verb::kExplain, Verb::kWhatif, Verb::kNodes}) {
    if (path.size() == wire::verbName(verb).size() + 1 && path.front() == '/' &&
        path.substr(1) == wire::verbName(verb)) {
      return served(verb) ? std::optional<Verb>(verb) : std::nullopt;
    }
  }
  if (!path.starts_with(prefix_) || path.size() <= prefix_.size() + 1 ||
      path[prefix_.size()] != '/') {
    return std::nullopt;
  }
  const auto name = path.substr(prefix_.size() + 1);
  for (const Verb verb : wire::kVerbs) {
    if (name == wire::verbName(verb)) {
      return served(verb) ? std::optional<Verb>(verb) : std::nullopt;
    }
  }
  return std::nullopt;
}

bool Router::served(Verb verb) const noexcept {
  switch (verb) {
    case Verb::kExplain:
      return options_.explain;
    case Verb::kWhatif:
      return options_.whatif;
    case Verb::kNodes:
      return options_.nodes;
    case Verb::kFilter:
    case Verb::kPrioritize:
    case Verb::kBind:
    case Verb::kPreempt:
      break;
  }
  return true;
}

bool Router::acceptsBody(std::string_view method, std::string_view path) const {
  // Explain by pod name may wait on the API server: it goes to the decision pool like a verb.
  const auto verb = verbAt(stripQuery(path));
  return verb && methodAllowed(*verb, method);
}

bool Router::isBind(std::string_view method, std::string_view path) const {
  return method == "POST" && verbAt(stripQuery(path)) == Verb::kBind;
}

void Router::dispatch(std::string_view method, std::string_view rawPath, std::string_view body,
                      std::function<void(Reply)> done, BindCaller caller) const {
  const auto path = stripQuery(rawPath);
  const std::optional<Verb> verb = verbAt(path);
  if (!verb) {
    done(route(method, path));
    return;
  }
  const auto started = std::chrono::steady_clock::now();
  const auto answer = [&](Reply reply) {
    observe(*verb, reply.status, started);
    reply.closeConnection = reply.closeConnection || service_.redirectsCallers();
    done(std::move(reply));
  };
  if (!methodAllowed(*verb, method)) {
    answer(methodNotAllowed(method, path, allowedMethods(*verb)));
    return;
  }
  switch (*verb) {
    case Verb::kFilter:
    case Verb::kPrioritize:
      answer(decide(*verb, body));
      return;
    case Verb::kPreempt: {
      std::optional<Reply> refusal = refuseShape(*verb, body);
      answer(refusal ? std::move(*refusal) : service_.preempt(body));
      return;
    }
    case Verb::kExplain:
      answer(viewed(*verb, rawPath, [&] { return explain(method, rawPath, body); }));
      return;
    case Verb::kWhatif:
      answer(viewed(*verb, rawPath, [&] { return service_.whatif(body); }));
      return;
    case Verb::kNodes:
      answer(viewed(*verb, rawPath, [&] { return nodes(rawPath); }));
      return;
    case Verb::kBind:
      service_.bind(
          body,
          [this, started, done = std::move(done)](Reply reply) {
            observe(Verb::kBind, reply.status, started);
            reply.closeConnection = reply.closeConnection || service_.redirectsCallers();
            done(std::move(reply));
          },
          std::move(caller));
      return;
  }
}

Reply Router::explain(std::string_view method, std::string_view rawPath,
                      std::string_view body) const {
  if (method == "POST") {
    if (auto refusal = refuseShape(Verb::kExplain, body)) return std::move(*refusal);
    return service_.explain(body);
  }
  if (const auto pod = queryParameter(rawPath, "pod")) return service_.explainPod(*pod);
  return errorReply(Verb::kExplain,
                    invalidArgument("explain: GET needs ?pod=NAMESPACE/NAME; or POST an "
                                    "ExtenderArgs body"));
}

Reply Router::nodes(std::string_view rawPath) const {
  NodesQuery query;
  query.limit = options_.maxNodesPerRequest;
  if (const auto node = queryParameter(rawPath, "node")) query.node = *node;
  if (const auto limit = queryParameter(rawPath, "limit")) {
    std::size_t n = 0;
    const auto [end, ec] = std::from_chars(limit->data(), limit->data() + limit->size(), n);
    if (limit->empty() || ec != std::errc{} || end != limit->data() + limit->size() || n == 0) {
      return errorReply(Verb::kNodes, invalidArgument("limit: expected a positive whole number; "
                                                      "got \"" +
                                                      *limit + "\""));
    }
    if (n > options_.maxNodesPerRequest) {
      return refuse(Verb::kNodes,
                    Error{ErrorCode::kTooLarge,
                          "limit: " + *limit + " nodes exceed --max-nodes-per-request (" +
                              std::to_string(options_.maxNodesPerRequest) + ")"});
    }
    query.limit = n;
  }
  return service_.nodes(query);
}

Reply Router::viewed(Verb verb, std::string_view rawPath, const std::function<Reply()>& run) const {
  auto view = viewOf(verb, rawPath);
  if (!view) return errorReply(verb, view.error());
  Reply reply = run();
  if (!view->table || reply.status != 200) return reply;
  auto table = tableOf(verb, reply.body, view->top);
  if (!table) {
    log::error("answer has no table",
               {{"verb", wire::verbName(verb)}, {"error", table.error().message}});
    return errorReply(verb, Error{ErrorCode::kInternal, table.error().message});
  }
  reply.body = std::move(*table);
  reply.contentType = "text/plain; charset=utf-8";
  return reply;
}

void Router::observe(Verb verb, int status, std::chrono::steady_clock::time_point started) const {
  if (!metrics_) return;
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - started;
  metrics_->observeRequest(verb, status, took.count());
}

Reply Router::route(std::string_view method, std::string_view path) const {
  Reply reply;
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
    if (metrics_) metrics_->observeUnknownPath(404);
    return httpErrorReply(404, "no such endpoint: " + std::string(path));
  }
  if (method != "GET" && method != "HEAD") return methodNotAllowed(method, path, "GET, HEAD");
  if (method == "HEAD") reply.body.clear();
  return reply;
}

Reply Router::readiness() const {
  if (draining_) return textReply(503, "not ready: shutting down\n");
  std::string why;
  return service_.ready(&why) ? textReply(200, "ok\n") : textReply(503, "not ready: " + why + "\n");
}

Reply Router::decide(Verb verb, std::string_view body) const {
  wire::ArgsLimits limits;
  limits.maxNodes = options_.maxNodesPerRequest;
  limits.nodeObjectsRefused = options_.namesOnly;
  auto args = wire::parseExtenderArgs(body, limits);
  // The codes only the limits produce (parseExtenderArgs); any other error is a malformed body,
  // which the verb answers itself.
  if (!args && (args.error().code == ErrorCode::kFailedPrecondition ||
                args.error().code == ErrorCode::kTooLarge)) {
    return refuse(verb, args.error());
  }
  return verb == Verb::kFilter ? service_.filter(std::move(args))
                               : service_.prioritize(std::move(args));
}

std::optional<Reply> Router::refuseShape(Verb verb, std::string_view body) const {
  const auto shape = scanRequestShape(body, options_.maxNodesPerRequest);
  if (!shape) return std::nullopt;  // malformed: the verb's parser says precisely how
  // Preempt's NodeNameToVictims carries pods, not Node objects: it is judged from the cache.
  if (options_.namesOnly && shape->fullNodes && verb != Verb::kPreempt) {
    return refuse(verb, wire::nodeObjectsRefused());
  }
  if (shape->nodes > options_.maxNodesPerRequest) {
    return refuse(verb, wire::tooManyNodes(options_.maxNodesPerRequest));
  }
  return std::nullopt;
}

Reply Router::refuse(Verb verb, const Error& refusal) const {
  const std::string_view reason =
      refusal.code == ErrorCode::kTooLarge ? "too_many_nodes" : "full_nodes_refused";
  log::warn("request refused",
            {{"verb", wire::verbName(verb)}, {"reason", reason}, {"error", refusal.message}});
  if (metrics_) metrics_->countRejectedRequest(reason);
  return errorReply(verb, refusal);
}

Reply Router::headerTooLarge(std::size_t limit) const {
  log::warn("request header too large", {{"limit_bytes", std::to_string(limit)}});
  if (metrics_) metrics_->countRejectedRequest("header_too_large");
  return httpErrorReply(431, "request header exceeds the limit of " + std::to_string(limit) +
                                 " bytes (--max-header-bytes)");
}

void Router::countRejected(std::string_view reason) const {
  if (metrics_) metrics_->countRejectedRequest(reason);
}

Reply Router::tooLarge(std::string_view path, std::size_t limit) const {
  log::warn("request body too large", {{"path", path}, {"limit_bytes", std::to_string(limit)}});
  if (metrics_) metrics_->countRejectedRequest("body_too_large");
  return httpErrorReply(413, "request body exceeds the limit of " + std::to_string(limit) +
                                 " bytes (--max-body-bytes)");
}

Reply Router::badRequest(std::string_view path, std::string_view why) const {
  log::warn("bad request", {{"path", path}, {"error", why}});
  if (metrics_) metrics_->countRejectedRequest("bad_request");
  return httpErrorReply(400, why);
}

}  // namespace gte::server
