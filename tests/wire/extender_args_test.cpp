#include "wire/extender_args.h"

#include "model/node_info.h"

#include <catch2/catch_test_macros.hpp>
#include <string>
#include <vector>

using gte::wire::parseBindingArgs;
using gte::wire::parseExtenderArgs;
using gte::wire::parsePreemptionArgs;

namespace {

const std::string kPod =
    R"({"metadata":{"name":"p","namespace":"ml","uid":"u"},"spec":{"containers":[{"name":"c",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}}]}})";

}  // namespace

TEST_CASE("ExtenderArgs in names mode (nodeCacheCapable: true)") {
  const std::string body = R"({"Pod":)" + kPod + R"(,"Nodes":null,"NodeNames":["a","b"]})";
  auto args = parseExtenderArgs(body);
  REQUIRE(args.ok());
  CHECK(args->pod.name == "p");
  CHECK_FALSE(args->nodes.has_value());
  REQUIRE(args->nodeNames.has_value());
  CHECK(*args->nodeNames == std::vector<std::string>{"a", "b"});
}

TEST_CASE("ExtenderArgs in full-Node mode keeps each node's exact bytes") {
  const std::string nodeA = R"({"metadata":{"name":"a","labels":{"x":"\u003c"}},"status":{}})";
  const std::string nodeB = R"({ "metadata" : { "name" : "b" } })";
  const std::string body = R"({"Pod":)" + kPod + R"(,"Nodes":{"metadata":{},"items":[)" + nodeA +
                           "," + nodeB + R"(]},"NodeNames":null})";
  auto args = parseExtenderArgs(body);
  REQUIRE(args.ok());
  REQUIRE(args->nodes.has_value());
  REQUIRE(args->nodes->size() == 2);
  CHECK((*args->nodes)[0].raw == nodeA);
  CHECK((*args->nodes)[1].raw == nodeB);
  CHECK((*args->nodes)[0].info->labels.at("x") == "<");
  CHECK((*args->nodes)[1].name == "b");
}

TEST_CASE("A node with a bad quantity is kept by name with its error") {
  const std::string body =
      R"({"Pod":)" + kPod +
      R"(,"Nodes":{"items":[{"metadata":{"name":"bad"},"status":{"allocatable":)"
      R"({"nvidia.com/gpu":"lots"}}}]},"NodeNames":null})";
  auto args = parseExtenderArgs(body);
  REQUIRE(args.ok());
  const auto& item = (*args->nodes)[0];
  CHECK(item.name == "bad");
  REQUIRE_FALSE(item.info.ok());
  CHECK(item.info.error().message.find("nvidia.com/gpu") != std::string::npos);
}

TEST_CASE("Node items read in one pass give what each node read alone gives") {
  // Spaces around and inside items, a good node after a bad one, a node without a name.
  const std::vector<std::string> nodes = {
      R"({"metadata":{"name":"a"},"status":{"allocatable":{"nvidia.com/gpu":"8"}}})",
      R"( {"status":{"allocatable":{"nvidia.com/gpu":"-"}},"metadata":{"name":"b"}} )",
      R"({ "metadata" : { "name" : "c" , "labels" : { "k" : "v" } } , "spec" : { } })",
      R"({"metadata":{"labels":{}},"status":{}})"};
  std::string items;
  for (const std::string& node : nodes)
    items += (items.empty() ? "" : ",") + node;
  const std::string body = R"({"Pod":)" + kPod + R"(,"Nodes":{"items":[)" + items + "]}}";
  auto args = parseExtenderArgs(body);
  // The nameless node cannot be answered by name: the body is refused, naming the item.
  REQUIRE_FALSE(args.ok());
  CHECK(args.error().message.find("Nodes.items[3]") != std::string::npos);

  const std::string answerable = R"({"Pod":)" + kPod + R"(,"Nodes":{"items":[)" + nodes[0] + "," +
                                 nodes[1] + "," + nodes[2] + "]}}";
  args = parseExtenderArgs(answerable);
  REQUIRE(args.ok());
  REQUIRE(args->nodes->size() == 3);
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& item = (*args->nodes)[i];
    INFO("item " << i);
    // The span is the node's exact bytes (without the spaces around it).
    CHECK(item.raw == std::string_view(nodes[i]).substr(
                          nodes[i].find('{'), nodes[i].rfind('}') + 1 - nodes[i].find('{')));
    const auto alone = gte::parseNodeJson(item.raw);
    REQUIRE(item.info.ok() == alone.ok());
    if (alone.ok()) {
      CHECK(item.info->name == alone->name);
      CHECK(item.info->labels == alone->labels);
    } else {
      CHECK(item.info.error().message == alone.error().message);
    }
  }
  CHECK((*args->nodes)[1].name == "b");
  CHECK_FALSE((*args->nodes)[1].info.ok());
}

TEST_CASE("Keys match case-insensitively, as Go's decoder does") {
  auto args = parseExtenderArgs(R"({"pod":)" + kPod + R"(,"nodenames":["a"]})");
  REQUIRE(args.ok());
  CHECK(args->nodeNames->size() == 1);
}

