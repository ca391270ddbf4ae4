#include "service/error_reply.h"

#include "wire/extender_results.h"
#include "wire/reason.h"

namespace gte {
namespace {

// The status of an error for verbs without an `Error` field.
int statusOf(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kFailedPrecondition:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kTooLarge:
      return 413;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

}  // namespace

Reply errorReply(wire::Verb verb, const Error& error) {
  const std::string message = wire::prefixedReason(error.message);
  switch (verb) {
    case wire::Verb::kFilter:
      return Reply{200, wire::writeFilterError(message)};
    case wire::Verb::kBind:
      return Reply{200, wire::writeBindingResult(message)};
    case wire::Verb::kPrioritize:
    case wire::Verb::kPreempt:
    case wire::Verb::kExplain:
    case wire::Verb::kWhatif:
    case wire::Verb::kNodes:
      break;
  }
  return Reply{statusOf(error.code), wire::writeErrorBody(message)};
}

Reply httpErrorReply(int status, std::string_view message) {
  return Reply{status, wire::writeErrorBody(wire::prefixedReason(message))};
}

}  // namespace gte
