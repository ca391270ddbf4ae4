#pragma once
// Typed list+watch: a kind's objects are read by its reader (a pull-parser function such as the
// model's readNodeJson) and handed whole to an ObjectSink of that type.
//
//   class LeaseCache final : public kube::ObjectSink<Lease> { ... };
//   kube::Reflector leases(transport, kube::reflectorSink<Lease>(readLeaseJson, cache),
//                          {.resource = "leases", .path = "/apis/coordination.k8s.io/v1/leases"});
#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "kube/reflector_sink.h"

namespace gte::kube {

// Calls come from the reflector's thread, in the order the API server sent the objects.
template <typename Object>
class ObjectSink {
 public:
  virtual ~ObjectSink() = default;
  // A full list starts: items that follow replace the cache's contents once endList() is called.
  // A list that fails part way is simply started again with beginList().
  virtual void beginList() = 0;
  // One list item. An error skips it.
  virtual Status listItem(Object object) = 0;
  virtual void endList() = 0;
  // ADDED, MODIFIED or DELETED. An error skips the event.
  virtual Status apply(WatchEventType type, Object object) = 0;
};

// What a watch resumes from: a watched object carries its metadata.resourceVersion.
template <typename Object>
concept WatchedObject = std::movable<Object> && requires(const Object& object) {
  { object.resourceVersion } -> std::convertible_to<std::string>;
};

// Reads one object from a reader standing at it, to the object's end and no further.
template <typename Object>
using ObjectReader = std::function<Result<Object>(json::JsonReader& reader)>;

// The ReflectorSink of an ObjectSink: holds each object read until the Reflector hands it on.
template <WatchedObject Object>
class TypedReflectorSink final : public ReflectorSink {
 public:
  TypedReflectorSink(ObjectReader<Object> read, std::shared_ptr<ObjectSink<Object>> sink)
      : read_(std::move(read)), sink_(std::move(sink)) {}

  Result<std::string> read(json::JsonReader& reader) override {
    held_.reset();
    auto object = read_(reader);
    if (!object) return std::move(object).error();
    std::string version = object->resourceVersion;
    held_ = std::move(*object);
    return version;
  }
  void beginList() override { sink_->beginList(); }
  Status listItem() override {
    auto object = take();
    if (!object) return std::move(object).error();
    return sink_->listItem(std::move(*object));
  }
  void endList() override { sink_->endList(); }
  Status apply(WatchEventType type) override {
    auto object = take();
    if (!object) return std::move(object).error();
    return sink_->apply(type, std::move(*object));
  }

 private:
  Result<Object> take() {
    if (!held_) return Error{ErrorCode::kInternal, "no object was read"};
    Object object = std::move(*held_);
    held_.reset();
    return object;
  }

  ObjectReader<Object> read_;
  std::shared_ptr<ObjectSink<Object>> sink_;
  std::optional<Object> held_;
};

template <WatchedObject Object>
std::shared_ptr<ReflectorSink> reflectorSink(ObjectReader<Object> read,
                                             std::shared_ptr<ObjectSink<Object>> sink) {
  return std::make_shared<TypedReflectorSink<Object>>(std::move(read), std::move(sink));
}

}  // namespace gte::kube
