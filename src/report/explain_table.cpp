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
  return readObject(r,
                    {{"name", &row.name},
                     {"verdict", &row.verdict},
                     {"reason", &row.reason},
                     {"weakestLink", &row.link},
                     {"numaSpan", &row.numa},
                     {"wireScoreAfterFilter", &row.wire}},
                    [&](const std::string& key) {
                      if (key == "gpus") return readInts(r, row.gpus);
                      if (key == "score") return r.readInt64(row.score);
                      return false;
                    });
}

bool readPod(JsonReader& r, Document& doc) {
  std::string ns, name;
  const bool ok = readObject(
      r, {{"namespace", &ns}, {"name", &name}, {"error", &doc.error}},
      [&](const std::string& key) { return key == "demand" && readDemandText(r, doc.demand); });
  doc.pod = ns + "/" + name;
  return ok;
}

Result<Document> readDocument(std::string_view text) {
  JsonReader r(text);
  Document doc;
  bool sawNodes = false;
  readObject(r, {}, [&](const std::string& key) {
    if (key == "pod") return readPod(r, doc);
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
