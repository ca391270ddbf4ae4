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
using json::Kind;

struct Row {
  std::string name, verdict, reason, link, numa, gpus;
  std::string wire;  // wireScoreAfterFilter: what kube-scheduler's prioritize call gets
  std::int64_t score = 0;
};

struct Document {
  std::string pod;     // NAMESPACE/NAME
  std::string demand;  // "4 GPUs, min-link nvlink, single NUMA, binpack"
  std::string error;   // the pod's own request is invalid
  std::vector<Row> rows;
};

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
      ok = readDemandText(r, doc.demand);
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
    cells.push_back({row.name, row.verdict, std::to_string(row.score), orDash(row.wire),
                     orDash(row.gpus), orDash(row.link), orDash(row.numa), orDash(row.reason)});
  }
  std::string out = "pod ";
  out.append(doc->pod).append(": ");
  if (doc->error.empty()) {
    out.append(orDash(doc->demand));
  } else {
    out.append("invalid request: ").append(doc->error);
  }
  out.append("\n").append(alignedColumns(cells));
  if (rows.size() < total) {
    out.append("(")
        .append(std::to_string(total - rows.size()))
        .append(" more nodes not shown: --top ");
    out.append(std::to_string(top)).append(")\n");
  }
  return out;
}

}  // namespace gte::report
