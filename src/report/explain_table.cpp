#include "report/explain_table.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "json/json_reader.h"
#include "report/json_fields.h"
#include "report/text_table.h"

namespace gte::report {
namespace {

using json::JsonReader;

struct Row {
  std::string name, verdict, reason, link, numa, gpus;
  std::string degraded;  // what of the set the health policy avoids; empty: nothing
  std::string mig;       // a MIG pod's predicted instances, shown where whole GPUs would be
  std::string wire;      // wireScoreAfterFilter: what kube-scheduler's prioritize call gets
  std::int64_t score = 0;
};

// What placement regret kept for the pod ("placement"; docs/topology-health.md).
struct Placement {
  bool present = false;
  std::string node, gpus, got, best, bestFeasible, bestFeasibleNode, topRankedNode;
  std::string regret, reason;  // regret as the extender wrote it ("0.600"), or ""
};

struct Document {
  std::string pod;     // NAMESPACE/NAME
  std::string demand;  // "4 GPUs, min-link nvlink, single NUMA, binpack"
  std::string error;   // the pod's own request is invalid
  std::vector<Row> rows;
  Placement placement;
  std::string boundNode;  // "pod.boundTo": where it is bound or reserved; "" when pending
  std::string boundGpus;
  bool reserved = false;
};

// "pod.boundTo": {"node", "reserved", "gpus", ...}, or null.
bool readBound(JsonReader& r, Document& doc) {
  if (r.readNull()) return true;
  return readObject(r, {{"node", &doc.boundNode}}, [&](const std::string& key) {
    if (key == "gpus") return r.readNull() || readInts(r, doc.boundGpus);
    if (key == "reserved") return r.readBool(doc.reserved);
    return false;
  });
}

// One line for a pod already on a node: where, with which GPUs.
std::string boundLine(const Document& doc) {
  if (doc.boundNode.empty()) return "";
  std::string out = doc.reserved ? "reserved on " : "bound to ";
  out.append(doc.boundNode);
  if (!doc.boundGpus.empty()) out.append(" (GPUs ").append(doc.boundGpus).append(")");
  return out.append("; its node is judged as if it were not there\n");
}

// {"weakestLink": "nvlink", "bandwidthGBps": 50} as "nvlink 50 GB/s"; null as "".
bool readSet(JsonReader& r, std::string& out) {
  out.clear();
  if (r.readNull()) return true;
  std::string link, gbps;
  if (!readObject(r, {{"weakestLink", &link}, {"bandwidthGBps", &gbps}})) return false;
  out = link + " " + gbps + " GB/s";
  return true;
}

bool readPlacement(JsonReader& r, Placement& p) {
  if (r.readNull()) return true;
  p.present = true;
  return readObject(r,
                    {{"node", &p.node},
                     {"bestFeasibleNode", &p.bestFeasibleNode},
                     {"topRankedNode", &p.topRankedNode},
                     {"reason", &p.reason}},
                    [&](const std::string& key) {
                      if (key == "gpus") return readInts(r, p.gpus);
                      if (key == "got") return readSet(r, p.got);
                      if (key == "best") return readSet(r, p.best);
                      if (key == "bestFeasible") return readSet(r, p.bestFeasible);
                      if (key != "regret") return false;
                      std::string_view raw;  // a fraction: readScalar reads integers only
                      if (!r.skipValue(&raw)) return false;
                      p.regret = raw == "null" ? "" : std::string(raw);
                      return true;
                    });
}

// One line: where the pod went against the best any node offered, or what was decided so far.
std::string placementLine(const Placement& p) {
  if (!p.present) return "";
  std::string out;
  if (!p.node.empty()) {
    out.append("placed on ").append(p.node);
    if (!p.gpus.empty()) out.append(" (GPUs ").append(p.gpus).append(")");
    out.append(": ").append(p.got.empty() ? "unknown" : p.got);
  } else {
    out.append("decided, not bound yet: best candidate ").append(p.bestFeasibleNode);
    out.append(" (").append(p.bestFeasible).append("), ranked first ").append(p.topRankedNode);
  }
  out.append("; best any node offered: ").append(p.best.empty() ? "unknown" : p.best);
  if (!p.regret.empty()) out.append("; regret ").append(p.regret).append(", ").append(p.reason);
  return out.append("\n");
}

// A node's MIG placements ([{"gpu", "profile", "start", ...}]) as "1g.10gb on GPU 0 at 3": the
// GPUS column of a MIG pod, which gets no whole GPUs.
bool readMigPlacements(JsonReader& r, std::string& out) {
  if (r.readNull()) return true;
  if (!r.beginArray()) return false;
  while (r.nextElement()) {
    std::string gpu, profile, start;
    if (!readObject(r, {{"gpu", &gpu}, {"profile", &profile}, {"start", &start}})) return false;
    if (!out.empty()) out.append(", ");
    out.append(profile).append(" on GPU ").append(gpu).append(" at ").append(start);
  }
  return r.ok();
}

// "degraded": null, or {"scoredAs", "gpus": [...], "links": [{"gpus": [i, j], "state"}]} as
// "degraded GPU 0, link 2-3; scored sys" (docs/health.md).
bool readDegraded(JsonReader& r, std::string& out) {
  if (r.readNull()) return true;
  std::string scored, gpus, links;
  const bool ok = readObject(r, {{"scoredAs", &scored}}, [&](const std::string& key) {
    if (key == "gpus") return readInts(r, gpus);
    if (key != "links" || !r.beginArray()) return false;
    while (r.nextElement()) {
      std::string pair;
      if (!readObject(r, {}, [&](const std::string& field) {
            if (field != "gpus") return false;
            const bool read = readInts(r, pair);
            std::replace(pair.begin(), pair.end(), ',', '-');
            return read;
          })) {
        return false;
      }
      if (!links.empty()) links.append(",");
      links.append(pair);
    }
    return r.ok();
  });
  out.assign("degraded");
  if (!gpus.empty()) out.append(" GPU ").append(gpus);
  if (!links.empty()) out.append(gpus.empty() ? " link " : ", link ").append(links);
  out.append("; scored ").append(scored);
  return ok;
}

bool readNode(JsonReader& r, Row& row) {
  const bool ok = readObject(r,
                             {{"name", &row.name},
                              {"verdict", &row.verdict},
                              {"reason", &row.reason},
                              {"weakestLink", &row.link},
                              {"numaSpan", &row.numa},
                              {"wireScoreAfterFilter", &row.wire}},
                             [&](const std::string& key) {
                               if (key == "gpus") return readInts(r, row.gpus);
                               if (key == "score") return r.readInt64(row.score);
                               if (key == "mig") return readMigPlacements(r, row.mig);
                               if (key == "degraded") return readDegraded(r, row.degraded);
                               return false;
                             });
  // A MIG pod's placement stands in the GPUS column (it gets no whole GPU), whatever the order of
  // the two keys.
  if (row.gpus.empty()) row.gpus = row.mig;
  return ok;
}

bool readPod(JsonReader& r, Document& doc) {
  std::string ns, name;
  const bool ok = readObject(r, {{"namespace", &ns}, {"name", &name}, {"error", &doc.error}},
                             [&](const std::string& key) {
                               if (key == "boundTo") return readBound(r, doc);
                               return key == "demand" && readDemandText(r, doc.demand);
                             });
  doc.pod = ns + "/" + name;
  return ok;
}

Result<Document> readDocument(std::string_view text) {
  JsonReader r(text);
  Document doc;
  bool sawNodes = false;
  readObject(r, {}, [&](const std::string& key) {
    if (key == "pod") return readPod(r, doc);
    if (key == "placement") return readPlacement(r, doc.placement);
    if (key != "nodes") return false;
    sawNodes = true;
    return readList(r, doc.rows, [&r](Row& row) { return readNode(r, row); });
  });
  if (auto done = finishDocument(r, "an explain"); !done) return std::move(done).error();
  if (!sawNodes) return invalidArgument("not an explain document: no \"nodes\"");
  return doc;
}

int verdictRank(const std::string& verdict) {
  if (verdict == "fit") return 0;
  if (verdict == "unschedulable") return 1;
  return 2;
}

}  // namespace

Result<std::string> explainTable(std::string_view json, std::size_t top) {
  auto doc = readDocument(json);
  if (!doc) return std::move(doc).error();
  std::vector<Row>& rows = doc->rows;
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    const int va = verdictRank(a.verdict), vb = verdictRank(b.verdict);
    if (va != vb) return va < vb;
    if (a.score != b.score) return a.score > b.score;
    if (a.wire.size() != b.wire.size()) return a.wire.size() > b.wire.size();  // "10" > "9"
    if (a.wire != b.wire) return a.wire > b.wire;
    return a.name < b.name;
  });
  const std::size_t total = rows.size();
  if (top != 0 && rows.size() > top) rows.resize(top);

  std::vector<TextRow> cells;
  cells.push_back({"NODE", "VERDICT", "SCORE", "WIRE", "GPUS", "LINK", "NUMA", "REASON"});
  for (const Row& row : rows) {
    // The set's weakest link, and what of it the health policy avoids (docs/health.md).
    const std::string link =
        row.degraded.empty() ? orDash(row.link) : orDash(row.link) + " (" + row.degraded + ")";
    cells.push_back({row.name, row.verdict, std::to_string(row.score), orDash(row.wire),
                     orDash(row.gpus), link, orDash(row.numa), orDash(row.reason)});
  }
  std::string out = "pod ";
  out.append(doc->pod).append(": ");
  if (doc->error.empty()) {
    out.append(orDash(doc->demand));
  } else {
    out.append("invalid request: ").append(doc->error);
  }
  out.append("\n").append(boundLine(*doc)).append(placementLine(doc->placement));
  out.append(alignedColumns(cells));
  if (rows.size() < total) {
    out.append("(")
        .append(std::to_string(total - rows.size()))
        .append(" more nodes not shown: --top ");
    out.append(std::to_string(top)).append(")\n");
  }
  return out;
}

}  // namespace gte::report
