#include "kube/bearer_token.h"

#include <system_error>

#include "kube/file_text.h"

namespace gte::kube {
namespace {

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
    text.pop_back();
  }
  return text;
}

}  // namespace

BearerToken::BearerToken(std::string staticToken, std::string tokenFile)
    : staticToken_(std::move(staticToken)), tokenFile_(std::move(tokenFile)) {}

std::string BearerToken::current() {
  if (tokenFile_.empty()) return staticToken_;
  std::lock_guard lock(mutex_);
  reloadIfChanged();
  return fileToken_.empty() ? staticToken_ : fileToken_;
}

void BearerToken::invalidate() {
  std::lock_guard lock(mutex_);
  loaded_ = false;
}

void BearerToken::reloadIfChanged() {
  std::error_code ec;
  const auto writeTime = std::filesystem::last_write_time(tokenFile_, ec);
  if (ec) return;  // keep the last good token while the file is being replaced
  const auto size = std::filesystem::file_size(tokenFile_, ec);
  if (ec) return;
  if (loaded_ && writeTime == lastWrite_ && size == lastSize_) return;
  auto text = readFileText(tokenFile_);
  if (!text) return;
  fileToken_ = trimmed(std::move(*text));
  lastWrite_ = writeTime;
  lastSize_ = size;
  loaded_ = true;
}

}  // namespace gte::kube
