#include "agent/companion_slice.h"

#include <algorithm>
#include <cstdio>

#include "json/json_reader.h"
#include "json/json_writer.h"
#include "topology/gpu_identity.h"
#include "topology/nvlink_islands.h"

namespace gte::agent {
namespace {

constexpr std::string_view kPciBusIdAttribute = "resource.kubernetes.io/pciBusID";

bool dnsSubdomain(std::string_view text, std::size_t limit) noexcept {
  if (text.empty() || text.size() > limit) return false;
  std::size_t labelStart = 0;
  for (std::size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == '.') {
      const std::string_view label = text.substr(labelStart, i - labelStart);
      if (label.empty() || label.size() > 63 || label.front() == '-' || label.back() == '-') {
        return false;
      }
      labelStart = i + 1;
      continue;
    }
    const char c = text[i];
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

Error readError(std::string_view what, const json::JsonReader& r) {
  return invalidArgument("ResourceSlice: " + std::string(what) +
                         (r.ok() ? std::string() : ": " + r.error()));
}

// metadata: resourceVersion and the digest annotation.
bool readMetadata(json::JsonReader& r, std::string_view digestKey, StoredSlice& out) {
  std::string key;
  if (!r.beginObject()) return false;
  while (r.nextKey(key)) {
    if (key == "resourceVersion") {
      if (!r.readString(out.resourceVersion)) return false;
    } else if (key == "annotations" && r.peek() == json::Kind::kObject) {
      std::string annotation;
      r.beginObject();
      while (r.nextKey(annotation)) {
        if (annotation == digestKey && r.peek() == json::Kind::kString) {
          r.readString(out.digest);
        } else {
          r.skipValue();
        }
      }
    } else {
      r.skipValue();
    }
  }
  return r.ok();
}

// spec: pool.generation and whether skipNodeOperations holds "*".
bool readSpec(json::JsonReader& r, StoredSlice& out) {
  std::string key;
  if (!r.beginObject()) return false;
  while (r.nextKey(key)) {
    if (key == "pool" && r.peek() == json::Kind::kObject) {
      std::string field;
      r.beginObject();
      while (r.nextKey(field)) {
        if (field == "generation") {
          if (!r.readInt64(out.generation)) return false;
        } else {
          r.skipValue();
        }
      }
    } else if (key == "skipNodeOperations" && r.peek() == json::Kind::kArray) {
      r.beginArray();
      while (r.nextElement()) {
        std::string operation;
        if (r.peek() == json::Kind::kString) {
          r.readString(operation);
          out.skipsNodeOperations = out.skipsNodeOperations || operation == "*";
        } else {
          r.skipValue();
        }
      }
    } else {
      r.skipValue();
    }
  }
  return r.ok();
}

}  // namespace

bool validDriverName(std::string_view driver) noexcept {
  return dnsSubdomain(driver, 63);
}

Result<std::vector<CompanionDevice>> companionDevices(const Discovery& discovery) {
  const GpuTopology& topology = discovery.topology;
  const std::vector<int> islands = nvlinkIslands(topology);
  std::vector<CompanionDevice> out;
  for (int gpu = 0; gpu < static_cast<int>(islands.size()); ++gpu) {
    const auto index = static_cast<std::size_t>(gpu);
    if (index >= discovery.busIds.size()) {
      return Error{ErrorCode::kFailedPrecondition,
                   "companion devices: no PCI bus id for GPU " + std::to_string(gpu) +
                       " (text captures carry none; use NVML discovery)"};
    }
    const auto address = parsePciBusId(discovery.busIds[index]);
    if (!address) {
      return Error{ErrorCode::kFailedPrecondition, "companion devices: GPU " + std::to_string(gpu) +
                                                       ": PCI bus id '" + discovery.busIds[index] +
                                                       "' does not parse"};
    }
    CompanionDevice device;
    device.gpu = gpu;
    device.pciBusId = pciBusIdText(*address);
    device.island = islands[index];
    device.islandSize = static_cast<int>(std::count(islands.begin(), islands.end(), device.island));
    if (index < discovery.gpuUuids.size()) device.uuid = discovery.gpuUuids[index];
    out.push_back(std::move(device));
  }
  return out;
}

Result<std::string> companionSliceName(const std::string& node, const std::string& driver) {
  std::string name = node + "-" + driver;
  if (name.size() > 253) {
    return invalidArgument("companion slice name '" + name + "' is longer than 253 characters");
  }
  return name;
}

std::string companionDigest(const std::string& node, const std::string& driver,
                            const std::vector<CompanionDevice>& devices) {
  // FNV-1a 64 over a canonical text of the content: a change detector, not a security measure.
  std::string text = node + '\n' + driver + '\n';
  for (const CompanionDevice& d : devices) {
    text += std::to_string(d.gpu) + ' ' + d.pciBusId + ' ' + std::to_string(d.island) + ' ' +
            std::to_string(d.islandSize) + ' ' + d.uuid + '\n';
  }
  std::uint64_t hash = 14695981039346656037ull;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ull;
  }
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(hash));
  return buffer;
}

