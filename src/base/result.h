#pragma once
// Errors as values: parsing and decision code return Result<T> instead of
// throwing, so the request path never unwinds through cpprest's thread pool.
#include <string>
#include <utility>
#include <variant>

namespace gte {

// What the caller should do about an error; picks the HTTP status or wire field at the edge.
enum class ErrorCode {
  kInvalidArgument,     // the input is malformed: 400 / Error field
  kNotFound,            // an unknown name or path: 404
  kFailedPrecondition,  // a configuration or state that retrying will not fix (NodeNames sent to an
                        // extender without a cluster, a bind that no longer fits)
  kUnavailable,         // clears by itself: retry this call (API server unreachable, cache not
                        // synced yet)
  kTooLarge,            // a body or value over a configured limit: 413
  kInternal,            // a broken invariant: logged and counted
};

const char* errorCodeName(ErrorCode code) noexcept;

struct Error {
  ErrorCode code = ErrorCode::kInvalidArgument;
  std::string message;
};

inline Error invalidArgument(std::string message) {
  return Error{ErrorCode::kInvalidArgument, std::move(message)};
}

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design, like StatusOr
  Result(Error error) : v_(std::move(error)) {}  // NOLINT

  bool ok() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return ok(); }

  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Error> v_;
};

// For operations that produce nothing but may fail.
struct Ok {};
using Status = Result<Ok>;

}  // namespace gte
