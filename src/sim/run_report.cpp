#include "sim/run_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gte::sim {
namespace {

double ratio(int part, int whole) {
  return whole == 0 ? -1 : 100.0 * part / whole;
}

}  // namespace

std::string formatMeanSd(std::span<const double> values, int digits) {
  if (values.empty()) return "-";
  double mean = 0;
  for (const double v : values)
    mean += v;
  mean /= static_cast<double>(values.size());
  double variance = 0;
  for (const double v : values)
    variance += (v - mean) * (v - mean);
  char text[64];
  std::snprintf(text, sizeof text, "%.*f±%.*f", digits, mean, digits,
                std::sqrt(variance / static_cast<double>(values.size())));
  return text;
}

namespace {

struct Stat {
  std::vector<double> values;  // -1 entries mean "did not happen" and are counted apart

  std::string format() const {
    std::vector<double> seen;
    for (const double v : values) {
      if (v >= 0) {
        seen.push_back(v);
      }
    }
    if (seen.empty()) {
      return "-";
    }
    std::string out = formatMeanSd(seen, 1);
    if (seen.size() != values.size()) {
      char text[32];
      std::snprintf(text, sizeof text, "(%zu/%zu)", seen.size(), values.size());
      out += text;
    }
    return out;
  }
};

using Columns = std::vector<std::pair<std::string, std::string>>;

// Columns of the printed table, in order: (metric name in flattenMetrics, header).
const Columns& tableColumns() {
  static const Columns columns = {
      {"ar100", "AR100"},
      {"ar130", "AR130"},
      {"first_failure", "ff"},
      {"k8.first_failure", "ff8"},
      {"k2.nvlink", "nvl2%"},
      {"k4.nvlink", "nvl4%"},
      {"k2.missed", "miss2%"},
      {"k4.missed", "miss4%"},
      {"k8.missed", "miss8%"},
      {"k2.cross_socket", "sys2%"},
      {"k4.cross_socket", "sys4%"},
      {"frag90.fgd", "frag90"},
      {"frag90.topology", "tfrag90"},
  };
  return columns;
}

// The MIG table, printed when the workload has MIG pods.
const Columns& migColumns() {
  static const Columns columns = {
      {"mig.pods", "MIG pods"},    {"mig.accepted", "accepted%"}, {"mig.failed", "failed"},
      {"mig.first_failure", "ff"}, {"mig.counts_trap", "trap"},   {"mig.trap_rate", "trap%"},
      {"mig.invalid", "invalid"},  {"mig.lost", "lost"},          {"mig.slice_util", "slices%"},
  };
  return columns;
}

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
    }
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

// RFC 4180: a field with a comma or quote is quoted, quotes doubled (cluster specs hold commas).
std::string csvField(const std::string& text) {
  if (text.find_first_of(",\"") == std::string::npos) {
    return text;
  }
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') {
      out.push_back('"');
    }
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", value);
  return text;
}

// Only for runs with MIG pods, so whole-GPU outputs keep their rows.
void appendMigMetrics(std::vector<std::pair<std::string, double>>& out, const MigMetrics& mig) {
  if (mig.pods == 0) {
    return;
  }
  out.emplace_back("mig.pods", mig.pods);
  out.emplace_back("mig.placed", mig.placed);
  out.emplace_back("mig.accepted", ratio(mig.placed, mig.pods));
  out.emplace_back("mig.failed", mig.failed);
  out.emplace_back("mig.first_failure", mig.firstFailurePercent);
  out.emplace_back("mig.counts_trap", mig.countsTrap);
  out.emplace_back("mig.trap_rate", ratio(mig.countsTrap, mig.pods));
  out.emplace_back("mig.invalid", mig.invalid);
  out.emplace_back("mig.lost", mig.lost);
  out.emplace_back("mig.slice_util", mig.sliceUtilisation);
  for (const MigMetrics::Profile& profile : mig.byProfile) {
    out.emplace_back("mig." + profile.name + ".pods", profile.pods);
    out.emplace_back("mig." + profile.name + ".failed", profile.failed);
  }
}

void appendSizeMetrics(std::vector<std::pair<std::string, double>>& out,
                       const std::vector<SizeMetrics>& sizes, bool firstFailures) {
  for (const SizeMetrics& size : sizes) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "k%d.", size.gpus);
    const std::string k = prefix;
    out.emplace_back(k + "pods", size.pods);
    out.emplace_back(k + "failed", size.failed);
    if (firstFailures) {
      out.emplace_back(k + "first_failure", size.firstFailurePercent);
    }
    if (size.gpus >= 2) {
      out.emplace_back(k + "nvlink", ratio(size.fullyNvlink, size.placed));
      out.emplace_back(k + "missed", ratio(size.missed, size.placed));
      out.emplace_back(k + "cross_socket", ratio(size.crossSocket, size.placed));
    }
  }
}

