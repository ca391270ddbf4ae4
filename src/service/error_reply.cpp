#include "service/error_reply.h"

#include "wire/extender_results.h"
#include "wire/reason.h"

namespace gte {

int httpStatusOf(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kFailedPrecondition:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kUnavailable:
      return 503;
    case ErrorCode::kTooLarge:
      return 413;
    case ErrorCode::kInternal:
      return 500;
  }
  return 500;
}

ServiceReply errorReply(ExtenderVerb verb, const Error& error) {
  const std::string message = wire::prefixedReason(error.message);
  switch (verb) {
    case ExtenderVerb::kFilter:
      return ServiceReply{200, wire::writeFilterError(message)};
    case ExtenderVerb::kBind:
      return ServiceReply{200, wire::writeBindingResult(message)};
    case ExtenderVerb::kPrioritize:
    case ExtenderVerb::kPreempt:
      break;
  }
  return ServiceReply{httpStatusOf(error.code), wire::writeErrorBody(message)};
}

}  // namespace gte
