#include "kube/lease.h"

#include <time.h>

#include <cstdio>

#include "json/json_reader.h"
#include "json/json_writer.h"

namespace gte::kube {
namespace {

using json::JsonReader;

Error leaseError(const JsonReader& reader, std::string_view field) {
  return invalidArgument("lease: " + std::string(field) + ": " + reader.error());
}

Status readMetadata(JsonReader& reader, Lease& lease) {
  if (!reader.beginObject()) return leaseError(reader, "metadata");
  std::string key;
  while (reader.nextKey(key)) {
    bool good = true;
    if (key == "name") {
      good = reader.readStringOrNull(lease.name);
    } else if (key == "namespace") {
      good = reader.readStringOrNull(lease.ns);
    } else if (key == "resourceVersion") {
      good = reader.readStringOrNull(lease.resourceVersion);
    } else {
      good = reader.skipValue();
    }
    if (!good) return leaseError(reader, "metadata." + key);
  }
  if (!reader.ok()) return leaseError(reader, "metadata");
  return Ok{};
}

Status readSpec(JsonReader& reader, LeaseSpec& spec) {
  if (reader.readNull()) return Ok{};
  if (!reader.beginObject()) return leaseError(reader, "spec");
  std::string key;
  while (reader.nextKey(key)) {
    bool good = true;
    if (key == "holderIdentity") {
      good = reader.readStringOrNull(spec.holderIdentity);
    } else if (key == "leaseDurationSeconds") {
      good = reader.readInt64OrNull(spec.leaseDurationSeconds);
    } else if (key == "acquireTime") {
      good = reader.readStringOrNull(spec.acquireTime);
    } else if (key == "renewTime") {
      good = reader.readStringOrNull(spec.renewTime);
    } else if (key == "leaseTransitions") {
      good = reader.readInt64OrNull(spec.leaseTransitions);
    } else {
      good = reader.skipValue();
    }
    if (!good) return leaseError(reader, "spec." + key);
  }
  if (!reader.ok()) return leaseError(reader, "spec");
  return Ok{};
}

}  // namespace

Result<Lease> readLeaseJson(JsonReader& reader) {
  Lease lease;
  if (!reader.beginObject()) return leaseError(reader, "object");
  std::string key;
  while (reader.nextKey(key)) {
    if (key == "metadata") {
      if (auto s = readMetadata(reader, lease); !s) return std::move(s).error();
    } else if (key == "spec") {
      if (auto s = readSpec(reader, lease.spec); !s) return std::move(s).error();
    } else if (!reader.skipValue()) {
      return leaseError(reader, key);
    }
  }
  if (!reader.ok()) return leaseError(reader, "object");
  if (lease.name.empty()) return invalidArgument("lease: no metadata.name");
  return lease;
}

Result<Lease> parseLeaseJson(std::string_view json) {
  JsonReader reader(json);
  auto lease = readLeaseJson(reader);
  if (!lease) return lease;
  if (!reader.finish()) return leaseError(reader, "after the object");
  return lease;
}

std::string leaseJson(const Lease& lease) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("apiVersion").string("coordination.k8s.io/v1").key("kind").string("Lease");
  w.key("metadata").beginObject().key("name").string(lease.name);
  if (!lease.ns.empty()) w.key("namespace").string(lease.ns);
  if (!lease.resourceVersion.empty()) w.key("resourceVersion").string(lease.resourceVersion);
  w.endObject();
  const LeaseSpec& spec = lease.spec;
  w.key("spec").beginObject();
  // An empty holder is written as such: that is how a release reads (client-go writes "" too).
  w.key("holderIdentity").string(spec.holderIdentity);
  w.key("leaseDurationSeconds").integer(spec.leaseDurationSeconds);
  if (!spec.acquireTime.empty()) w.key("acquireTime").string(spec.acquireTime);
  if (!spec.renewTime.empty()) w.key("renewTime").string(spec.renewTime);
  w.key("leaseTransitions").integer(spec.leaseTransitions);
  w.endObject().endObject();
  return out;
}

std::string formatMicroTime(std::chrono::system_clock::time_point time) {
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(time.time_since_epoch()).count();
  auto seconds = static_cast<time_t>(micros / 1'000'000);
  auto fraction = micros % 1'000'000;
  if (fraction < 0) {  // before 1970: floor, so the fraction stays positive
    fraction += 1'000'000;
    --seconds;
  }
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[96];  // room for any int fields, so the compiler sees no truncation
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(fraction));
  return buf;
}

}  // namespace gte::kube
