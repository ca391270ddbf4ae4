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
  std::string mig;  // a MIG pod's instance, shown where whole GPUs would be
};

struct Verdict {
  std::string level, domain, verdict;
};

// A group what-if's plan (`group` of a run); its reason names the chosen domain.
struct GroupPlanText {
  std::string size, status, level, reason;
  std::vector<Verdict> verdicts;
};

struct Run {
  std::string name, hash, demand, placed, clusterBefore, clusterAfter;
  std::vector<Placement> placements;
  bool grouped = false;
  GroupPlanText group;
};

struct Document {
  std::string mode, pods, nodes;
  std::vector<Run> runs;
};

// A MIG pod's placement ({"gpu", "start"}, or null) as "MIG on GPU 0 at 3".
bool readMigPlacement(JsonReader& r, std::string& out) {
  if (r.readNull()) return true;
  std::string gpu, start;
  if (!readObject(r, {{"gpu", &gpu}, {"start", &start}})) return false;
  out.assign("MIG on GPU ").append(gpu).append(" at ").append(start);
  return true;
}

bool readPlacement(JsonReader& r, Placement& p) {
  const bool ok =
      readObject(r,
                 {{"pod", &p.pod},
                  {"node", &p.node},
                  {"weakestLink", &p.link},
                  {"score", &p.score},
                  {"wireScore", &p.wire},
                  {"tiedNodes", &p.tied},
                  {"strandedGpus", &p.stranded},
                  {"reason", &p.reason}},
                 [&](const std::string& key) {
                   if (key == "gpus") return readInts(r, p.gpus);
                   if (key == "mig") return readMigPlacement(r, p.mig);
                   if (key == "nodeFreeSetsBefore") return readFreeSets(r, p.setsBefore);
                   if (key == "nodeFreeSetsAfter") return readFreeSets(r, p.setsAfter);
                   return key == "clusterFreeSetsAfter" && readFreeSets(r, p.clusterAfter);
                 });
  // A MIG pod gets no whole GPU: its instance stands in the GPUS column, whatever the key order.
  if (p.gpus.empty()) p.gpus = p.mig;
  return ok;
}

bool readGroupPlan(JsonReader& r, GroupPlanText& g) {
  return readObject(
      r, {{"size", &g.size}, {"status", &g.status}, {"level", &g.level}, {"reason", &g.reason}},
      [&](const std::string& key) {
        return key == "verdicts" && readList(r, g.verdicts, [&r](Verdict& v) {
                 return readObject(
                     r, {{"level", &v.level}, {"domain", &v.domain}, {"verdict", &v.verdict}});
               });
      });
}

bool readRun(JsonReader& r, Run& run) {
  return readObject(r, {{"name", &run.name}, {"hash", &run.hash}, {"placed", &run.placed}},
                    [&](const std::string& key) {
                      if (key == "demand") return readDemandText(r, run.demand);
                      if (key == "group") {
                        if (r.peek() == json::Kind::kNull) return false;  // skipped
                        run.grouped = true;
                        return readGroupPlan(r, run.group);
                      }
                      if (key == "clusterFreeSetsBefore") {
                        return readFreeSets(r, run.clusterBefore);
                      }
                      if (key == "clusterFreeSetsAfter") return readFreeSets(r, run.clusterAfter);
                      return key == "placements" && readList(r, run.placements, [&r](Placement& p) {
                               return readPlacement(r, p);
                             });
                    });
}

Result<Document> readDocument(std::string_view text) {
  JsonReader r(text);
  Document doc;
  readObject(r, {{"mode", &doc.mode}, {"pods", &doc.pods}, {"nodes", &doc.nodes}},
             [&](const std::string& key) {
               return key == "policies" &&
                      readList(r, doc.runs, [&r](Run& run) { return readRun(r, run); });
             });
  if (auto done = finishDocument(r, "a what-if"); !done) return std::move(done).error();
  if (doc.runs.empty()) return invalidArgument("not a what-if document: no \"policies\"");
  return doc;
}

std::string headline(const Document& doc) {
  std::string out = "what-if: ";
  if (doc.mode == "group") out += "a group of ";
  out += doc.pods + (doc.pods == "1" ? " pod" : " pods");
  if (doc.mode != "csv" && doc.runs.size() == 1 && !doc.runs.front().demand.empty()) {
    out += " of " + doc.runs.front().demand;
  } else if (doc.mode == "csv") {
    out += " from the CSV";
  }
  out += ", on " + doc.nodes + " nodes\n";
  for (const Run& run : doc.runs) {
    out += run.name + " policy " + run.hash;
    if (doc.runs.size() > 1 && doc.mode != "csv") out += ": " + run.demand;
    out += "\n";
  }
  return out;
}

// Single policy: the full detail of each placement. A group's members were placed by the planner,
// not by score: no SCORE, WIRE, TIED.
std::string oneRun(const Run& run) {
  std::vector<TextRow> rows;
  if (run.grouped) {
    rows.push_back(
        {"POD", "NODE", "GPUS", "LINK", "STRANDED", "NODE SETS 1/2/4/8", "CLUSTER SETS", "REASON"});
  } else {
    rows.push_back({"POD", "NODE", "GPUS", "LINK", "SCORE", "WIRE", "TIED", "STRANDED",
                    "NODE SETS 1/2/4/8", "CLUSTER SETS", "REASON"});
  }
  for (const Placement& p : run.placements) {
    const std::string sets = p.setsBefore.empty() ? "" : p.setsBefore + " -> " + p.setsAfter;
    const bool placed = !p.node.empty();
    TextRow row = {p.pod, orDash(p.node), orDash(p.gpus), orDash(p.link)};
    if (!run.grouped)
      row.insert(row.end(), {orDash(p.score), orDash(p.wire), placed ? p.tied : "-"});
    // A group's unplaced members share the plan's reason, printed once below the table.
    const std::string reason = run.grouped && !placed ? "group not placed (below)" : p.reason;
    row.insert(row.end(),
               {placed ? p.stranded : "-", orDash(sets), orDash(p.clusterAfter), orDash(reason)});
    rows.push_back(std::move(row));
  }
  return alignedColumns(rows);
}

// A group's plan under one policy: where it went and why, and the planner's word on every other
// domain it looked at.
std::string groupLines(const Run& run) {
  const GroupPlanText& g = run.group;
  std::string out = run.name + ": group " + g.status;
  out += g.reason.empty() ? "\n" : ": " + g.reason + "\n";
  for (const Verdict& v : g.verdicts) {
    out += "  " + v.level + "=" + orDash(v.domain) + ": " + v.verdict + "\n";
  }
  return out;
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
    if (run.grouped) out += groupLines(run);
    out += run.name + ": placed " + run.placed + " of " + doc->pods +
           "; the cluster's free all-NVLink sets of 1/2/4/8 GPUs: " + run.clusterBefore + " -> " +
           run.clusterAfter + "\n";
  }
  return out;
}

}  // namespace gte::report
