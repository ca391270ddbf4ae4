#include "dra/device_text.h"

namespace gte::dra {

TextRef TextInterner::intern(std::string_view value) {
  const auto [it, added] = known_.try_emplace(std::string(value));
  if (added) {
    it->second = TextRef{static_cast<std::uint32_t>(buffer_.text_.size()),
                         static_cast<std::uint32_t>(value.size())};
    buffer_.text_.append(value);
  }
  return it->second;
}

}  // namespace gte::dra
