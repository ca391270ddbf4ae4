#pragma once
// A minimal blocking HTTP/1.1 client over a raw socket, for tests that need full control of what
// goes on the wire (missing Content-Length, chunked bodies, oversized headers, keep-alive).
#include <cstdint>
#include <string>
#include <string_view>

namespace gte::testing {

struct HttpResponse {
  int status = 0;  // 0: no answer (connection refused or closed)
  std::string headers;
  std::string body;
};

class HttpConnection {
 public:
  explicit HttpConnection(std::uint16_t port);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  // Sends raw bytes.
  bool sendRaw(std::string_view bytes);
  // Reads one response (Content-Length or chunked body).
  HttpResponse readResponse();
  HttpResponse request(std::string_view method, std::string_view path, std::string_view body = {},
                       std::string_view extraHeaders = {});
  // True once the server has closed the connection (anything it still sends is dropped); false
  // if it is still open when the socket timeout (10 s) passes.
  bool waitClosed();
  // True when bytes or a close are waiting to be read, within `timeoutMs`.
  bool readable(int timeoutMs = 0);
  void close();

 private:
  int fd_ = -1;
  std::string buffer_;
};

// One request on a fresh connection.
HttpResponse httpRequest(std::uint16_t port, std::string_view method, std::string_view path,
                         std::string_view body = {}, std::string_view extraHeaders = {});

}  // namespace gte::testing
