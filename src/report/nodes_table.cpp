#include "report/nodes_table.h"

#include <vector>

#include "json/json_reader.h"
#include "report/json_fields.h"
#include "report/text_table.h"

namespace gte::report {
namespace {

using json::JsonReader;

struct Row {
  std::string name, topology, model, usable, freeCount, free, sets, largest, links;
};

struct Document {
  std::vector<Row> rows;
  std::string listed, cached, freeGpus, sets;
};

// {"nvlink": 24, "sys": 4} as "nvlink:24 sys:4".
bool readLinks(JsonReader& r, std::string& out) {
  out.clear();
  if (r.readNull()) return true;
  if (!r.beginObject()) return false;
  std::string key, value;
  while (r.nextKey(key)) {
    if (!readScalar(r, value)) return false;
    if (!out.empty()) out.push_back(' ');
    out += key + ":" + value;
  }
  return r.ok();
}

bool readNode(JsonReader& r, Row& row) {
  if (!r.beginObject()) return false;
  std::string key;
  while (r.nextKey(key)) {
    bool ok = true;
    if (key == "free") {
      ok = readInts(r, row.free);
    } else if (key == "freeSets") {
      ok = readFreeSets(r, row.sets);
    } else if (key == "links") {
      ok = readLinks(r, row.links);
    } else {
      std::string* field = key == "name"               ? &row.name
                           : key == "topology"         ? &row.topology
                           : key == "model"            ? &row.model
                           : key == "usableGpus"       ? &row.usable
                           : key == "freeGpus"         ? &row.freeCount
                           : key == "largestNvlinkSet" ? &row.largest
                                                       : nullptr;
      ok = field ? readScalar(r, *field) : r.skipValue();
    }
    if (!ok) return false;
  }
  return r.ok();
}

Result<Document> readDocument(std::string_view text) {
  JsonReader r(text);
  Document doc;
  std::string key;
  bool sawNodes = false;
  if (r.beginObject()) {
    while (r.nextKey(key)) {
      bool ok = true;
      if (key == "nodes" && r.beginArray()) {
        sawNodes = true;
        while (ok && r.nextElement()) {
          doc.rows.emplace_back();
          ok = readNode(r, doc.rows.back());
        }
      } else if (key == "freeSets") {
        ok = readFreeSets(r, doc.sets);
      } else {
        std::string* field = key == "listed"     ? &doc.listed
                             : key == "cached"   ? &doc.cached
                             : key == "freeGpus" ? &doc.freeGpus
                                                 : nullptr;
        ok = field ? readScalar(r, *field) : r.skipValue();
      }
      if (!ok) break;
    }
  }
  if (r.ok()) r.finish();
  if (!r.ok()) return invalidArgument("not a nodes document: " + r.error());
  if (!sawNodes) return invalidArgument("not a nodes document: no \"nodes\"");
  return doc;
}

}  // namespace

Result<std::string> nodesTable(std::string_view json) {
  auto doc = readDocument(json);
  if (!doc) return std::move(doc).error();
  std::vector<TextRow> rows;
  rows.push_back({"NODE", "TOPOLOGY", "MODEL", "USABLE", "FREE", "FREE GPUS", "SETS 1/2/4/8",
                  "LARGEST", "LINKS"});
  for (const Row& row : doc->rows) {
    rows.push_back({row.name, row.topology, orDash(row.model), row.usable, row.freeCount,
                    orDash(row.free), row.sets, row.largest, orDash(row.links)});
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
