#include "base/result.h"

namespace gte {

const char* errorCodeName(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid_argument";
    case ErrorCode::kNotFound:
      return "not_found";
    case ErrorCode::kFailedPrecondition:
      return "failed_precondition";
    case ErrorCode::kUnavailable:
      return "unavailable";
    case ErrorCode::kTooLarge:
      return "too_large";
    case ErrorCode::kInternal:
      return "internal";
  }
  return "unknown";
}

}  // namespace gte
