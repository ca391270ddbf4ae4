#pragma once
// The one table from an error to what kube-scheduler receives, per verb (kube-scheduler's extender
// contract: only HTTP 200 is success, and a non-200 carries no message to the user):
//
//   code \ verb            filter / bind                prioritize / preempt
//   kInvalidArgument       200, message in `Error`      400
//   kNotFound              200, message in `Error`      404
//   kFailedPrecondition    200, message in `Error`      400  (never clears: fix the configuration)
//   kUnavailable           200, message in `Error`      503  (clears by itself: cache not synced)
//   kTooLarge              200, message in `Error`      413
//   kInternal              200, message in `Error`      500
//
// Filter and bind have an `Error` field, so their errors travel in it with HTTP 200: the message
// then reaches the pod's events. kube-scheduler retries the pod with backoff either way.
// Prioritize errors are ignored by kube-scheduler (the extender's scores are left out of that
// cycle); a preempt error leaves that cycle without preemption. Every message carries the reason
// prefix.
#include <string_view>

#include "base/result.h"
#include "service/service_reply.h"

namespace gte {

enum class ExtenderVerb { kFilter, kPrioritize, kBind, kPreempt };

ServiceReply errorReply(ExtenderVerb verb, const Error& error);

// The HTTP status of an error for verbs without an `Error` field.
int httpStatusOf(ErrorCode code) noexcept;

// True for errors that go away without anyone acting (retrying is the fix); false for those that
// stay until the configuration or the input changes. Decides the log level at the edge.
constexpr bool clearsByItself(ErrorCode code) noexcept {
  return code == ErrorCode::kUnavailable;
}

}  // namespace gte
