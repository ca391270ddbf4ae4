// Non-2xx answers of the API server as errors.
#include "kube/api_status.h"

#include <catch2/catch_test_macros.hpp>

using namespace gte::kube;
using gte::ErrorCode;

TEST_CASE("API status: the Status message, else the body") {
  CHECK(
      statusMessage(R"({"kind":"Status","code":409,"message":"Operation cannot be fulfilled"})") ==
      "Operation cannot be fulfilled");
  CHECK(statusMessage(R"({"kind":"Status","message":7,"code":500})") ==
        R"({"kind":"Status","message":7,"code":500})");
  CHECK(statusMessage("<html>Bad Gateway</html>") == "<html>Bad Gateway</html>");
}

TEST_CASE("API status: the code says whether waiting helps") {
  struct Row {
    int status;
    ErrorCode code;
  };
  for (const Row& row :
       {Row{404, ErrorCode::kNotFound}, Row{500, ErrorCode::kUnavailable},
        Row{503, ErrorCode::kUnavailable}, Row{403, ErrorCode::kFailedPrecondition},
        Row{409, ErrorCode::kFailedPrecondition}}) {
    INFO(row.status);
    const auto error = statusError("get pod ml/x", HttpResponse{row.status, R"({"message":"m"})"});
    CHECK(error.code == row.code);
    CHECK(error.message == "get pod ml/x: HTTP " + std::to_string(row.status) + ": m");
  }
  // A long message is cut at 600 characters: "what: HTTP 500: " is 16 more.
  CHECK(statusError("what", HttpResponse{500, std::string(1000, 'x')}).message.size() == 616);
}
