#include "http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace gte::testing {
namespace {

int connectTo(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  timeval tv{10, 0};  // no test may hang on a silent server
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

HttpConnection::HttpConnection(std::uint16_t port) : fd_(connectTo(port)) {}

HttpConnection::~HttpConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool HttpConnection::sendRaw(std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

HttpResponse HttpConnection::readResponse() {
  HttpResponse r;
  auto fill = [this]() {
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  };
  std::size_t headerEnd;
  while ((headerEnd = buffer_.find("\r\n\r\n")) == std::string::npos) {
    if (!fill()) return r;
  }
  r.headers = buffer_.substr(0, headerEnd);
  buffer_.erase(0, headerEnd + 4);
  if (r.headers.size() > 12) r.status = std::atoi(r.headers.c_str() + 9);
  const std::string lh = lower(r.headers);
  if (const auto cl = lh.find("content-length:"); cl != std::string::npos) {
    const auto len = static_cast<std::size_t>(std::strtoull(lh.c_str() + cl + 15, nullptr, 10));
    while (buffer_.size() < len) {
      if (!fill()) break;
    }
    r.body = buffer_.substr(0, len);
    buffer_.erase(0, std::min(len, buffer_.size()));
  } else if (lh.find("transfer-encoding: chunked") != std::string::npos) {
    for (;;) {
      std::size_t eol;
      while ((eol = buffer_.find("\r\n")) == std::string::npos) {
        if (!fill()) return r;
      }
      const auto size = static_cast<std::size_t>(std::strtoull(buffer_.c_str(), nullptr, 16));
      while (buffer_.size() < eol + 2 + size + 2) {
        if (!fill()) return r;
      }
      r.body.append(buffer_, eol + 2, size);
      buffer_.erase(0, eol + 2 + size + 2);
      if (size == 0) break;
    }
  }
  return r;
}

HttpResponse HttpConnection::request(std::string_view method, std::string_view path,
                                     std::string_view body, std::string_view extraHeaders) {
  std::string req;
  req.append(method).append(" ").append(path).append(" HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  req.append("User-Agent: Go-http-client/1.1\r\nContent-Type: application/json\r\n");
  req.append("Content-Length: ").append(std::to_string(body.size())).append("\r\n");
  req.append(extraHeaders);
  req.append("\r\n");
  req.append(body);
  if (!sendRaw(req)) return {};
  return readResponse();
}

bool HttpConnection::waitClosed() {
  if (fd_ < 0) return true;
  buffer_.clear();
  char chunk[65536];
  for (;;) {
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;  // reset: closed; timeout: open
  }
}

bool HttpConnection::readable(int timeoutMs) {
  if (!buffer_.empty()) return true;
  pollfd p{fd_, POLLIN, 0};
  return ::poll(&p, 1, timeoutMs) > 0;
}

void HttpConnection::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

HttpResponse httpRequest(std::uint16_t port, std::string_view method, std::string_view path,
                         std::string_view body, std::string_view extraHeaders) {
  HttpConnection c(port);
  if (!c.connected()) return {};
  return c.request(method, path, body, extraHeaders);
}

}  // namespace gte::testing
