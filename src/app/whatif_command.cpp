#include "app/whatif_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "app/extender_client.h"
#include "json/json_reader.h"
#include "json/json_writer.h"
#include "report/nodes_table.h"
#include "report/whatif_table.h"

namespace gte::app {
namespace {

// The annotations the what-if pod carries (the extender's default prefix).
constexpr std::string_view kAnnotationPrefix = "gputopo.dev/";

void writePod(json::JsonWriter& w, const WhatifOptions& o) {
  w.beginObject().key("metadata").beginObject();
  w.key("name").string("whatif").key("namespace").string("default");
  w.key("annotations").beginObject();
  const std::pair<std::string_view, const std::string*> annotations[] = {
      {"min-link", &o.minLink}, {"numa", &o.numa}, {"strategy", &o.strategy}};
  for (const auto& [key, value] : annotations) {
    if (!value->empty()) w.key(std::string(kAnnotationPrefix) + std::string(key)).string(*value);
  }
  w.endObject().endObject();
  w.key("spec").beginObject().key("containers").beginArray().element().beginObject();
  w.key("name").string("whatif").key("resources").beginObject().key("limits").beginObject();
  if (o.gpus > 0) w.key("nvidia.com/gpu").string(std::to_string(o.gpus));
  if (!o.mig.empty()) w.key("nvidia.com/mig-" + o.mig).string("1");
  w.endObject().endObject().endObject().endArray().endObject().endObject();
}

Result<std::string> readFile(const std::string& flag, const std::string& path) {
  if (path.empty()) return std::string();
  std::ifstream in(path, std::ios::binary);
  if (!in) return invalidArgument(flag + ": cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

Result<std::string> whatifBody(const WhatifOptions& options, const WhatifFiles& files) {
  std::string body;
  json::JsonWriter w(body);
  w.beginObject();
  if (!options.podFile.empty()) {
    json::JsonReader check(files.pod);
    std::string_view span;
    if (check.peek() != json::Kind::kObject || !check.skipValue(&span) || !check.finish()) {
      return invalidArgument(
          "--pod-file: not one JSON object (a v1.Pod as kubectl get pod -o "
          "json prints it)" +
          (check.ok() ? std::string() : ": " + check.error()));
    }
    w.key("pod").rawValue(span);
  } else if (!options.csvFile.empty()) {
    w.key("csv").string(files.csv);
  } else {
    w.key("pod");
    writePod(w, options);
  }
  if (options.count > 0) w.key("count").integer(static_cast<std::int64_t>(options.count));
  if (options.groupSize > 0) {
    w.key("groupSize").integer(static_cast<std::int64_t>(options.groupSize));
  }
  if (!options.policyFile.empty()) w.key("policy").string(files.policy);
  w.endObject();
  return body;
}

int runWhatifCommand(const WhatifOptions& options) {
  WhatifFiles files;
  std::string* contents[] = {&files.pod, &files.csv, &files.policy};
  const std::pair<std::string, std::string> named[] = {{"--pod-file", options.podFile},
                                                       {"--csv", options.csvFile},
                                                       {"--policy", options.policyFile}};
  for (std::size_t i = 0; i < 3; ++i) {
    auto text = readFile(named[i].first, named[i].second);
    if (!text) {
      std::fprintf(stderr, "gpu-topology-extender whatif: %s\n", text.error().message.c_str());
      return 1;
    }
    *contents[i] = std::move(*text);
  }
  auto body = whatifBody(options, files);
  if (!body) {
    std::fprintf(stderr, "gpu-topology-extender whatif: %s\n", body.error().message.c_str());
    return 1;
  }
  return printExtenderAnswer("whatif", options.url, "POST", "/whatif", *body, options.output,
                             report::whatifTable);
}

int runNodesCommand(const NodesOptions& options) {
  std::string path = "/nodes";
  char separator = '?';
  if (!options.node.empty()) {
    path.push_back(separator);
    path.append("node=").append(queryEscape(options.node));
    separator = '&';
  }
  if (options.limit > 0) {
    path.push_back(separator);
    path.append("limit=").append(std::to_string(options.limit));
  }
  return printExtenderAnswer("nodes", options.url, "GET", path, {}, options.output,
                             report::nodesTable);
}

}  // namespace gte::app
