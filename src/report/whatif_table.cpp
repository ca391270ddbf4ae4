#include "report/whatif_table.h"

#include <cstddef>
#include <vector>

#include "json/json_reader.h"
#include "report/json_fields.h"
#include "report/text_table.h"

namespace gte::report {
namespace {

using json::JsonReader;

struct Placement {
  std::string pod, node, gpus, link, score, wire, tied, stranded, setsBefore, setsAfter,
      clusterAfter, reason;
};

struct Run {
  std::string name, hash, demand, placed, clusterBefore, clusterAfter;
  std::vector<Placement> placements;
};

struct Document {
  std::string mode, pods, nodes;
  std::vector<Run> runs;
};

bool readPlacement(JsonReader& r, Placement& p) {
  if (!r.beginObject()) return false;
  std::string key;
  while (r.nextKey(key)) {
    bool ok = true;
    if (key == "gpus") {
      ok = readInts(r, p.gpus);
    } else if (key == "nodeFreeSetsBefore") {
      ok = readFreeSets(r, p.setsBefore);
    } else if (key == "nodeFreeSetsAfter") {
      ok = readFreeSets(r, p.setsAfter);
    } else if (key == "clusterFreeSetsAfter") {
      ok = readFreeSets(r, p.clusterAfter);
    } else {
      std::string* field = key == "pod"            ? &p.pod
                           : key == "node"         ? &p.node
                           : key == "weakestLink"  ? &p.link
                           : key == "score"        ? &p.score
                           : key == "wireScore"    ? &p.wire
                           : key == "tiedNodes"    ? &p.tied
                           : key == "strandedGpus" ? &p.stranded
                           : key == "reason"       ? &p.reason
                                                   : nullptr;
      ok = field ? readScalar(r, *field) : r.skipValue();
    }
    if (!ok) return false;
  }
  return r.ok();
}

bool readRun(JsonReader& r, Run& run) {
  if (!r.beginObject()) return false;
  std::string key;
  while (r.nextKey(key)) {
    bool ok = true;
    if (key == "name") {
      ok = readScalar(r, run.name);
    } else if (key == "hash") {
      ok = readScalar(r, run.hash);
    } else if (key == "demand") {
      ok = readDemandText(r, run.demand);
    } else if (key == "placed") {
      ok = readScalar(r, run.placed);
    } else if (key == "clusterFreeSetsBefore") {
      ok = readFreeSets(r, run.clusterBefore);
    } else if (key == "clusterFreeSetsAfter") {
      ok = readFreeSets(r, run.clusterAfter);
    } else if (key == "placements" && r.beginArray()) {
      while (ok && r.nextElement()) {
        run.placements.emplace_back();
        ok = readPlacement(r, run.placements.back());
      }
    } else {
      ok = r.skipValue();
    }
    if (!ok) return false;
  }
  return r.ok();
}

Result<Document> readDocument(std::string_view text) {
  JsonReader r(text);
  Document doc;
  std::string key;
  if (r.beginObject()) {
    while (r.nextKey(key)) {
      bool ok = true;
      if (key == "mode") {
        ok = readScalar(r, doc.mode);
      } else if (key == "pods") {
        ok = readScalar(r, doc.pods);
      } else if (key == "nodes") {
        ok = readScalar(r, doc.nodes);
      } else if (key == "policies" && r.beginArray()) {
        while (ok && r.nextElement()) {
          doc.runs.emplace_back();
          ok = readRun(r, doc.runs.back());
        }
      } else {
        ok = r.skipValue();
      }
      if (!ok) break;
    }
  }
  if (r.ok()) r.finish();
  if (!r.ok()) return invalidArgument("not a what-if document: " + r.error());
  if (doc.runs.empty()) return invalidArgument("not a what-if document: no \"policies\"");
  return doc;
}

std::string headline(const Document& doc) {
  std::string out = "what-if: " + doc.pods + (doc.pods == "1" ? " pod" : " pods");
  if (doc.mode == "pod" && doc.runs.size() == 1 && !doc.runs.front().demand.empty()) {
    out += " of " + doc.runs.front().demand;
  } else if (doc.mode == "csv") {
    out += " from the CSV";
  }
  out += ", on " + doc.nodes + " nodes\n";
  for (const Run& run : doc.runs) {
    out += run.name + " policy " + run.hash;
    if (doc.runs.size() > 1 && doc.mode == "pod") out += ": " + run.demand;
    out += "\n";
  }
  return out;
}

// Single policy: the full detail of each placement.
std::string oneRun(const Run& run) {
  std::vector<TextRow> rows;
  rows.push_back({"POD", "NODE", "GPUS", "LINK", "SCORE", "WIRE", "TIED", "STRANDED",
                  "NODE SETS 1/2/4/8", "CLUSTER SETS", "REASON"});
  for (const Placement& p : run.placements) {
    const std::string sets = p.setsBefore.empty() ? "" : p.setsBefore + " -> " + p.setsAfter;
    const bool placed = !p.node.empty();
    rows.push_back({p.pod, orDash(p.node), orDash(p.gpus), orDash(p.link), orDash(p.score),
                    orDash(p.wire), placed ? p.tied : "-", placed ? p.stranded : "-", orDash(sets),
                    orDash(p.clusterAfter), orDash(p.reason)});
  }
  return alignedColumns(rows);
}

// Several policies: node, GPUs, link and the node's sets after, per policy, side by side.
std::string sideBySide(const std::vector<Run>& runs) {
  std::vector<TextRow> rows;
  TextRow header = {"POD"};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    header.insert(header.end(), {"NODE", "GPUS", "LINK", "NODE SETS AFTER"});
  }
  // The policy's name over its first column.
  TextRow names = {""};
  for (const Run& run : runs) {
    names.insert(names.end(), {"[" + run.name + "]", "", "", ""});
  }
  rows.push_back(names);
  rows.push_back(header);
  for (std::size_t i = 0; i < runs.front().placements.size(); ++i) {
    TextRow row = {runs.front().placements[i].pod};
    for (const Run& run : runs) {
      if (i >= run.placements.size()) {
        row.insert(row.end(), {"-", "-", "-", "-"});
        continue;
      }
      const Placement& p = run.placements[i];
      row.insert(row.end(), {orDash(p.node), orDash(p.gpus), orDash(p.link), orDash(p.setsAfter)});
    }
    rows.push_back(row);
  }
  return alignedColumns(rows);
}

}  // namespace

Result<std::string> whatifTable(std::string_view json) {
  auto doc = readDocument(json);
  if (!doc) return std::move(doc).error();
  std::string out = headline(*doc);
  out += doc->runs.size() == 1 ? oneRun(doc->runs.front()) : sideBySide(doc->runs);
  for (const Run& run : doc->runs) {
    out += run.name + ": placed " + run.placed + " of " + doc->pods +
           "; the cluster's free all-NVLink sets of 1/2/4/8 GPUs: " + run.clusterBefore + " -> " +
           run.clusterAfter + "\n";
  }
  return out;
}

}  // namespace gte::report
