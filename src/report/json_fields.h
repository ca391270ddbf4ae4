#pragma once
// Reading the extender's JSON answers for the operator tables: the few value shapes they share,
// read leniently (a field of an unexpected type reads as empty), since a table is for people and
// an extender newer than the table may add fields. Pure.
#include <string>

#include "json/json_reader.h"

namespace gte::report {

// A string, integer or null as text ("" for null); any other value is skipped and reads as "".
bool readScalar(json::JsonReader& r, std::string& out);
// An array of integers as "0,1,2"; anything else reads as "".
bool readInts(json::JsonReader& r, std::string& out);
// The `demand` object of explain and whatif as text: "4 GPUs, min-link nvlink, single NUMA node,
// binpack"; null leaves `out` unchanged.
bool readDemandText(json::JsonReader& r, std::string& out);
// A free-sets object ({"1": 8, "2": 4, "4": 2, "8": 1}) as "8/4/2/1"; null reads as "".
bool readFreeSets(json::JsonReader& r, std::string& out);

}  // namespace gte::report