// A groups simulation: utilisation, single pods (per size too), members' GPU sets, and per level
// the groups' fate.
std::vector<std::pair<std::string, double>> flattenGroupMetrics(const RunMetrics& metrics) {
  const GroupMetrics& groups = metrics.groups;
  std::vector<std::pair<std::string, double>> out = {
      {"util", groups.utilisation},
      {"single.pods", groups.singlePods},
      {"single.failed", groups.singlePodsFailed},
      {"single.accepted", groups.singleGpusAsked == 0
                              ? -1
                              : 100.0 * static_cast<double>(groups.singleGpusPlaced) /
                                    static_cast<double>(groups.singleGpusAsked)},
  };
  appendSizeMetrics(out, metrics.bySize, false);
  out.emplace_back("member.multi_gpu", groups.multiGpuMembers);
  out.emplace_back("member.nvlink", ratio(groups.membersNvlink, groups.multiGpuMembers));
  out.emplace_back("member.missed", ratio(groups.membersMissed, groups.multiGpuMembers));
  out.emplace_back("member.plan_mismatches", groups.planMismatches);
  out.emplace_back("model.fit_one", groups.fitOneModel);
  out.emplace_back("model.one_when_fit", ratio(groups.oneModelOfFit, groups.fitOneModel));
  out.emplace_back("model.mixed", groups.mixedModels);
  out.emplace_back("model.mixed_rate", ratio(groups.mixedModels, groups.groupsPlaced));
  for (const std::size_t k : {std::size_t{2}, std::size_t{4}}) {
    const std::string m = "member" + std::to_string(k) + ".";
    out.emplace_back(m + "placed", groups.membersBySize[k]);
    out.emplace_back(m + "nvlink", ratio(groups.nvlinkBySize[k], groups.membersBySize[k]));
  }
  for (const LevelGroupMetrics& level : groups.byLevel) {
    const std::string l = level.level + ".";
    out.emplace_back(l + "groups", level.arrived);
    out.emplace_back(l + "placed", level.placed);
    out.emplace_back(l + "fit_one", level.fitOne);
    out.emplace_back(l + "whole_when_fit", ratio(level.wholeOfFitOne, level.fitOne));
    out.emplace_back(l + "whole", level.whole);
    out.emplace_back(l + "split", level.split);
    out.emplace_back(l + "split_rate", ratio(level.split, level.placed));
    out.emplace_back(l + "refused_with_room", level.refusedWithRoom);
    out.emplace_back(l + "refused_room_rate", ratio(level.refusedWithRoom, level.arrived));
    out.emplace_back(l + "refused_fit_one", level.refusedFitOne);
  }
  return out;
}

}  // namespace

std::vector<std::pair<std::string, double>> flattenMetrics(const RunMetrics& metrics) {
  if (metrics.groups.present) {
    return flattenGroupMetrics(metrics);
  }
  std::vector<std::pair<std::string, double>> out = {
      {"ar100", metrics.allocationAt100},
      {"ar130", metrics.allocationAt130},
      {"first_failure", metrics.firstFailurePercent},
  };
  appendSizeMetrics(out, metrics.bySize, true);
  appendMigMetrics(out, metrics.mig);
  for (const Fragmentation& point : metrics.fragmentation) {
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "frag%d.", point.percent);
    const std::string at = prefix;
    out.emplace_back(at + "fgd", 100 * point.fgdRate);
    out.emplace_back(at + "topology", 100 * point.topologyRate);
  }
  return out;
}

