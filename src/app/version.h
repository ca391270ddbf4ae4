#pragma once
#include <string>

namespace gte::app {

// "0.1.0+<git describe>", set by CMake.
extern const char* const kVersion;
// The two parts, for the build_info metric.
extern const char* const kVersionNumber;
extern const char* const kGitRevision;

// {"version":"...","gitRevision":"..."} for GET /version.
std::string versionJson();

}  // namespace gte::app
