#include "cluster/apiserver/pod_binder.h"

#include "cluster/apiserver/cache_sinks.h"
#include "cluster/gpu_annotation.h"
#include "json/json_writer.h"
#include "kube/api_status.h"
#include "kube/object_name.h"
#include "kube/resource_path.h"
#include "log/logger.h"

namespace gte::cluster {
namespace {

// The names were validated (bind); objectPath percent-encodes them all the same: a path is built
// from them and must never change shape whatever they hold.
std::string podPath(const BindRequest& request, std::string_view subresource = {}) {
  return kube::objectPath(kube::kPods, request.podNamespace, request.podName, subresource);
}

std::string podName(const BindRequest& request) {
  return request.podNamespace + "/" + request.podName;
}

Error alreadyBound(const BindRequest& request, const std::string& node) {
  return Error{ErrorCode::kFailedPrecondition,
               "pod " + podName(request) + " is already bound to node " + node};
}

Status validNames(const BindRequest& request) {
  if (!kube::isDns1123Label(request.podNamespace)) {
    return invalidArgument("invalid pod namespace \"" + request.podNamespace.substr(0, 80) +
                           "\": not a DNS-1123 label");
  }
  if (!kube::isDns1123Subdomain(request.podName)) {
    return invalidArgument("invalid pod name \"" + request.podName.substr(0, 80) +
                           "\": not a DNS-1123 subdomain");
  }
  return Ok{};
}

}  // namespace

std::string bindingBody(const BindRequest& request, const std::string& uid,
                        const std::string& annotationKey, const std::string& gpus) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("apiVersion").string("v1").key("kind").string("Binding");
  w.key("metadata").beginObject().key("name").string(request.podName);
  w.key("namespace").string(request.podNamespace);
  // A UID precondition: the API server refuses to bind a different pod of the same name (one
  // deleted and re-created since the scheduler decided).
  if (!uid.empty()) w.key("uid").string(uid);
  // The API server copies a Binding's annotations onto the pod in the write that sets nodeName.
  if (!gpus.empty()) {
    w.key("annotations").beginObject().key(annotationKey).string(gpus).endObject();
  }
  w.endObject();
  w.key("target").beginObject().key("apiVersion").string("v1").key("kind").string("Node");
  w.key("name").string(request.node).endObject();
  w.endObject();
  return out;
}

struct PodBinder::Attempt {
  BindRequest request;
  BindCaller caller;
  Done done;
  std::string uid;  // the precondition: the scheduler's PodUID, else the pod's own
  Allocation allocation;
  bool reserved = false;
  bool holdsSlot = false;
  bool podRead = false;
  std::chrono::steady_clock::time_point queued{};  // when it started waiting for a slot
  std::chrono::milliseconds slotWait{0};
};

PodBinder::PodBinder(std::shared_ptr<kube::ApiTransport> transport,
                     std::shared_ptr<cluster::ClusterState> state, PodBinderOptions options,
                     std::shared_ptr<LeaderGate> leader)
    : transport_(std::move(transport)),
      state_(std::move(state)),
      options_(std::move(options)),
      gate_(options_.concurrency),
      leader_(std::move(leader)) {}

void PodBinder::bind(BindRequest request, BindCaller caller, Done done) {
  if (auto valid = validNames(request); !valid) {
    done(BindOutcome{std::move(valid)});
    return;
  }
  auto attempt = std::make_shared<Attempt>();
  attempt->uid = request.podUid;
  attempt->request = std::move(request);
  attempt->caller = std::move(caller);
  attempt->done = std::move(done);
  if (!leader_) return lookUp(attempt);
  // A takeover's fresh list must be in before the cache is asked anything.
  auto self = shared_from_this();
  const auto deadline = attempt->caller.received + options_.deadline;
  leader_->whenActive(deadline, [self, attempt](Status active) {
    if (!active) {
      return self->finish(attempt, BindOutcome{std::move(active).error(), BindAbandon::kNotLeader});
    }
    self->lookUp(attempt);
  });
}

void PodBinder::lookUp(const AttemptPtr& attempt) {
  std::optional<PodInfo> cached;
  if (!attempt->uid.empty()) cached = state_->podToBind(attempt->uid);
  if (!cached) {
    fetchPod(attempt);  // the watch has not delivered it yet (or the caller sent no UID)
    return;
  }
  onPod(attempt, std::move(*cached));
}

void PodBinder::fetchPod(const AttemptPtr& attempt) {
  log::debug("bind: pod not in the cache yet; reading it", {{"pod", podName(attempt->request)}});
  attempt->podRead = true;
  auto self = shared_from_this();
  transport_->sendAsync(
      "GET", podPath(attempt->request), "", "application/json",
      [self, attempt](Result<kube::HttpResponse> response) {
        const BindRequest& request = attempt->request;
        if (!response) return self->finish(attempt, BindOutcome{std::move(response).error()});
        if (!response->success()) {
          return self->finish(
              attempt, BindOutcome{kube::statusError("get pod " + podName(request), *response)});
        }
        auto observed = observePod(response->body);
        if (!observed) {
          return self->finish(
              attempt, BindOutcome{Error{ErrorCode::kInternal,
                                         "pod " + podName(request) +
                                             " from the API server: " + observed.error().message}});
        }
        if (attempt->uid.empty()) attempt->uid = observed->pod.uid;
        const PodInfo& found = observed->pod;
        if (!found.nodeName.empty()) {
          if (found.uid != attempt->uid) {
            return self->finish(
                attempt, BindOutcome{Error{ErrorCode::kFailedPrecondition,
                                           "pod " + podName(request) + " is now UID " + found.uid +
                                               ", bound to node " + found.nodeName + ", not UID " +
                                               attempt->uid + " (deleted and re-created)"}});
          }
          if (found.nodeName != request.node) {
            return self->finish(attempt, BindOutcome{alreadyBound(request, found.nodeName)});
          }
          self->state_->upsertPod(std::move(*observed));  // bound already: make sure it counts
          return self->finish(attempt, BindOutcome{Ok{}});
        }
        PodInfo pod = std::move(observed->pod);
        // A different UID: the pod was re-created since the scheduler decided. The Binding still
        // carries the scheduler's UID, and the API server refuses it.
        pod.uid = attempt->uid;
        self->onPod(attempt, std::move(pod));
      });
}

