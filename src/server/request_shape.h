#pragma once
// What a decision body asks the extender to do, read from its top-level keys before any work is
// done: how many nodes (or preemption candidates) it names and whether it carries full Node
// objects. The router refuses oversized or wrong-mode requests from this alone, so their cost is
// one skim of the body, never a node-state build per node.
#include <cstddef>
#include <optional>
#include <string_view>

namespace gte::server {

struct RequestShape {
  bool fullNodes = false;  // ExtenderArgs.Nodes is not null
  // The largest of Nodes.items, NodeNames and the preemption candidate maps; counting stops one
  // past the limit given to scanRequestShape.
  std::size_t nodes = 0;
};

// nullopt when the body is not a JSON object this skim can read: the verb's own parser then
// answers with its usual, precise error.
std::optional<RequestShape> scanRequestShape(std::string_view body, std::size_t countLimit);

}  // namespace gte::server
