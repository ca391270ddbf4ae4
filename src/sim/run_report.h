#pragma once
// What a simulation prints and writes: per run (chooser, seed) the metrics, as a table aggregated
// over seeds (mean ± standard deviation), a long CSV (one metric per row), JSON, and the
// allocation-ratio curve as CSV for tools/plot-placement.py.
#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "sim/placement_metrics.h"

namespace gte::sim {

struct LabelledRun {
  std::string scenario;  // cluster and workload, e.g. "openb-multigpu50/hgx-a100"
  std::string chooser;   // "extender+least-allocated", "best-fit", ...
  std::uint64_t seed = 0;
  RunMetrics metrics;
  std::vector<std::pair<int, double>> curve;  // (arrived %, allocated %), 1% steps
};

// Every scalar of a run as (name, value); a first failure that never happened is -1.
std::vector<std::pair<std::string, double>> flattenMetrics(const RunMetrics& metrics);

// "mean±sd" of the values (population deviation), `digits` decimals; "-" for none.
std::string formatMeanSd(std::span<const double> values, int digits);

void writeTable(std::ostream& out, std::span<const LabelledRun> runs);
void writeMetricsCsv(std::ostream& out, std::span<const LabelledRun> runs);
void writeMetricsJson(std::ostream& out, std::span<const LabelledRun> runs);
void writeCurveCsv(std::ostream& out, std::span<const LabelledRun> runs);

}  // namespace gte::sim
