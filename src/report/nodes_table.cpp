#include "report/nodes_table.h"

#include <algorithm>
#include <vector>

#include "json/json_reader.h"
#include "report/json_fields.h"
#include "report/text_table.h"

namespace gte::report {
namespace {

using json::JsonReader;

struct Row {
  std::string name, topology, model, usable, freeCount, free, sets, largest, links;
  std::string mig;      // "-" without MIG
  std::string sharing;  // "-" when the GPUs are whole
  std::string health;   // "-" when nothing is marked
};

// An array of strings as "a,b,c".
bool readStrings(JsonReader& r, std::string& out) {
  if (!r.beginArray()) return false;
  std::string value;
  while (r.nextElement()) {
    if (!r.readString(value)) return false;
    if (!out.empty()) out.push_back(',');
    out.append(value);
  }
  return r.ok();
}

// "mig": {"gpus", "slices", "slicesFree", "fitsNow": [...], "freeDevices": {...}} as
// "5/14 slices free: 1g.10gb,2g.20gb" (what a MIG pod could get now), or a GPU Feature Discovery
// node's free devices "1g.10gb:3".
bool readMig(JsonReader& r, std::string& out) {
  out.assign(1, '-');
  if (r.readNull()) return true;
  std::string gpus, slices, slicesFree, fits, devices;
  const bool ok = readObject(r, {{"gpus", &gpus}, {"slices", &slices}, {"slicesFree", &slicesFree}},
                             [&](const std::string& key) {
                               if (key == "fitsNow") return readStrings(r, fits);
                               return key == "freeDevices" && readJoined(r, devices, ',', true);
                             });
  // Appended piece by piece: GCC 12 -O3 warns falsely on chains of + (PR 105329).
  out.clear();
  if (slices != "0") {
    out.append(slicesFree).append("/").append(slices).append(" slices free: ");
    out.append(fits.empty() ? std::string("no profile fits") : fits);
  } else if (devices.empty()) {
    out.append("no free devices");
  } else {
    out.append(devices).append(" free");
  }
  return ok;
}

// "sharing": null, or {"strategy", "replicas", "oneReplicaPerContainer", "unreadable", "tenants"}
// as "time-slicing x4", "mps x2 1/container", "unknown", "unreadable", with ", tenants 2,2,1,0"
// when the agent published them (docs/sharing.md).
bool readSharing(JsonReader& r, std::string& out) {
  out.assign(1, '-');
  if (r.readNull()) return true;
  std::string strategy, replicas, unreadable, tenants;
  bool onePerContainer = false;
  const bool ok =
      readObject(r, {{"strategy", &strategy}, {"replicas", &replicas}, {"unreadable", &unreadable}},
                 [&](const std::string& key) {
                   if (key == "oneReplicaPerContainer") return r.readBool(onePerContainer);
                   return key == "tenants" && readInts(r, tenants);
                 });
  out.clear();
  if (!unreadable.empty()) {
    out.append("unreadable");
  } else {
    out.append(strategy);
    if (!replicas.empty()) out.append(" x").append(replicas);
    if (onePerContainer) out.append(" 1/container");
  }
  if (!tenants.empty()) out.append(", tenants ").append(tenants);
  return ok;
}

// "links": [{"gpus": [i, j], "state": s}, ...] as "i-j s,...".
bool readLinkMarks(JsonReader& r, std::string& out) {
  if (!r.beginArray()) return false;
  while (r.nextElement()) {
    std::string pair, state;
    const bool ok = readObject(r, {{"state", &state}}, [&](const std::string& key) {
      if (key != "gpus") return false;
      const bool read = readInts(r, pair);
      std::replace(pair.begin(), pair.end(), ',', '-');
      return read;
    });
    if (!ok) return false;
    if (!out.empty()) out.append(",");
    out.append(pair).append(" ").append(state);
  }
  return r.ok();
}

// "health": null, or {"failed", "degraded", "cordoned": [GPUs], "links": [...]} as
// "failed 5; degraded 0,1; links 2-3 degraded" (docs/health.md).
bool readHealth(JsonReader& r, std::string& out) {
  out.assign(1, '-');
  if (r.readNull()) return true;
  std::string failed, degraded, cordoned, links;
  const bool ok = readObject(r, {}, [&](const std::string& key) {
    if (key == "failed") return readInts(r, failed);
    if (key == "degraded") return readInts(r, degraded);
    if (key == "cordoned") return readInts(r, cordoned);
    return key == "links" && readLinkMarks(r, links);
  });
  out.clear();
  const auto part = [&out](const char* what, const std::string& value) {
    if (value.empty()) return;
    if (!out.empty()) out.append("; ");
    out.append(what).append(" ").append(value);
  };
  part("failed", failed);
  part("degraded", degraded);
  part("cordoned", cordoned);
  part("links", links);
  if (out.empty()) out.assign(1, '-');
  return ok;
}

struct Document {
  std::vector<Row> rows;
  std::string listed, cached, freeGpus, sets;
};

bool readNode(JsonReader& r, Row& row) {
  return readObject(r,
                    {{"name", &row.name},
                     {"topology", &row.topology},
                     {"model", &row.model},
                     {"usableGpus", &row.usable},
                     {"freeGpus", &row.freeCount},
                     {"largestNvlinkSet", &row.largest}},
                    [&](const std::string& key) {
                      if (key == "free") return readInts(r, row.free);
                      if (key == "freeSets") return readFreeSets(r, row.sets);
                      if (key == "mig") return readMig(r, row.mig);
                      if (key == "sharing") return readSharing(r, row.sharing);
                      if (key == "health") return readHealth(r, row.health);
                      return key == "links" && readJoined(r, row.links, ' ', true);
                    });
}

Result<Document> readDocument(std::string_view text) {
  JsonReader r(text);
  Document doc;
  bool sawNodes = false;
  readObject(r, {{"listed", &doc.listed}, {"cached", &doc.cached}, {"freeGpus", &doc.freeGpus}},
             [&](const std::string& key) {
               if (key == "freeSets") return readFreeSets(r, doc.sets);
               if (key != "nodes") return false;
               sawNodes = true;
               return readList(r, doc.rows, [&r](Row& row) { return readNode(r, row); });
             });
  if (auto done = finishDocument(r, "a nodes"); !done) return std::move(done).error();
  if (!sawNodes) return invalidArgument("not a nodes document: no \"nodes\"");
  return doc;
}

}  // namespace

Result<std::string> nodesTable(std::string_view json) {
  auto doc = readDocument(json);
  if (!doc) return std::move(doc).error();
  std::vector<TextRow> rows;
  // The SHARED column only when some listed node shares its GPUs (docs/sharing.md).
  const bool anyShared = std::any_of(doc->rows.begin(), doc->rows.end(), [](const Row& row) {
    return !row.sharing.empty() && row.sharing != "-";
  });
  rows.push_back({"NODE", "TOPOLOGY", "MODEL", "USABLE", "FREE", "FREE GPUS", "SETS 1/2/4/8",
                  "LARGEST", "LINKS", "MIG"});
  if (anyShared) rows.back().push_back("SHARED");
  // The HEALTH column only when some listed node has marked hardware (docs/health.md).
  const bool anyMarked = std::any_of(doc->rows.begin(), doc->rows.end(), [](const Row& row) {
    return !row.health.empty() && row.health != "-";
  });
  if (anyMarked) rows.back().push_back("HEALTH");
  for (const Row& row : doc->rows) {
    rows.push_back({row.name, row.topology, orDash(row.model), row.usable, row.freeCount,
                    orDash(row.free), row.sets, row.largest, orDash(row.links), orDash(row.mig)});
    if (anyShared) rows.back().push_back(orDash(row.sharing));
    if (anyMarked) rows.back().push_back(orDash(row.health));
  }
  std::string out = alignedColumns(rows);
  out += doc->listed + (doc->listed == "1" ? " node: " : " nodes: ") + doc->freeGpus +
         " free GPUs; free all-NVLink sets of 1/2/4/8 GPUs: " + doc->sets + "\n";
  if (doc->listed != doc->cached) {
    out += "(" + doc->listed + " of the " + doc->cached + " nodes in the cache listed)\n";
  }
  return out;
}

}  // namespace gte::report
