#pragma once
// What a non-2xx answer of the API server says: its body is usually a metav1.Status whose message
// is the server's own words ("pods \"x\" not found", "... Precondition failed: UID in precondition:
// ..."), else whatever a proxy in between wrote.
#include <string>
#include <string_view>

#include "base/result.h"
#include "kube/api_transport.h"

namespace gte::kube {

// The `message` of a Status body; the body itself when it is not one or has none.
std::string statusMessage(std::string_view body);

// A non-2xx answer as an error: kNotFound for 404, kUnavailable for 5xx (it may clear by itself),
// kFailedPrecondition for any other status; the message reads "<what>: HTTP <status>:
// <statusMessage>", the Status message cut at 600 characters.
Error statusError(const std::string& what, const HttpResponse& response);

}  // namespace gte::kube
