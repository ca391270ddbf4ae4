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
