#pragma once
// The one table from an error to what the caller receives, per verb. kube-scheduler treats any
// non-200 answer as a failed call and reads no body from it; the answers of filter
// (ExtenderFilterResult) and bind (ExtenderBindingResult) have an `Error` field it reads and
// reports, those of prioritize (HostPriorityList) and preempt (ExtenderPreemptionResult) have
// none, and explain, whatif and nodes are read by people and tools that see the status:
//
//   code \ verb            filter / bind                prioritize / preempt / explain / whatif /
//                                                       nodes
//   kInvalidArgument       200, message in `Error`      400  (malformed body or query)
//   kFailedPrecondition    200, message in `Error`      400  (never clears: fix the configuration)
//   kNotFound              200, message in `Error`      404
//   kTooLarge              200, message in `Error`      413  (more than --max-nodes-per-request,
//                                                            a what-if over its limits)
//   kUnavailable           200, message in `Error`      503  (clears by itself: cache not synced,
//                                                            another what-if running)
//   kInternal              200, message in `Error`      500
//
// With the message in `Error`, a filter error reaches the pod's FailedScheduling event and a bind
// error the bind failure; kube-scheduler retries the pod with backoff either way. A prioritize
// error leaves the extender's scores out of that cycle; a preempt error leaves the cycle without
// preemption. Without a body to read, the status is what tells the causes apart.
//
// Before a verb runs, HTTP itself is answered the same for every path (httpErrorReply): 400 for
// malformed HTTP, 404 for a path that is no endpoint, 405 for a wrong method (with `Allow`), 413
// for a body over --max-body-bytes (refused before or while it is read: there is no verb request
// to answer), 431 for a header over --max-header-bytes.
//
// Every message, in either form, starts with the reason prefix (wire::kReasonPrefix).
#include <string_view>

#include "base/result.h"
#include "service/reply.h"
#include "wire/verb.h"

namespace gte {

Reply errorReply(wire::Verb verb, const Error& error);

// An HTTP-level refusal: `status` with a JSON {"Error": "<prefix><message>"} body.
Reply httpErrorReply(int status, std::string_view message);

// True for errors that go away without anyone acting (retrying is the fix); false for those that
// stay until the configuration or the input changes. Decides the log level at the edge.
constexpr bool clearsByItself(ErrorCode code) noexcept {
  return code == ErrorCode::kUnavailable;
}

}  // namespace gte
