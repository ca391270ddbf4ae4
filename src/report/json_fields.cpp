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
  if (!r.beginObject()) return false;
  std::string key;
  std::string gpus = "0", minLink, strategy, mig;
  bool singleNuma = false;
  while (r.nextKey(key)) {
    bool ok = true;
    if (key == "gpus") {
      ok = readScalar(r, gpus);
    } else if (key == "minLink") {
      ok = readScalar(r, minLink);
    } else if (key == "strategy") {
      ok = readScalar(r, strategy);
    } else if (key == "singleNuma") {
      ok = r.readBool(singleNuma);
    } else if (key == "mig" && r.peek() == Kind::kArray) {
      r.beginArray();
      while (r.nextElement()) {
        std::string profile, count, k;
        if (!r.beginObject()) return false;
        while (r.nextKey(k)) {
          if (!readScalar(r, k == "profile" ? profile : count)) return false;
        }
        if (!mig.empty()) mig.append(", ");
        mig.append(count).append("x MIG ").append(profile);
      }
    } else {
      ok = r.skipValue();
    }
    if (!ok) return false;
  }
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
  return r.ok();
}

bool readFreeSets(JsonReader& r, std::string& out) {
  out.clear();
  if (r.readNull()) return true;
  if (!r.beginObject()) return false;
  std::string key, value;
  while (r.nextKey(key)) {
    if (!readScalar(r, value)) return false;
    if (!out.empty()) out.push_back('/');
    out += value;
  }
  return r.ok();
}

}  // namespace gte::report