TEST_CASE("ExtenderArgs errors are clear") {
  struct Case {
    std::string body;
    const char* expect;
  };
  const Case cases[] = {
      {"{", "malformed"},
      {"[]", "expected a JSON object"},
      {R"({"NodeNames":["a"]})", "no Pod"},
      {R"({"Pod":null,"NodeNames":["a"]})", "no Pod"},
      {R"({"Pod":[],"NodeNames":["a"]})", "Pod: expected an object"},
      {R"({"Pod":)" + kPod + "}", "neither Nodes nor NodeNames"},
      {R"({"Pod":)" + kPod + R"(,"NodeNames":[1]})", "NodeNames: expected strings"},
      {R"({"Pod":)" + kPod + R"(,"NodeNames":["a"],"Nodes":{"items":[]}})",
       "both Nodes and NodeNames"},
      {R"({"Pod":{"spec":{"containers":[{"resources":{"limits":{"nvidia.com/gpu":"1.5.2"}}}]}},)"
       R"("NodeNames":["a"]})",
       "invalid quantity"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.body);
    auto args = parseExtenderArgs(c.body);
    REQUIRE_FALSE(args.ok());
    CHECK(args.error().message.find(c.expect) != std::string::npos);
  }
}

TEST_CASE("ExtenderArgs limits stop the parse where the body breaks them") {
  gte::wire::ArgsLimits limits;
  limits.maxNodes = 2;
  const std::string two = R"({"Pod":)" + kPod + R"(,"NodeNames":["a","b"]})";
  CHECK(parseExtenderArgs(two, limits).ok());

  // The refusal comes at the third name: what follows it is never read (here it is not JSON).
  const std::string three = R"({"Pod":)" + kPod + R"(,"NodeNames":["a","b","c" garbage)";
  auto many = parseExtenderArgs(three, limits);
  REQUIRE_FALSE(many.ok());
  CHECK(many.error().code == gte::ErrorCode::kTooLarge);
  CHECK(many.error().message == "request names more than 2 nodes (--max-nodes-per-request)");

  const std::string items = R"({"Pod":)" + kPod +
                            R"(,"Nodes":{"items":[{"metadata":{"name":"a"}},)"
                            R"({"metadata":{"name":"b"}},{"metadata":{"name":"c"}}]}})";
  CHECK(parseExtenderArgs(items, limits).error().code == gte::ErrorCode::kTooLarge);
  CHECK(parseExtenderArgs(items).ok());

  // Names mode refuses Node objects at the key, before any node is read.
  limits.nodeObjectsRefused = true;
  const std::string objects = R"({"Pod":)" + kPod + R"(,"Nodes":{"items":[{"metadata": trunc)";
  auto refused = parseExtenderArgs(objects, limits);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == gte::ErrorCode::kFailedPrecondition);
  CHECK(parseExtenderArgs(two, limits).ok());  // names still pass
  const std::string nullNodes = R"({"Pod":)" + kPod + R"(,"Nodes":null,"NodeNames":["a"]})";
  CHECK(parseExtenderArgs(nullNodes, limits).ok());
}

TEST_CASE("ExtenderBindingArgs") {
  auto b = parseBindingArgs(R"({"PodName":"p","PodNamespace":"ml","PodUID":"u","Node":"a"})");
  REQUIRE(b.ok());
  CHECK(b->podName == "p");
  CHECK(b->podNamespace == "ml");
  CHECK(b->podUid == "u");
  CHECK(b->node == "a");
  CHECK_FALSE(parseBindingArgs(R"({"PodName":"p","PodNamespace":"ml"})").ok());
  CHECK_FALSE(parseBindingArgs(R"({"PodName":1,"PodNamespace":"ml","Node":"a"})").ok());
}

TEST_CASE("ExtenderPreemptionArgs in both forms, empty victim lists accepted") {
  auto meta =
      parsePreemptionArgs(R"({"Pod":)" + kPod +
                          R"(,"NodeNameToVictims":null,"NodeNameToMetaVictims":{)"
                          R"("a":{"Pods":[{"UID":"v1"},{"UID":"v2"}],"NumPDBViolations":1},)"
                          R"("b":{"Pods":[],"NumPDBViolations":0}}})");
  REQUIRE(meta.ok());
  REQUIRE(meta->candidates.size() == 2);
  CHECK(meta->candidates[0].node == "a");
  CHECK(meta->candidates[0].pods.size() == 2);
  CHECK(meta->candidates[0].pods[1].uid == "v2");
  CHECK(meta->candidates[0].numPdbViolations == 1);
  CHECK(meta->candidates[1].pods.empty());

  auto full =
      parsePreemptionArgs(R"({"Pod":)" + kPod + R"(,"NodeNameToVictims":{"a":{"Pods":[)" + kPod +
                          R"(],"NumPDBViolations":0}},"NodeNameToMetaVictims":null})");
  REQUIRE(full.ok());
  REQUIRE(full->candidates[0].pods.size() == 1);
  CHECK(full->candidates[0].pods[0].uid == "u");
  REQUIRE(full->candidates[0].pods[0].pod.has_value());
}
