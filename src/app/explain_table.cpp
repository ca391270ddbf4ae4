#include "app/explain_table.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "json/json_reader.h"

namespace gte::app {
namespace {

using json::JsonReader;
using json::Kind;

struct Row {
  std::string name, verdict, reason, link, numa, gpus;
  std::string wire;  // wireScoreAfterFilter: what kube-scheduler's prioritize call gets
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
};

// A string, integer or null as text; anything else is skipped and reads as "".
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

bool readNode(JsonReader& r, Row& row) {
  if (!r.beginObject()) return false;
  std::string key;
  std::string scratch;
  while (r.nextKey(key)) {
    bool ok = true;
    if (key == "name") {
      ok = readScalar(r, row.name);
    } else if (key == "verdict") {
      ok = readScalar(r, row.verdict);
    } else if (key == "reason") {
      ok = readScalar(r, row.reason);
    } else if (key == "weakestLink") {
      ok = readScalar(r, row.link);
    } else if (key == "numaSpan") {
      ok = readScalar(r, row.numa);
    } else if (key == "gpus") {
      ok = readInts(r, row.gpus);
    } else if (key == "wireScoreAfterFilter") {
      ok = readScalar(r, row.wire);
    } else if (key == "score") {
      ok = r.readInt64(row.score);
    } else {
      ok = r.skipValue();
    }
    if (!ok) return false;
  }
  return r.ok();
}

// {"weakestLink": "nvlink", "bandwidthGBps": 50} as "nvlink 50 GB/s"; null as "".
bool readSet(JsonReader& r, std::string& out) {
  out.clear();
  if (r.readNull()) return true;
  if (!r.beginObject()) return false;
  std::string key, link, gbps;
  while (r.nextKey(key)) {
    if (!readScalar(r, key == "weakestLink" ? link : key == "bandwidthGBps" ? gbps : key)) {
      return false;
    }
  }
  out = link + " " + gbps + " GB/s";
  return r.ok();
}

bool readPlacement(JsonReader& r, Placement& out) {
  if (r.readNull()) return true;
  if (!r.beginObject()) return false;
  out.present = true;
  std::string key;
  while (r.nextKey(key)) {
    bool ok = true;
    if (key == "node") {
      ok = readScalar(r, out.node);
    } else if (key == "gpus") {
      ok = readInts(r, out.gpus);
    } else if (key == "got") {
      ok = readSet(r, out.got);
    } else if (key == "best") {
      ok = readSet(r, out.best);
    } else if (key == "bestFeasible") {
      ok = readSet(r, out.bestFeasible);
    } else if (key == "bestFeasibleNode") {
      ok = readScalar(r, out.bestFeasibleNode);
    } else if (key == "topRankedNode") {
      ok = readScalar(r, out.topRankedNode);
    } else if (key == "reason") {
      ok = readScalar(r, out.reason);
    } else if (key == "regret") {
      std::string_view raw;
      ok = r.skipValue(&raw);
      out.regret = raw == "null" ? "" : std::string(raw);
    } else {
      ok = r.skipValue();
    }
    if (!ok) return false;
  }
  return r.ok();
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

bool readDemand(JsonReader& r, std::string& out) {
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
  if (gpus != "0") out.append(gpus).append(gpus == "1" ? " GPU" : " GPUs");
  if (!mig.empty()) out.append(out.empty() ? "" : ", ").append(mig);
  if (!minLink.empty()) out.append(", min-link ").append(minLink);
  if (singleNuma) out.append(", single NUMA node");
  if (!strategy.empty()) out.append(", ").append(strategy);
  return r.ok();
}

bool readPod(JsonReader& r, Document& doc) {
  if (!r.beginObject()) return false;
  std::string key, ns, name;
  while (r.nextKey(key)) {
    bool ok = true;
    if (key == "namespace") {
      ok = readScalar(r, ns);
    } else if (key == "name") {
      ok = readScalar(r, name);
    } else if (key == "error") {
      ok = readScalar(r, doc.error);
    } else if (key == "demand") {
      ok = readDemand(r, doc.demand);
    } else {
      ok = r.skipValue();
    }
    if (!ok) return false;
  }
  doc.pod = ns + "/" + name;
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
      if (key == "pod") {
        ok = readPod(r, doc);
      } else if (key == "placement") {
        ok = readPlacement(r, doc.placement);
      } else if (key == "nodes" && r.beginArray()) {
        sawNodes = true;
        while (ok && r.nextElement()) {
          doc.rows.emplace_back();
          ok = readNode(r, doc.rows.back());
        }
      } else {
        ok = r.skipValue();
      }
      if (!ok) break;
    }
  }
  if (r.ok()) r.finish();
  if (!r.ok()) return invalidArgument("not an explain document: " + r.error());
  if (!sawNodes) return invalidArgument("not an explain document: no \"nodes\"");
  return doc;
}

int verdictRank(const std::string& verdict) {
  if (verdict == "fit") return 0;
  if (verdict == "unschedulable") return 1;
  return 2;
}

std::string orDash(const std::string& s) {
  return s.empty() ? "-" : s;
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

  std::vector<std::vector<std::string>> cells;
  cells.push_back({"NODE", "VERDICT", "SCORE", "WIRE", "GPUS", "LINK", "NUMA", "REASON"});
  for (const Row& row : rows) {
    cells.push_back({row.name, row.verdict, std::to_string(row.score), orDash(row.wire),
                     orDash(row.gpus), orDash(row.link), orDash(row.numa), orDash(row.reason)});
  }
  std::vector<std::size_t> width(cells.front().size(), 0);
  for (const auto& line : cells) {
    for (std::size_t c = 0; c < line.size(); ++c)
      width[c] = std::max(width[c], line[c].size());
  }
  std::string out = "pod ";
  out.append(doc->pod).append(": ");
  if (doc->error.empty()) {
    out.append(orDash(doc->demand));
  } else {
    out.append("invalid request: ").append(doc->error);
  }
  out.append("\n").append(placementLine(doc->placement));
  for (const auto& line : cells) {
    std::string text;
    for (std::size_t c = 0; c < line.size(); ++c) {
      text += line[c];
      if (c + 1 < line.size()) text.append(width[c] - line[c].size() + 2, ' ');
    }
    out.append(text).append("\n");
  }
  if (rows.size() < total) {
    out.append("(")
        .append(std::to_string(total - rows.size()))
        .append(" more nodes not shown: --top ");
    out.append(std::to_string(top)).append(")\n");
  }
  return out;
}

}  // namespace gte::app
