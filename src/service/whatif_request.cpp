#include "service/whatif_request.h"

#include <algorithm>

#include "json/json_reader.h"
#include "model/resource_list_json.h"
#include "sim/openb_csv.h"

namespace gte {
namespace {

Error tooManyPods(std::string_view what, std::size_t pods, std::size_t maxPods) {
  return Error{ErrorCode::kTooLarge, std::string(what) + ": " + std::to_string(pods) +
                                         " pods exceed the what-if limit of " +
                                         std::to_string(maxPods) + " (--whatif-max-pods)"};
}

// Rows after the header, counted before the CSV is parsed, so an oversized CSV costs one scan.
std::size_t csvRows(std::string_view csv) {
  std::size_t lines = 0;
  std::size_t start = 0;
  while (start < csv.size()) {
    std::size_t end = csv.find('\n', start);
    if (end == std::string_view::npos) end = csv.size();
    std::string_view line = csv.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) ++lines;
    start = end + 1;
  }
  return lines == 0 ? 0 : lines - 1;
}

// A value of another kind than a field wants: `message`, or a malformed body when the value is
// not JSON at all (the body ends, or a byte no value starts with).
Error wrongKind(json::JsonReader& r, std::string message) {
  const json::Kind kind = r.peek();
  if (kind == json::Kind::kEnd) {
    r.fail("unexpected end of input");
  } else if (kind == json::Kind::kInvalid && r.ok()) {
    r.fail("unexpected character");
  }
  if (!r.ok()) return json::readerError(r, "request body");
  return invalidArgument(std::move(message));
}

Status readPod(json::JsonReader& r, WhatifRequest& out) {
  std::string_view span;
  if (r.peek() != json::Kind::kObject) return wrongKind(r, "pod: expected a v1.Pod object");
  if (!r.skipValue(&span)) return json::readerError(r, "request body");
  auto pod = parsePodJson(span);
  if (!pod) return invalidArgument("pod: " + pod.error().message);
  out.pod = std::move(*pod);
  return Ok{};
}

// A whole number of pods from 1 to maxPods: `count`, `groupSize`.
Status readPodNumber(json::JsonReader& r, std::string_view field, std::string_view unit,
                     std::size_t maxPods, std::int64_t& out) {
  if (r.peek() != json::Kind::kNumber || !r.readInt64(out)) {
    return wrongKind(r, std::string(field) + ": expected a whole number of " + std::string(unit));
  }
  if (out < 1) return invalidArgument(std::string(field) + ": must be at least 1");
  if (static_cast<std::uint64_t>(out) > maxPods) {
    return tooManyPods(field, static_cast<std::size_t>(out), maxPods);
  }
  return Ok{};
}

Status readCsv(json::JsonReader& r, std::size_t maxPods, WhatifRequest& out) {
  std::string csv;
  if (r.peek() != json::Kind::kString || !r.readString(csv)) {
    return wrongKind(r, "csv: expected a string (the CSV text)");
  }
  if (const std::size_t rows = csvRows(csv); rows > maxPods) {
    return tooManyPods("csv", rows, maxPods);
  }
  auto pods = sim::parseOpenbPods(csv);
  if (!pods) return invalidArgument("csv: " + pods.error().message);
  if (pods->empty()) return invalidArgument("csv: no pods after the header");
  out.csvPods = std::move(*pods);
  return Ok{};
}

Status readPolicy(json::JsonReader& r, WhatifRequest& out) {
  std::string yaml;
  if (r.peek() != json::Kind::kString || !r.readString(yaml)) {
    return wrongKind(r, "policy: expected a string (the policy YAML)");
  }
  if (yaml.size() > kMaxWhatifPolicyBytes) {
    return Error{ErrorCode::kTooLarge, "policy: " + std::to_string(yaml.size()) +
                                           " bytes exceed the limit of " +
                                           std::to_string(kMaxWhatifPolicyBytes)};
  }
  out.policyYaml = std::move(yaml);
  return Ok{};
}

}  // namespace

Result<WhatifRequest> parseWhatifRequest(std::string_view body, std::size_t maxPods) {
  json::JsonReader r(body);
  WhatifRequest out;
  bool sawCount = false;
  if (!r.beginObject()) return json::readerError(r, "request body");
  std::string key;
  while (r.nextKey(key)) {
    Status s = Ok{};
    if (key == "pod") {
      s = readPod(r, out);
    } else if (key == "count") {
      sawCount = true;
      s = readPodNumber(r, "count", "pods", maxPods, out.count);
    } else if (key == "groupSize") {
      std::int64_t size = 0;
      s = readPodNumber(r, "groupSize", "members", maxPods, size);
      out.groupSize = size;
    } else if (key == "csv") {
      s = readCsv(r, maxPods, out);
    } else if (key == "policy") {
      s = readPolicy(r, out);
    } else {
      return invalidArgument("unknown field \"" + key +
                             "\" (expected pod, count, groupSize, csv, policy)");
    }
    if (!s) return std::move(s).error();
  }
  if (!r.ok() || !r.finish()) return json::readerError(r, "request body");
  if (out.pod.has_value() == !out.csvPods.empty()) {
    return invalidArgument("give either \"pod\" (a v1.Pod, with an optional \"count\") or \"csv\"");
  }
  if (sawCount && !out.pod) return invalidArgument("count: goes with \"pod\", not \"csv\"");
  if (out.groupSize && !out.pod) {
    return invalidArgument("groupSize: goes with \"pod\", not \"csv\"");
  }
  if (out.groupSize && sawCount) {
    return invalidArgument(
        "groupSize: give either \"count\" (pods placed one after another) or \"groupSize\" (one "
        "group of that many members), not both");
  }
  return out;
}

}  // namespace gte
