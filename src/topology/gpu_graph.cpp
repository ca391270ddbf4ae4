#include "topology/gpu_graph.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/connected_components.hpp>
#include <boost/graph/filtered_graph.hpp>

#include <algorithm>
#include <array>

namespace gte {
namespace {

struct LinkEdge {
  int nvlinks = 0;
  PcieLevel pcie = PcieLevel::kUnknown;
  int score = 0;        // policy pair score
  int pluginScore = 0;  // device plugin pair score
};

using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS,
                                    boost::no_property, LinkEdge>;
using Edge = boost::graph_traits<Graph>::edge_descriptor;
using Vertex = boost::graph_traits<Graph>::vertex_descriptor;

// go-gpuallocator calculateGPUPairScore, indexed by PcieLevel (unknown adds nothing).
constexpr std::array<int, kPcieLevelCount> kPluginPcieScore = {0, 10, 20, 30, 40, 50, 60};
constexpr int kPluginPointsPerNvlink = 100;

// Keeps NVLink edges between two members of a GPU subset.
struct NvlinkInside {
  const Graph* graph = nullptr;
  GpuMask members = 0;
  bool operator()(const Edge& e) const {
    const auto s = static_cast<int>(boost::source(e, *graph));
    const auto t = static_cast<int>(boost::target(e, *graph));
    return (*graph)[e].nvlinks > 0 && (members & bitOf(s)) != 0 && (members & bitOf(t)) != 0;
  }
};

struct InMask {
  GpuMask members = 0;
  bool operator()(const Vertex& v) const { return (members & bitOf(static_cast<int>(v))) != 0; }
};

}  // namespace

int devicePluginPairScore(const GpuTopology& topology, int i, int j) noexcept {
  const int nvlinks = topology.nvswitchFabric() ? 0 : topology.installedNvlinks(i, j);
  return kPluginPcieScore[static_cast<std::size_t>(topology.pcieLevel(i, j))] +
         kPluginPointsPerNvlink * nvlinks;
}

struct GpuGraph::Impl {
  Graph graph;
  std::array<int, kMaxGpus> numa{};
};

GpuGraph::GpuGraph(const GpuTopology& topology, const LinkScores& scores)
    : impl_(std::make_unique<Impl>()) {
  const int n = std::min(topology.gpuCount, kMaxGpus);
  impl_->graph = Graph(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    impl_->numa[static_cast<std::size_t>(i)] = i < static_cast<int>(topology.numa.size())
                                                   ? topology.numa[static_cast<std::size_t>(i)]
                                                   : -1;
    for (int j = i + 1; j < n; ++j) {
      LinkEdge edge;
      edge.nvlinks = topology.nvlinkCount(i, j);
      edge.pcie = topology.pcieLevel(i, j);
      edge.score = scores.nvlinkPerLink * edge.nvlinks + scores.pcieScore(edge.pcie);
      edge.pluginScore = devicePluginPairScore(topology, i, j);
      boost::add_edge(static_cast<Vertex>(i), static_cast<Vertex>(j), edge, impl_->graph);
    }
  }
}

GpuGraph::~GpuGraph() = default;
GpuGraph::GpuGraph(GpuGraph&&) noexcept = default;
GpuGraph& GpuGraph::operator=(GpuGraph&&) noexcept = default;

PairTable GpuGraph::pairTable() const {
  const Graph& g = impl_->graph;
  PairTable table;
  table.gpuCount = static_cast<int>(boost::num_vertices(g));
  table.numa = impl_->numa;
  for (auto& row : table.linkClass) {
    row.fill(LinkClass::kNvlink);  // the diagonal: a GPU is not weaker than anything
  }
  const auto [begin, end] = boost::edges(g);
  for (auto it = begin; it != end; ++it) {
    const auto s = static_cast<std::size_t>(boost::source(*it, g));
    const auto t = static_cast<std::size_t>(boost::target(*it, g));
    const LinkEdge& edge = g[*it];
    const LinkClass cls = edge.nvlinks > 0 ? LinkClass::kNvlink : linkClassOf(edge.pcie);
    table.score[s][t] = table.score[t][s] = edge.score;
    table.pluginScore[s][t] = table.pluginScore[t][s] = edge.pluginScore;
    table.linkClass[s][t] = table.linkClass[t][s] = cls;
    if (edge.nvlinks > 0) {
      table.nvlinkNeighbours[s] |= bitOf(static_cast<int>(t));
      table.nvlinkNeighbours[t] |= bitOf(static_cast<int>(s));
    }
    table.maxScore = std::max(table.maxScore, edge.score);
  }
  return table;
}

std::vector<GpuMask> GpuGraph::nvlinkDomains(GpuMask members) const {
  const Graph& g = impl_->graph;
  members &= allGpus(static_cast<int>(boost::num_vertices(g)));
  if (members == 0) {
    return {};  // connected_components is not defined on an empty vertex set
  }
  const boost::filtered_graph<Graph, NvlinkInside, InMask> sub(g, NvlinkInside{&g, members},
                                                               InMask{members});
  // connected_components numbers the vertices of the filtered view; the map is indexed by the
  // underlying vertex id, so vertices outside `members` simply keep -1.
  std::vector<int> component(boost::num_vertices(g), -1);
  const int count = static_cast<int>(boost::connected_components(
      sub,
      boost::make_iterator_property_map(component.begin(), boost::get(boost::vertex_index, g))));
  std::vector<GpuMask> domains(static_cast<std::size_t>(count), 0);
  for (std::size_t v = 0; v < component.size(); ++v) {
    if ((members & bitOf(static_cast<int>(v))) != 0 && component[v] >= 0) {
      domains[static_cast<std::size_t>(component[v])] |= bitOf(static_cast<int>(v));
    }
  }
  std::erase(domains, GpuMask{0});
  std::sort(domains.begin(), domains.end(),
            [](GpuMask a, GpuMask b) { return std::countr_zero(a) < std::countr_zero(b); });
  return domains;
}

}  // namespace gte