std::string companionSliceJson(const CompanionSlice& slice) {
  std::string out;
  json::JsonWriter w(out);
  w.beginObject().key("apiVersion").string("resource.k8s.io/v1");
  w.key("kind").string("ResourceSlice");
  w.key("metadata").beginObject().key("name").string(slice.name);
  if (!slice.resourceVersion.empty()) w.key("resourceVersion").string(slice.resourceVersion);
  w.key("labels").beginObject().key("app.kubernetes.io/managed-by").string("gpu-topology-agent");
  w.endObject();
  w.key("annotations").beginObject();
  w.key(slice.labelPrefix + "companion-digest")
      .string(companionDigest(slice.node, slice.driver, slice.devices));
  w.endObject();
  w.key("ownerReferences").beginArray().element().beginObject();
  w.key("apiVersion").string("v1").key("kind").string("Node").key("name").string(slice.node);
  w.key("uid").string(slice.nodeUid).endObject().endArray();
  w.endObject();
  w.key("spec").beginObject().key("driver").string(slice.driver);
  w.key("pool").beginObject().key("name").string(slice.node);
  w.key("generation").integer(slice.generation).key("resourceSliceCount").integer(1).endObject();
  w.key("nodeName").string(slice.node);
  w.key("skipNodeOperations").beginArray().element().string("*").endArray();
  w.key("devices").beginArray();
  for (const CompanionDevice& d : slice.devices) {
    w.element().beginObject().key("name").string("gpu-" + std::to_string(d.gpu));
    w.key("attributes").beginObject();
    w.key(kPciBusIdAttribute).beginObject().key("string").string(d.pciBusId).endObject();
    w.key("gpuIndex").beginObject().key("int").integer(d.gpu).endObject();
    w.key("nvlinkIsland").beginObject().key("int").integer(d.island).endObject();
    w.key("nvlinkIslandSize").beginObject().key("int").integer(d.islandSize).endObject();
    if (!d.uuid.empty()) w.key("uuid").beginObject().key("string").string(d.uuid).endObject();
    w.endObject().endObject();
  }
  w.endArray().endObject().endObject();
  return out;
}

Result<StoredSlice> readStoredSlice(std::string_view json, std::string_view digestKey) {
  json::JsonReader r(json);
  StoredSlice out;
  std::string key;
  if (!r.beginObject()) return readError("not an object", r);
  while (r.nextKey(key)) {
    if (key == "metadata" && r.peek() == json::Kind::kObject) {
      if (!readMetadata(r, digestKey, out)) return readError("metadata", r);
    } else if (key == "spec" && r.peek() == json::Kind::kObject) {
      if (!readSpec(r, out)) return readError("spec", r);
    } else if (!r.skipValue()) {
      return readError(key, r);
    }
  }
  if (!r.ok() || !r.finish()) return readError("malformed JSON", r);
  if (out.resourceVersion.empty()) return readError("metadata.resourceVersion missing", r);
  return out;
}

}  // namespace gte::agent
