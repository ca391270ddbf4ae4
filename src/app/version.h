#pragma once
#include <string>

namespace gte::app {

// "0.1.0+<git describe>", set by CMake.
extern const char* const kVersion;

// {"version":"...","gitRevision":"..."} for GET /version.
std::string versionJson();

}  // namespace gte::app
