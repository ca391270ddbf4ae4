#pragma once
// How the commands (explain, whatif, nodes) talk to a running extender: one plain-HTTP request to
// its base URL (after `kubectl port-forward`, for instance), and the common tail of printing the
// answer as the extender's JSON or as its operator table (src/report).
#include <functional>
#include <string>
#include <string_view>

#include "app/cli_options.h"
#include "base/result.h"

namespace gte::app {

struct ExtenderTarget {
  std::string host;
  std::string port = "80";
  std::string basePath;  // without a trailing slash
};

// http://HOST[:PORT][/BASE]; errors name what is missing.
Result<ExtenderTarget> parseExtenderUrl(const std::string& url);

// Percent-encodes everything but unreserved characters, so "ml/train" travels as "ml%2Ftrain".
std::string queryEscape(std::string_view text);

// Asks URL+pathAndQuery with `method` (GET without a body, POST with a JSON body) and prints the
// answer: the JSON as is (`output` json) or `table` of it. The exit status: 0; 1 when the extender
// could not be reached, refused (its message on stderr) or answered something `table` cannot
// read; 2 for a bad URL. `command` prefixes the messages.
int printExtenderAnswer(std::string_view command, const std::string& url, std::string_view method,
                        const std::string& pathAndQuery, const std::string& body,
                        OutputFormat output,
                        const std::function<Result<std::string>(std::string_view)>& table);

}  // namespace gte::app