void PodBinder::onPod(const AttemptPtr& attempt, PodInfo pod) {
  const BindRequest& request = attempt->request;
  if (!pod.nodeName.empty()) {
    // Bound already, as the watch reported: ours (a retried bind) or someone else's.
    if (pod.nodeName == request.node) return finish(attempt, BindOutcome{Ok{}});
    return finish(attempt, BindOutcome{alreadyBound(request, pod.nodeName)});
  }
  // The same fit check filter made, against everything reserved since: a refusal carries
  // filter's reason.
  auto reserved = state_->reserve(pod, request.node);
  if (!reserved) return finish(attempt, BindOutcome{std::move(reserved).error()});
  attempt->allocation = std::move(*reserved);
  attempt->reserved = true;
  auto self = shared_from_this();
  attempt->queued = options_.now();
  gate_.submit([self, attempt](bool cancelled) { self->onSlot(attempt, cancelled); });
}

void PodBinder::onSlot(const AttemptPtr& attempt, bool cancelled) {
  if (cancelled) {
    return finish(attempt,
                  BindOutcome{Error{ErrorCode::kUnavailable, "the extender is shutting down"}});
  }
  attempt->holdsSlot = true;
  attempt->slotWait =
      std::chrono::duration_cast<std::chrono::milliseconds>(options_.now() - attempt->queued);
  const BindAbandon reason = abandonReason(*attempt);
  if (reason == BindAbandon::kNone) {
    // The last moment to find out that this replica is no longer the leader.
    if (leader_) {
      if (auto fenced = leader_->mayBind(options_.now()); !fenced) {
        return finish(attempt, BindOutcome{std::move(fenced).error(), BindAbandon::kNotLeader});
      }
    }
    return send(attempt);
  }
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
      options_.now() - attempt->caller.received);
  std::string why = reason == BindAbandon::kCallerGone
                        ? "kube-scheduler closed the connection (it stopped waiting)"
                        : "it waited " + std::to_string(waited.count()) +
                              " ms, past --bind-deadline (" +
                              std::to_string(options_.deadline.count()) +
                              " ms): kube-scheduler has stopped waiting";
  finish(attempt,
         BindOutcome{Error{ErrorCode::kUnavailable, "bind of pod " + podName(attempt->request) +
                                                        " to node " + attempt->request.node +
                                                        " abandoned before it was sent: " + why},
                     reason});
}

BindAbandon PodBinder::abandonReason(const Attempt& attempt) const {
  if (attempt.caller.hasGone()) return BindAbandon::kCallerGone;
  if (options_.now() - attempt.caller.received > options_.deadline) return BindAbandon::kDeadline;
  return BindAbandon::kNone;
}

void PodBinder::send(const AttemptPtr& attempt) {
  const std::string key =
      state_->snapshot()->policy->labelPrefix + std::string(cluster::kGpusAnnotation);
  std::string body = bindingBody(attempt->request, attempt->uid, key,
                                 cluster::formatGpuAnnotation(attempt->allocation));
  auto self = shared_from_this();
  transport_->sendAsync("POST", podPath(attempt->request, "binding"), std::move(body),
                        "application/json", [self, attempt](Result<kube::HttpResponse> response) {
                          if (response && response->success()) {
                            return self->finish(attempt, BindOutcome{Ok{}});
                          }
                          const BindRequest& r = attempt->request;
                          Error failure =
                              response ? kube::statusError(
                                             "bind pod " + podName(r) + " to " + r.node, *response)
                                       : std::move(response).error();
                          self->resolveFailure(attempt, std::move(failure));
                        });
}

void PodBinder::resolveFailure(const AttemptPtr& attempt, Error failure) {
  // A lost answer, or a 409 for our own retried bind, may hide a binding that did land: the pod
  // decides. This is the only read of the pod on the way of a bind the cache knew.
  auto self = shared_from_this();
  transport_->sendAsync(
      "GET", podPath(attempt->request), "", "application/json",
      [self, attempt, failure = std::move(failure)](Result<kube::HttpResponse> response) mutable {
        const BindRequest& request = attempt->request;
        if (response && response->success()) {
          if (auto observed = observePod(response->body); observed) {
            const PodInfo& pod = observed->pod;
            if (pod.uid == attempt->uid && pod.nodeName == request.node) {
              return self->finish(attempt, BindOutcome{Ok{}});
            }
            if (pod.uid == attempt->uid && !pod.nodeName.empty()) {
              return self->finish(attempt, BindOutcome{alreadyBound(request, pod.nodeName)});
            }
          }
        }
        self->finish(attempt, BindOutcome{std::move(failure)});
      });
}

void PodBinder::finish(const AttemptPtr& attempt, BindOutcome outcome) {
  if (!outcome.status && attempt->reserved) {
    state_->release(attempt->uid);
    attempt->reserved = false;
  }
  if (attempt->holdsSlot) {
    attempt->holdsSlot = false;
    gate_.release();
  }
  outcome.podRead = attempt->podRead;
  outcome.slotWait = attempt->slotWait;
  attempt->done(std::move(outcome));
}

void PodBinder::stop() {
  gate_.stop();
}

}  // namespace gte::cluster
