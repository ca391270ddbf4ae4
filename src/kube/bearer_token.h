#pragma once
// The bearer token sent with every API request. Projected service-account tokens rotate (the
// kubelet rewrites the file before expiry, by default hourly), so a token file is re-read whenever
// its modification time or size changes, and on demand after a 401.
#include <filesystem>
#include <mutex>
#include <string>

namespace gte::kube {

class BearerToken {
 public:
  // Either or neither may be set; the file wins when both are (kubectl's precedence).
  BearerToken(std::string staticToken, std::string tokenFile);

  // The token to send now; empty means send no Authorization header. Thread-safe.
  std::string current();
  // Forces a re-read on the next call (after the API server answered 401).
  void invalidate();

 private:
  void reloadIfChanged();

  const std::string staticToken_;
  const std::string tokenFile_;
  std::mutex mutex_;
  std::string fileToken_;
  std::filesystem::file_time_type lastWrite_{};
  std::uintmax_t lastSize_ = 0;
  bool loaded_ = false;
};

}  // namespace gte::kube
