#include "sim/weighted_values.h"

#include <charconv>
#include <string>

#include "sim/comma_items.h"

namespace gte::sim {

Result<WeightedValues> parseWeightedValues(std::string_view text, int low, int high,
                                           std::string_view what) {
  WeightedValues values;
  int total = 0;
  for (const std::string_view item : commaItems(text)) {
    const std::size_t colon = item.find(':');
    int value = low - 1;
    int weight = -1;
    const bool parsed =
        colon != std::string_view::npos &&
        std::from_chars(item.data(), item.data() + colon, value).ptr == item.data() + colon &&
        std::from_chars(item.data() + colon + 1, item.data() + item.size(), weight).ptr ==
            item.data() + item.size();
    if (!parsed || value < low || value > high || weight < 0) {
      return invalidArgument("mix item '" + std::string(item) + "': want <" + std::string(what) +
                             " " + std::to_string(low) + ".." + std::to_string(high) +
                             ">:<weight>, e.g. " + std::to_string(high) + ":50");
    }
    values.emplace_back(value, weight);
    total += weight;
  }
  if (total == 0) {
    return invalidArgument("mix '" + std::string(text) + "' has no positive weight");
  }
  return values;
}

double weightedMean(const WeightedValues& values) {
  double sum = 0;
  double weights = 0;
  for (const auto& [value, weight] : values) {
    sum += static_cast<double>(value) * weight;
    weights += weight;
  }
  return weights == 0 ? 0 : sum / weights;
}

}  // namespace gte::sim
