#include "report/json_fields.h"

#include <cstdint>

namespace gte::report {

using json::JsonReader;
using json::Kind;

bool readScalar(JsonReader& r, std::string& out) {
  out.clear();
  switch (r.peek()) {
    case Kind::kString:
      return r.readString(out);
    case Kind::kNumber: {
      std::int64_t n = 0;
      if (!r.readInt64(n)) return false;
      out = std::to_string(n);
      return true;
    }
    default:
      return r.skipValue();
  }
}

bool readInts(JsonReader& r, std::string& out) {
  out.clear();
  if (r.peek() != Kind::kArray) return r.skipValue();
  r.beginArray();
  while (r.nextElement()) {
    std::int64_t n = 0;
    if (!r.readInt64(n)) return false;
    if (!out.empty()) out.push_back(',');
    out += std::to_string(n);
  }
  return r.ok();
}

bool readDemandText(JsonReader& r, std::string& out) {
  if (r.readNull()) return true;
  std::string gpus = "0", minLink, strategy, mig;
  bool singleNuma = false;
  const bool ok = readObject(r, {{"gpus", &gpus}, {"minLink", &minLink}, {"strategy", &strategy}},
                             [&](const std::string& key) {
                               if (key == "singleNuma") return r.readBool(singleNuma);
                               if (key != "mig" || r.peek() != Kind::kArray) return false;
                               r.beginArray();
                               while (r.nextElement()) {
                                 std::string profile, count;
                                 if (!readObject(r, {{"profile", &profile}, {"count", &count}})) {
                                   return false;
                                 }
                                 if (!mig.empty()) mig.append(", ");
                                 mig.append(count).append("x MIG ").append(profile);
                               }
                               return r.ok();
                             });
  if (!ok) return false;
  out.clear();
  const auto part = [&out](const std::string& text) {
    if (!out.empty()) out.append(", ");
    out.append(text);
  };
  if (gpus != "0") part(gpus + (gpus == "1" ? " GPU" : " GPUs"));
  if (!mig.empty()) part(mig);
  if (!minLink.empty()) part("min-link " + minLink);
  if (singleNuma) part("single NUMA node");
  if (!strategy.empty()) part(strategy);
  return true;
}

bool readJoined(JsonReader& r, std::string& out, char separator, bool keys) {
  out.clear();
  if (r.readNull()) return true;
  if (!r.beginObject()) return false;
  std::string key, value;
  while (r.nextKey(key)) {
    if (!readScalar(r, value)) return false;
    if (!out.empty()) out.push_back(separator);
    if (keys) out.append(key).push_back(':');
    out += value;
  }
  return r.ok();
}

Status finishDocument(JsonReader& r, std::string_view what) {
  if (r.ok()) r.finish();
  if (!r.ok()) return invalidArgument("not " + std::string(what) + " document: " + r.error());
  return Ok{};
}

}  // namespace gte::report
