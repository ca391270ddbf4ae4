#include "cluster/cluster_file.h"

#include <fstream>
#include <map>
#include <sstream>

#include "cluster/yaml_to_json.h"
#include "json/json_reader.h"

namespace gte::cluster {
namespace {

using json::JsonReader;
using json::Kind;

// The top-level `kind` and whether the object is a list (has `items`), and the items' spans.
struct ObjectShape {
  std::string kind;
  bool hasItems = false;
  std::vector<std::string_view> items;
};

Result<ObjectShape> readShape(std::string_view object, const std::string& where) {
  JsonReader reader(object);
  ObjectShape shape;
  std::string key;
  if (!reader.beginObject()) return invalidArgument(where + ": " + reader.error());
  while (reader.nextKey(key)) {
    bool good = true;
    if (key == "kind" && reader.peek() == Kind::kString) {
      good = reader.readString(shape.kind);
    } else if (key == "items" && reader.peek() == Kind::kArray) {
      shape.hasItems = true;
      good = reader.beginArray();
      while (good && reader.nextElement()) {
        std::string_view item;
        good = reader.skipValue(&item);
        shape.items.push_back(item);
      }
      good = good && reader.ok();
    } else {
      good = reader.skipValue();
    }
    if (!good) return invalidArgument(where + ": " + reader.error());
  }
  if (!reader.ok()) return invalidArgument(where + ": " + reader.error());
  return shape;
}

class ItemCollector {
 public:
  // One object that is either a list (its items are collected) or an item itself.
  Status addObject(std::string_view object) {
    auto shape = readShape(object, "item " + std::to_string(items_.size()));
    if (!shape) return std::move(shape).error();
    if (shape->hasItems) {
      items_.insert(items_.end(), shape->items.begin(), shape->items.end());
    } else {
      items_.push_back(object);
    }
    return Ok{};
  }

  // A JSON text: an array of objects or one object.
  Status addDocument(std::string_view text) {
    JsonReader reader(text);
    if (reader.peek() != Kind::kArray) {
      std::string_view object;
      if (!reader.skipValue(&object) || !reader.finish()) {
        return invalidArgument("document: " + reader.error());
      }
      return addObject(object);
    }
    reader.beginArray();
    while (reader.nextElement()) {
      std::string_view object;
      if (!reader.skipValue(&object)) {
        return invalidArgument("item " + std::to_string(items_.size()) + ": " + reader.error());
      }
      if (auto s = addObject(object); !s) return s;
    }
    if (!reader.ok() || !reader.finish()) return invalidArgument("document: " + reader.error());
    return Ok{};
  }

  const std::vector<std::string_view>& items() const { return items_; }

 private:
  std::vector<std::string_view> items_;
};

// Names already taken in the file, with the item that took them: a second object of the same
// name would silently replace the first in the cache.
struct SeenNames {
  std::map<std::string, std::size_t> nodes;  // name -> item
  std::map<std::string, std::size_t> pods;   // namespace/name or UID -> item

  Status take(std::map<std::string, std::size_t>& names, const std::string& name, std::size_t index,
              std::string_view what) {
    const auto [it, added] = names.emplace(name, index);
    if (added) return Ok{};
    return invalidArgument("item " + std::to_string(index) + " (" + std::string(what) +
                           "): " + name + " is item " + std::to_string(it->second) +
                           " already: a second object of one name would replace the first");
  }
};

Status decodeItem(std::string_view item, std::size_t index, ClusterFileContents& out,
                  SeenNames& seen) {
  const std::string where = "item " + std::to_string(index);
  auto shape = readShape(item, where);
  if (!shape) return std::move(shape).error();
  if (shape->kind == "Node") {
    auto node = parseNodeJson(item);
    if (!node) return invalidArgument(where + " (Node): " + node.error().message);
    if (node->name.empty()) return invalidArgument(where + " (Node): metadata.name is missing");
    if (auto s = seen.take(seen.nodes, node->name, index, "Node"); !s) return s;
    out.nodes.push_back(std::move(*node));
    return Ok{};
  }
  if (shape->kind == "Pod") {
    auto pod = parsePodJson(item);
    if (!pod) return invalidArgument(where + " (Pod): " + pod.error().message);
    if (pod->name.empty()) return invalidArgument(where + " (Pod): metadata.name is missing");
    const std::string named = (pod->ns.empty() ? "default" : pod->ns) + "/" + pod->name;
    if (auto s = seen.take(seen.pods, named, index, "Pod"); !s) return s;
    if (pod->terminal()) return Ok{};
    // A cluster file has no API server to assign UIDs; the namespaced name stands in.
    if (pod->uid.empty()) pod->uid = named;
    if (pod->uid != named) {
      if (auto s = seen.take(seen.pods, "uid " + pod->uid, index, "Pod"); !s) return s;
    }
    const std::optional<std::int64_t> boundAt = pod->boundAt;
    out.pods.push_back(FilePod{std::move(*pod), boundAt});
    return Ok{};
  }
  for (const GroupOwnerKind kind :
       {GroupOwnerKind::kPodGroup, GroupOwnerKind::kJob, GroupOwnerKind::kJobSet}) {
    if (shape->kind != groupOwnerKindName(kind)) continue;
    auto owner = parseGroupOwner(item, kind);
    if (!owner) return invalidArgument(where + " (" + shape->kind + "): " + owner.error().message);
    out.groupOwners.push_back(std::move(*owner));
    return Ok{};
  }
  return invalidArgument(where + ": kind \"" + shape->kind +
                         "\" is not Node, Pod, PodGroup, Job or JobSet");
}

bool looksLikeJson(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

}  // namespace

Result<ClusterFileContents> parseClusterDocument(std::string_view text) {
  std::vector<std::string> converted;  // owns the JSON of YAML documents; items point into it
  ItemCollector collector;
  if (looksLikeJson(text)) {
    if (auto s = collector.addDocument(text); !s) return std::move(s).error();
  } else {
    auto documents = yamlDocumentsToJson(text);
    if (!documents) return std::move(documents).error();
    converted = std::move(*documents);
    for (const std::string& document : converted) {
      if (auto s = collector.addDocument(document); !s) return std::move(s).error();
    }
  }
  ClusterFileContents out;
  SeenNames seen;
  for (std::size_t i = 0; i < collector.items().size(); ++i) {
    if (auto s = decodeItem(collector.items()[i], i, out, seen); !s) return std::move(s).error();
  }
  return out;
}

Result<ClusterFileContents> loadClusterFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{ErrorCode::kNotFound, "cluster file " + path + ": cannot open"};
  std::ostringstream text;
  text << in.rdbuf();
  auto contents = parseClusterDocument(text.str());
  if (!contents) {
    return Error{contents.error().code, "cluster file " + path + ": " + contents.error().message};
  }
  return contents;
}

}  // namespace gte::cluster
