#pragma once
// The HTTP/1.1 transport (Boost.Beast over Asio) in front of the Router. Every resource a client
// can make the server hold has an explicit limit: header bytes, body bytes (checked against
// Content-Length before the body is read, and while reading chunked bodies), time to receive a
// request, idle keep-alive time, TLS handshake time and concurrent connections. Beast and Asio
// headers stay in http_server.cpp.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/result.h"

namespace gte::server {

class Router;

struct ServerOptions {
  std::string host = "0.0.0.0";
  std::uint16_t port = 8888;
  std::string tlsCertFile;  // both set: HTTPS (TLS 1.2+, ECDHE + AEAD suites), HTTP/1.1 only
  std::string tlsKeyFile;
  std::string tlsClientCaFile;  // set: every client must present a certificate signed by it
  std::size_t maxHeaderBytes = 16 * 1024;
  std::size_t maxBodyBytes = 64 * 1024 * 1024;
  std::size_t maxConnections = 512;
  // Time to receive one request (header and body) once its first byte arrived, and to send the
  // answer: a slow client cannot hold a connection longer than this per request.
  std::chrono::milliseconds requestTimeout{30'000};
  // Kept above kube-scheduler's 90 s idle-connection timeout so the server never closes a
  // keep-alive connection the client is about to reuse.
  std::chrono::milliseconds idleTimeout{120'000};
  std::chrono::milliseconds tlsHandshakeTimeout{10'000};
  std::size_t ioThreads = 2;        // accept, read, write, and the probes (/healthz, /metrics, ...)
  std::size_t decisionThreads = 2;  // filter, prioritize, preempt and bind run here only
};

class HttpServer {
 public:
  HttpServer(ServerOptions options, Router& router);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving; an error (port in use, bad certificate) is returned, not thrown.
  // Port 0 takes a free port the kernel picks (logged with the listening line; port()).
  Status start();
  // The port it listens on (the kernel's pick for port 0), once started.
  std::uint16_t port() const noexcept;
  // The drain period's start (SIGTERM): /readyz fails and every answer from now on carries
  // `Connection: close`, after which its connection closes, so clients move to another replica
  // one answered request at a time. New connections are still accepted and served the same way
  // (a Service keeps routing to a terminating pod until its endpoints update), and idle
  // keep-alive connections stay open: closing one could cross a request its client is sending,
  // which is then lost (kube-scheduler does not retry a POST). Returns at once.
  void drain();
  // Graceful stop (after the drain period, or at once): drain() if not called yet, then no new
  // connections are accepted, idle connections are closed, requests already being received or
  // decided are answered (with Connection: close). Returns true when every connection finished
  // within `deadline`; false means some were cut off and a decision may still be running on a
  // worker thread (the caller should exit at once).
  bool stop(std::chrono::milliseconds deadline);

  struct Impl;  // defined in http_server.cpp; public so its connection sessions can name it

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gte::server