namespace {

// One table: per scenario a heading, then per chooser the columns' mean ± sd over seeds.
void writeColumns(std::ostream& out, std::span<const LabelledRun> runs, const Columns& columns,
                  const std::string& heading) {
  // (scenario, chooser) in first-seen order -> metric -> values over seeds.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::map<std::string, Stat>> stats;
  for (const LabelledRun& run : runs) {
    const auto key = std::make_pair(run.scenario, run.chooser);
    if (stats.find(key) == stats.end()) {
      order.push_back(key);
    }
    auto& byMetric = stats[key];
    for (const auto& [name, value] : flattenMetrics(run.metrics)) {
      byMetric[name].values.push_back(value);
    }
    for (const auto& column : columns) {
      byMetric[column.first];  // present even when the run has no such pods
    }
  }
  // The chooser column: 28 wide, wider for longer names.
  int width = 28;
  for (const auto& key : order) {
    width = std::max(width, static_cast<int>(key.second.size()) + 1);
  }
  char cell[96];
  std::string lastScenario;
  for (const auto& key : order) {
    if (key.first != lastScenario) {
      lastScenario = key.first;
      out << "\n== " << lastScenario << heading << "\n";
      std::snprintf(cell, sizeof cell, "%-*s", width, "chooser");
      out << cell;
      for (const auto& column : columns) {
        std::snprintf(cell, sizeof cell, " %16s", column.second.c_str());
        out << cell;
      }
      out << "\n";
    }
    std::snprintf(cell, sizeof cell, "%-*s", width, key.second.c_str());
    out << cell;
    for (const auto& column : columns) {
      std::snprintf(cell, sizeof cell, " %16s", stats[key][column.first].format().c_str());
      out << cell;
    }
    out << "\n";
  }
}

// The groups table: utilisation, single pods, then per level seen the groups' columns.
Columns groupColumns(std::span<const LabelledRun> runs) {
  Columns columns = {
      {"util", "util%"},
      {"single.accepted", "single%"},
      {"k2.missed", "miss2%"},
      {"k4.missed", "miss4%"},
      {"k8.missed", "miss8%"},
      {"member.missed", "missM%"},
      {"member2.nvlink", "nvlM2%"},
      {"member4.nvlink", "nvlM4%"},
  };
  if (std::any_of(runs.begin(), runs.end(),
                  [](const LabelledRun& run) { return run.metrics.groups.anyModel; })) {
    columns.emplace_back("model.one_when_fit", "oneModel%");
    columns.emplace_back("model.mixed_rate", "mixed%");
  }
  std::vector<std::string> levels;
  for (const LabelledRun& run : runs) {
    for (const LevelGroupMetrics& level : run.metrics.groups.byLevel) {
      if (std::find(levels.begin(), levels.end(), level.level) == levels.end()) {
        levels.push_back(level.level);
      }
    }
  }
  for (const std::string& level : levels) {
    columns.emplace_back(level + ".whole_when_fit", level + " whole%");
    columns.emplace_back(level + ".split_rate", level + " split%");
    columns.emplace_back(level + ".refused_with_room", level + " refusedR");
  }
  return columns;
}

}  // namespace

void writeTable(std::ostream& out, std::span<const LabelledRun> runs) {
  const bool anyGroups = std::any_of(
      runs.begin(), runs.end(), [](const LabelledRun& run) { return run.metrics.groups.present; });
  if (anyGroups) {
    writeColumns(out, runs, groupColumns(runs), " (groups)");
    return;
  }
  writeColumns(out, runs, tableColumns(), "");
  const bool anyMig = std::any_of(runs.begin(), runs.end(),
                                  [](const LabelledRun& run) { return run.metrics.mig.pods > 0; });
  if (anyMig) {
    writeColumns(out, runs, migColumns(), " (MIG)");
  }
}

void writeMetricsCsv(std::ostream& out, std::span<const LabelledRun> runs) {
  out << "scenario,chooser,seed,metric,value\n";
  for (const LabelledRun& run : runs) {
    for (const auto& [name, value] : flattenMetrics(run.metrics)) {
      out << csvField(run.scenario) << ',' << csvField(run.chooser) << ',' << run.seed << ','
          << name << ',' << number(value) << '\n';
    }
  }
}

void writeMetricsJson(std::ostream& out, std::span<const LabelledRun> runs) {
  out << "[";
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const LabelledRun& run = runs[i];
    out << (i == 0 ? "\n" : ",\n") << "  {\"scenario\": " << jsonString(run.scenario)
        << ", \"chooser\": " << jsonString(run.chooser) << ", \"seed\": " << run.seed
        << ", \"metrics\": {";
    const auto flat = flattenMetrics(run.metrics);
    for (std::size_t m = 0; m < flat.size(); ++m) {
      out << (m == 0 ? "" : ", ") << jsonString(flat[m].first) << ": " << number(flat[m].second);
    }
    out << "}}";
  }
  out << "\n]\n";
}

void writeCurveCsv(std::ostream& out, std::span<const LabelledRun> runs) {
  out << "scenario,chooser,seed,arrived_percent,allocated_percent\n";
  for (const LabelledRun& run : runs) {
    for (const auto& [arrived, allocated] : run.curve) {
      out << csvField(run.scenario) << ',' << csvField(run.chooser) << ',' << run.seed << ','
          << arrived << ',' << number(allocated) << '\n';
    }
  }
}

}  // namespace gte::sim
