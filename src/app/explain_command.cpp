#include "app/explain_command.h"

#include "app/extender_client.h"
#include "report/explain_table.h"

namespace gte::app {

int runExplainCommand(const ExplainOptions& options) {
  return printExtenderAnswer(
      "explain", options.url, "GET", "/explain?pod=" + queryEscape(options.pod), {}, options.output,
      [&options](std::string_view json) { return report::explainTable(json, options.top); });
}

}  // namespace gte::app
