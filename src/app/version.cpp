#include "app/version.h"

#include "json/json_writer.h"

namespace gte::app {

const char* const kVersion = GTE_VERSION "+" GTE_GIT_REV;
const char* const kVersionNumber = GTE_VERSION;
const char* const kGitRevision = GTE_GIT_REV;

std::string versionJson() {
  std::string out;
  gte::json::JsonWriter(out)
      .beginObject()
      .key("version")
      .string(GTE_VERSION)
      .key("gitRevision")
      .string(GTE_GIT_REV)
      .endObject();
  return out;
}

}  // namespace gte::app
