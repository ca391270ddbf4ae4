#pragma once
// The HTTP/1.1 transport (cpprestsdk http_listener) in front of the Router. cpprest headers stay in
// http_server.cpp (each TU that includes them costs ~10 s and 700 MB to compile).
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
  std::string tlsCertFile;  // both set: HTTPS (TLS 1.2+), HTTP/1.1 only
  std::string tlsKeyFile;
  std::size_t maxBodyBytes = 64 * 1024 * 1024;
  // Kept above kube-scheduler's 90 s idle-connection timeout so the server never closes a
  // keep-alive connection the client is about to reuse.
  std::chrono::seconds idleTimeout{120};
};

class HttpServer {
 public:
  HttpServer(ServerOptions options, const Router& router);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and starts serving; an error (port in use, bad certificate) is returned, not thrown.
  Status start();
  // Stops accepting and closes; gives up waiting after `deadline`.
  void stop(std::chrono::milliseconds deadline);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Sizes cpprest's shared thread pool; must run first thing in main(), before any cpprest use
// (its default of 40 threads costs throughput and memory on small machines).
void initializeThreadPool(std::size_t threads);

}  // namespace gte::server
