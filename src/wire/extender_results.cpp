#include "wire/extender_results.h"

#include <algorithm>
#include <charconv>

#include "json/json_writer.h"

namespace gte::wire {
namespace {

// Most failed nodes of a request share a few reasons: each distinct text is quoted once.
void writeFailedMap(json::JsonWriter& w, const std::vector<FailedNode>& failed) {
  std::vector<std::pair<std::string_view, std::string>> quoted;
  w.beginObject();
  for (const auto& f : failed) {
    auto it = std::find_if(quoted.begin(), quoted.end(), [&](const auto& q) {
      return q.first.data() == f.reason.data() && q.first.size() == f.reason.size();
    });
    if (it == quoted.end()) {
      std::string text;
      json::appendQuoted(text, f.reason);
      it = quoted.emplace(quoted.end(), f.reason, std::move(text));
    }
    w.key(f.name).rawValue(it->second);
  }
  w.endObject();
}

// Bytes of the quoted strings and separators the answer will hold, so that it is written into
// one allocation (escapes aside).
std::size_t filterResultSize(const FilterResult& result) {
  std::size_t bytes = 160 + result.error.size();
  for (const auto raw : result.keptNodes)
    bytes += raw.size() + 1;
  for (const auto name : result.keptNames)
    bytes += name.size() + 3;
  for (const auto* failed : {&result.failed, &result.failedUnresolvable}) {
    for (const FailedNode& f : *failed)
      bytes += f.name.size() + f.reason.size() + 6;
  }
  return bytes;
}

}  // namespace

std::string writeFilterResult(const FilterResult& result) {
  std::string out;
  out.reserve(filterResultSize(result));
  json::JsonWriter w(out);
  w.beginObject();
  // Exactly one of Nodes / NodeNames is non-null: a null pair would reject every node.
  w.key("Nodes");
  if (result.nodesMode) {
    w.beginObject().key("metadata").beginObject().endObject().key("items").beginArray();
    for (auto raw : result.keptNodes)
      w.element().rawValue(raw);
    w.endArray().endObject();
  } else {
    w.null();
  }
  w.key("NodeNames");
  if (result.nodesMode) {
    w.null();
  } else {
    w.beginArray();
    for (const auto& name : result.keptNames)
      w.element().string(name);
    w.endArray();
  }
  w.key("FailedNodes");
  writeFailedMap(w, result.failed);
  w.key("FailedAndUnresolvableNodes");
  writeFailedMap(w, result.failedUnresolvable);
  w.key("Error").string(result.error);
  w.endObject();
  return out;
}

std::string writeFilterError(std::string_view message) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject()
      .key("Nodes")
      .null()
      .key("NodeNames")
      .null()
      .key("FailedNodes")
      .null()
      .key("FailedAndUnresolvableNodes")
      .null()
      .key("Error")
      .string(message)
      .endObject();
  return out;
}

// [{"Host":"a","Score":10},...]: one entry per node of the request (5,000 in a large cluster).
// Node names never need escaping in practice (they are DNS subdomains): then every entry is copied
// straight into one buffer sized up front; otherwise each name goes through appendQuoted.
std::string writeHostPriorityList(const std::vector<HostPriority>& list) {
  constexpr std::string_view kHost = R"({"Host":")";
  constexpr std::string_view kScore = R"(","Score":)";
  constexpr std::size_t kDigits = 20;  // an int64 with its sign
  bool verbatim = true;
  std::size_t bytes = 2;
  for (const auto& hp : list) {
    verbatim = verbatim && json::quotesVerbatim(hp.host);
    bytes += 1 + kHost.size() + hp.host.size() + kScore.size() + kDigits + 1;
  }
  std::string out;
  if (!verbatim) {
    out.push_back('[');
    for (const auto& hp : list) {
      if (out.size() > 1) out.push_back(',');
      out.append(R"({"Host":)");
      json::appendQuoted(out, hp.host);
      out.append(R"(,"Score":)");
      char digits[kDigits + 4];
      out.append(digits, std::to_chars(digits, digits + sizeof digits, hp.score).ptr);
      out.push_back('}');
    }
    out.push_back(']');
    return out;
  }
  out.resize(bytes);
  char* p = out.data();
  *p++ = '[';
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (i > 0) *p++ = ',';
    p = std::copy(kHost.begin(), kHost.end(), p);
    p = std::copy(list[i].host.begin(), list[i].host.end(), p);
    p = std::copy(kScore.begin(), kScore.end(), p);
    p = std::to_chars(p, p + kDigits, list[i].score).ptr;
    *p++ = '}';
  }
  *p++ = ']';
  out.resize(static_cast<std::size_t>(p - out.data()));
  return out;
}

std::string writeBindingResult(std::string_view error) {
  std::string out;
  json::JsonWriter(out).beginObject().key("Error").string(error).endObject();
  return out;
}

std::string writePreemptionResult(const std::vector<MetaVictims>& nodes) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("NodeNameToMetaVictims").beginObject();
  for (const auto& mv : nodes) {
    w.key(mv.node).beginObject().key("Pods").beginArray();
    for (const auto& uid : mv.podUids)
      w.element().beginObject().key("UID").string(uid).endObject();
    w.endArray().key("NumPDBViolations").integer(mv.numPdbViolations).endObject();
  }
  w.endObject().endObject();
  return out;
}

std::string writeErrorBody(std::string_view message) {
  std::string out;
  json::JsonWriter(out).beginObject().key("Error").string(message).endObject();
  return out;
}

}  // namespace gte::wire
