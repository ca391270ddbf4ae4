// Ranking properties through the HTTP API of the running binary, in both cache modes: full Node
// objects in each request (no cluster), and NodeNames against a --cluster-file cache.
#include <unistd.h>

#include <catch2/catch_test_macros.hpp>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "extender_process.h"
#include "http_test_client.h"
#include "json/json_writer.h"
#include "support/node_fixtures.h"

using gte::NodeInfo;
using gte::testing::ExtenderProcess;
using gte::testing::FixtureState;
using gte::testing::httpRequest;

namespace {

std::string nodeJson(const NodeInfo& node) {
  std::string out;
  gte::json::JsonWriter w(out);
  w.beginObject().key("metadata").beginObject().key("name").string(node.name).key("labels");
  w.beginObject();
  for (const auto& [k, v] : node.labels)
    w.key(k).string(v);
  w.endObject().endObject().key("status").beginObject().key("allocatable").beginObject();
  for (const auto& [name, q] : node.allocatable.entries()) {
    w.key(name).string(std::to_string(q.wholeUnits().value_or(0)));
  }
  w.endObject().endObject().endObject();
  return out;
}

std::string podJson(int gpus) {
  return R"({"metadata":{"name":"p","namespace":"ml","uid":"p-uid"},"spec":{"containers":[{"name":"m",)"
         R"("resources":{"limits":{"nvidia.com/gpu":")" +
         std::to_string(gpus) + R"("},"requests":{"nvidia.com/gpu":")" + std::to_string(gpus) +
         R"("}}}]}})";
}

// Host -> score from a prioritize answer like [{"Host":"a","Score":7},...].
std::map<std::string, int> scores(const std::string& body) {
  std::map<std::string, int> out;
  std::size_t pos = 0;
  while ((pos = body.find("\"Host\":\"", pos)) != std::string::npos) {
    pos += 8;
    const auto end = body.find('"', pos);
    const std::string host = body.substr(pos, end - pos);
    const auto s = body.find("\"Score\":", end) + 8;
    out[host] = std::stoi(body.substr(s));
    pos = end;
  }
  return out;
}

// Runs prioritize for `gpus` over `nodes` in one mode and returns the scores.
class Modes {
 public:
  explicit Modes(std::vector<NodeInfo> nodes) : nodes_(std::move(nodes)) {
    char path[] = "/tmp/gte-cluster-XXXXXX.json";
    const int fd = mkstemps(path, 5);
    std::string list = R"({"apiVersion":"v1","kind":"List","items":[)";
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (i) list.push_back(',');
      list.append(R"({"kind":"Node",)");
      list.append(nodeJson(nodes_[i]).substr(1));
    }
    list += "]}";
    REQUIRE(write(fd, list.data(), list.size()) == static_cast<ssize_t>(list.size()));
    close(fd);
    clusterFile_ = path;
  }
  ~Modes() { unlink(clusterFile_.c_str()); }

  std::map<std::string, int> fullNodes(int gpus) const {
    ExtenderProcess ext({});
    std::string items;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (i) items.push_back(',');
      items.append(nodeJson(nodes_[i]));
    }
    auto r = httpRequest(ext.port(), "POST", "/scheduler/prioritize",
                         R"({"Pod":)" + podJson(gpus) + R"(,"Nodes":{"metadata":{},"items":[)" +
                             items + R"(]},"NodeNames":null})");
    REQUIRE(r.status == 200);
    return scores(r.body);
  }

  std::map<std::string, int> names(int gpus) const {
    ExtenderProcess ext({"--cluster-file", clusterFile_});
    std::string list;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (i) list.push_back(',');
      list.push_back('"');
      list.append(nodes_[i].name);
      list.push_back('"');
    }
    auto r =
        httpRequest(ext.port(), "POST", "/scheduler/prioritize",
                    R"({"Pod":)" + podJson(gpus) + R"(,"Nodes":null,"NodeNames":[)" + list + "]}");
    REQUIRE(r.status == 200);
    return scores(r.body);
  }

 private:
  std::vector<NodeInfo> nodes_;
  std::string clusterFile_;
};

}  // namespace

TEST_CASE("Multi-GPU pods rank the node with an NVLink-connected free set above one without") {
  // DGX-1V with half its GPUs busy still has the NVLink quad 4-7 free; the L40S box has 4 free
  // GPUs joined only by PCIe.
  Modes modes({gte::testing::makeDgx1Volta(FixtureState().withName("dgx1").withUsed("11110000")),
               gte::testing::make4xPcieL40s(FixtureState().withName("l40s"))});
  for (int gpus : {2, 4}) {
    CAPTURE(gpus);
    const auto full = modes.fullNodes(gpus);
    const auto named = modes.names(gpus);
    CHECK(full.at("dgx1") > full.at("l40s"));
    CHECK(named.at("dgx1") > named.at("l40s"));
    CHECK(full == named);  // both modes decide from the same labels
  }
}

TEST_CASE("A 1-GPU pod prefers a lone free GPU to breaking up the last free NVLink pair") {
  // "pair": only GPUs 0 and 3 are free, joined by NV2. "lone": only GPU 7 is free.
  Modes modes({gte::testing::makeDgx1Volta(FixtureState().withName("pair").withUsed("01101111")),
               gte::testing::makeDgx1Volta(FixtureState().withName("lone").withUsed("11111110"))});
  const auto full = modes.fullNodes(1);
  const auto named = modes.names(1);
  CHECK(full.at("lone") > full.at("pair"));
  CHECK(named.at("lone") > named.at("pair"));
}

TEST_CASE("The default policy packs: a 1-GPU pod goes to a nearly full node, not an empty one") {
  Modes modes({gte::testing::makeDgxH100(FixtureState().withName("empty")),
               gte::testing::makeDgxH100(FixtureState().withName("busy").withUsed("11111110"))});
  const auto full = modes.fullNodes(1);
  const auto named = modes.names(1);
  CHECK(full.at("busy") > full.at("empty"));
  CHECK(named.at("busy") > named.at("empty"));
}
