#include "prioritize/prioritize_nodes.h"

#include "prioritize/score_node.h"

namespace gte {

HostScores prioritizeNodes(const PodDemand* demand, std::span<const NodeCandidate> nodes,
                           const Policy& policy) {
  HostScores scores;
  scores.reserve(nodes.size());
  for (const NodeCandidate& node : nodes) {
    const int score =
        demand != nullptr && node.state != nullptr ? scoreNode(*demand, *node.state, policy) : 0;
    scores.push_back({node.name, score});
  }
  return scores;
}

}  // namespace gte
