#include "server/http_server.h"

#include <openssl/ssl.h>
#include <poll.h>
#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "log/logger.h"
#include "server/router.h"

namespace gte::server {
namespace {

namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = boost::asio::ip::tcp;
using error_code = boost::system::error_code;

using PlainStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Bytes asked of the socket per read; the read buffer holds at most the header limit plus this,
// so pipelined requests and a body's first bytes never make it grow further.
constexpr std::size_t kReadChunk = 64 * 1024;
// After refusing a request whose body is still arriving, the server reads and discards this much
// before closing: closing with unread data sends a reset that can destroy the answer in flight.
constexpr std::size_t kLingerBytes = 4 * 1024 * 1024;
constexpr auto kLingerTime = std::chrono::seconds(2);
// At the open-file limit accept() fails at once; retrying immediately would spin a core.
constexpr auto kAcceptBackoff = std::chrono::milliseconds(100);

// TLS 1.2: forward-secret key exchange and AEAD ciphers only. TLS 1.3 suites all are.
constexpr const char* kTls12Ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

std::string_view reasonPhrase(int status) {
  const auto reason = http::obsolete_reason(static_cast<http::status>(status));
  return {reason.data(), reason.size()};
}

// The whole answer (status line, headers, body) in one buffer: one write, one syscall. A HEAD
// answer has no body and no Content-Length (the router dropped the body it would describe).
std::string serialize(const Reply& reply, bool keepAlive, bool http10, bool head) {
  std::string out;
  out.reserve(160 + reply.body.size());
  out.append("HTTP/1.1 ").append(std::to_string(reply.status)).append(" ");
  out.append(reasonPhrase(reply.status)).append("\r\nContent-Type: ").append(reply.contentType);
  for (const auto& [name, value] : reply.headers)
    out.append("\r\n").append(name).append(": ").append(value);
  if (!head) out.append("\r\nContent-Length: ").append(std::to_string(reply.body.size()));
  if (!keepAlive) {
    out.append("\r\nConnection: close");
  } else if (http10) {
    out.append("\r\nConnection: keep-alive");
  }
  out.append("\r\n\r\n").append(reply.body);
  return out;
}

// Content-Length is a single non-negative integer: a second header or a list ("5, 5"), which
// Beast accepts when the values agree, is refused as a request-smuggling vector.
bool singleContentLength(const http::fields& fields) {
  const auto range = fields.equal_range(http::field::content_length);
  const auto count = std::distance(range.first, range.second);
  return count <= 1 && (count == 0 || range.first->value().find(',') == beast::string_view::npos);
}

bool isResourceExhaustion(const error_code& ec) {
  return ec == net::error::no_descriptors || ec == net::error::no_buffer_space ||
         ec == net::error::no_memory || ec == boost::system::errc::too_many_files_open_in_system;
}

}  // namespace

// What the server needs to reach a live connection from another thread (graceful shutdown).
class Connection {
 public:
  virtual ~Connection() = default;
  // Runs on the connection's strand once the server stops: closes it now if idle, else after the
  // current answer.
  virtual void closeWhenIdle() = 0;
  virtual net::any_io_executor executor() = 0;
};

struct HttpServer::Impl {
  ServerOptions options;
  Router& router;

  std::mutex mutex;  // guards connections
  std::condition_variable connectionsChanged;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> connections;
  // Drain period (drain()): every answer closes its connection; idle ones stay open.
  std::atomic<bool> draining{false};
  // Stopping (stop()): no new connections, idle ones are closed.
  std::atomic<bool> closing{false};

  std::optional<ssl::context> tls;
  // Declared after what connections reference and before what runs them: destroyed in reverse,
  // the pools stop first, then the io_context destroys any handler (and connection) still queued.
  net::io_context ioc;
  std::optional<net::thread_pool> decisions;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::steady_timer> acceptRetry;
  std::vector<std::thread> ioThreads;
  bool started = false;
  bool stopped = false;

  Impl(ServerOptions o, Router& r) : options(std::move(o)), router(r) {}

  Status loadTls();
  Status listen();
  void accept();
  void onAccept(const error_code& ec, tcp::socket socket);
  bool admit(const std::shared_ptr<Connection>& connection);
  void forget(Connection* connection);
  bool waitForConnections(std::chrono::steady_clock::time_point deadline);
};

namespace {

template <class Stream>
class Session : public Connection, public std::enable_shared_from_this<Session<Stream>> {
 public:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  template <class... Args>
  Session(HttpServer::Impl& server, Args&&... streamArgs)
      : server_(server),
        stream_(std::forward<Args>(streamArgs)...),
        buffer_(server.options.maxHeaderBytes + kReadChunk) {}

  ~Session() override { server_.forget(this); }

  net::any_io_executor executor() override { return stream_.get_executor(); }

  void closeWhenIdle() override {
    // A connection whose next request has begun to arrive (bytes in the socket, not yet read) is
    // in flight, not idle: it gets its answer.
    if (waiting_ && !requestArriving()) lowest().cancel();  // the read ends: operation_aborted
  }

  void run() {
    if constexpr (kTls) {
      lowest().expires_after(server_.options.tlsHandshakeTimeout);
      stream_.async_handshake(ssl::stream_base::server,
                              [self = this->shared_from_this()](const error_code& ec) {
                                if (ec) {
                                  log::debug("TLS handshake failed", {{"error", ec.message()}});
                                  return self->close();
                                }
                                self->firstRequest_ = true;
                                self->awaitRequest();
                              });
    } else {
      firstRequest_ = true;
      awaitRequest();
    }
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }
  const ServerOptions& options() const { return server_.options; }
  Router& router() { return server_.router; }

  // Bytes of a next request are here: buffered, or in the socket and not yet read.
  bool requestArriving() {
    error_code ec;
    return buffer_.size() > 0 || (lowest().socket().available(ec) > 0 && !ec);
  }

  // Waits for the first byte of the next request under the idle timeout (a fresh connection gets
  // the request timeout: one that never speaks is not an idle keep-alive client).
  void awaitRequest() {
    // Set before closeWhenIdle() is posted: a wait that begins after it is never started.
    if (server_.closing && !requestArriving()) return close();
    if (buffer_.size() > 0) return readHeader();  // a pipelined request is already here
    waiting_ = true;
    lowest().expires_after(firstRequest_ ? options().requestTimeout : options().idleTimeout);
    firstRequest_ = false;
    stream_.async_read_some(
        buffer_.prepare(std::min(kReadChunk, buffer_.max_size() - buffer_.size())),
        [self = this->shared_from_this()](const error_code& ec, std::size_t n) {
          self->waiting_ = false;
          if (ec) return self->close();  // idle timeout, client closed, or drained
          self->buffer_.commit(n);
          self->readHeader();
        });
  }

  void readHeader() {
    method_.clear();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(options().maxHeaderBytes));
    parser_->body_limit(options().maxBodyBytes);  // also checks Content-Length before the body
    lowest().expires_after(options().requestTimeout);
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = this->shared_from_this()](const error_code& ec, std::size_t) {
                              self->onHeader(ec);
                            });
  }

  void onHeader(const error_code& ec) {
    if (ec) return refuse(ec);
    const auto& req = parser_->get();
    if (!singleContentLength(req)) {
      return fail(router().badRequest(target(), "more than one Content-Length"));
    }
    if (req.count(http::field::transfer_encoding) > 0 && !parser_->chunked()) {
      return fail(router().badRequest(target(), "unsupported Transfer-Encoding"));
    }
    if (parser_->is_done()) return onRequest();
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      continue_ = "HTTP/1.1 100 Continue\r\n\r\n";
      net::async_write(stream_, net::buffer(continue_),
                       [self = this->shared_from_this()](const error_code& e, std::size_t) {
                         if (e) return self->close();
                         self->readBody();
                       });
      return;
    }
    readBody();
  }

  void readBody() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = this->shared_from_this()](const error_code& ec, std::size_t) {
                       if (ec) return self->refuse(ec);
                       self->onRequest();
                     });
  }

  std::string target() const {
    if (!parser_) return {};
    const auto t = parser_->get().target();
    return std::string(t.data(), std::min<std::size_t>(t.size(), 256));
  }

  // A request that cannot be read to the end: answer what went wrong where HTTP allows, close.
  void refuse(const error_code& ec) {
    if (ec == http::error::body_limit) {
      return fail(router().tooLarge(target(), options().maxBodyBytes));
    }
    if (ec == http::error::header_limit || ec == http::error::buffer_overflow) {
      return fail(router().headerTooLarge(options().maxHeaderBytes));
    }
    if (ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      return fail(router().badRequest(target(), "malformed HTTP request: " + ec.message()));
    }
    if (ec == beast::error::timeout) router().countRejected("request_timeout");
    close();  // timeout, reset, or the client closed mid-request: nobody to answer
  }

  void fail(Reply reply) {
    keepAlive_ = false;
    lingerAfterWrite_ = true;
    write(std::move(reply), false);
  }

  void onRequest() {
    lowest().expires_never();  // deciding is bounded by the work limits, not by the socket
    auto& req = parser_->get();
    keepAlive_ = req.keep_alive();
    http10_ = req.version() == 10;
    const beast::string_view m = req.method_string();
    const beast::string_view t = req.target();
    method_.assign(m.data(), m.size());
    path_.assign(t.data(), t.size());
    auto done = [self = this->shared_from_this()](Reply reply) {
      net::dispatch(self->stream_.get_executor(), [self, reply = std::move(reply)]() mutable {
        self->stopWatchingCaller();
        self->write(std::move(reply), self->keepAlive_);
      });
    };
    if (!router().acceptsBody(method_, path_)) {
      // Probes, metrics, version, 404 and 405 are answered here on the I/O thread, so they
      // never queue behind decisions.
      return router().dispatch(method_, path_, {}, std::move(done));
    }
    BindCaller caller;
    if (router().isBind(method_, path_)) caller.gone = watchCaller();
    net::post(*server_.decisions, [self = this->shared_from_this(), done = std::move(done),
                                   caller = std::move(caller)]() mutable {
      self->router().dispatch(self->method_, self->path_, self->parser_->get().body(),
                              std::move(done), std::move(caller));
    });
  }

  // While a request is being decided nothing reads the socket; a wait for readability tells when
  // the client closes its end (kube-scheduler past its httpTimeout), so that bind can drop work
  // nobody waits for. The flag only ever turns on.
  std::shared_ptr<const std::atomic<bool>> watchCaller() {
    callerGone_ = std::make_shared<std::atomic<bool>>(false);
    watchingCaller_ = true;
    callerWakeups_ = 0;
    awaitCallerEvent();
    return callerGone_;
  }

  void awaitCallerEvent() {
    lowest().socket().async_wait(
        tcp::socket::wait_read,
        [self = this->shared_from_this()](const error_code& ec) { self->onCallerEvent(ec); });
  }

  void onCallerEvent(const error_code& ec) {
    if (!watchingCaller_ || ec == net::error::operation_aborted) return;
    if (ec || peerClosed()) {
      callerGone_->store(true, std::memory_order_relaxed);
      watchingCaller_ = false;
      log::debug("the caller closed its connection before its answer", {{"path", path_}});
      return;
    }
    // Bytes without an end of stream: a pipelined request, or a TLS record ahead of the close.
    // Wait for the next change; a client that keeps sending is not watched for long.
    constexpr int kMaxWakeups = 8;
    if (++callerWakeups_ < kMaxWakeups) {
      awaitCallerEvent();
    } else {
      watchingCaller_ = false;
    }
  }

  // The peer shut down its sending side (or the socket failed), whatever unread bytes remain.
  bool peerClosed() {
    pollfd probe{};
    probe.fd = lowest().socket().native_handle();
    probe.events = POLLRDHUP;
    return ::poll(&probe, 1, 0) > 0 && (probe.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
  }

  void stopWatchingCaller() {
    if (!watchingCaller_) return;
    watchingCaller_ = false;
    error_code ignored;
    lowest().socket().cancel(ignored);  // only the readability wait is pending while deciding
  }

  void write(Reply reply, bool keepAlive) {
    keepAlive_ = keepAlive && !server_.draining && !reply.closeConnection;
    out_ = serialize(reply, keepAlive_, http10_, method_ == "HEAD");
    lowest().expires_after(options().requestTimeout);
    net::async_write(stream_, net::buffer(out_),
                     [self = this->shared_from_this()](const error_code& ec, std::size_t) {
                       self->out_.clear();
                       self->out_.shrink_to_fit();
                       if (ec || !self->keepAlive_) {
                         return self->lingerAfterWrite_ ? self->linger() : self->close();
                       }
                       self->parser_.reset();
                       self->awaitRequest();
                     });
  }

  // Stops sending, then reads and drops what the client is still sending (bounded in bytes and
  // time) so the refusal just written reaches it before the connection is torn down.
  void linger() {
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    lowest().expires_after(kLingerTime);
    lingerRead();
  }

  void lingerRead() {
    lowest().async_read_some(net::buffer(discard_), [self = this->shared_from_this()](
                                                        const error_code& ec, std::size_t n) {
      self->lingered_ += n;
      if (ec || self->lingered_ >= kLingerBytes) return self->close();
      self->lingerRead();
    });
  }

  void close() {
    error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ignored);
    lowest().close();
  }

  HttpServer::Impl& server_;
  Stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::string method_;
  std::string path_;
  std::string out_;
  std::string continue_;
  std::array<char, 8192> discard_{};
  std::size_t lingered_ = 0;
  bool keepAlive_ = true;
  bool http10_ = false;
  bool waiting_ = false;  // for the first byte of a request: nothing in flight
  bool firstRequest_ = false;
  bool lingerAfterWrite_ = false;
  std::shared_ptr<std::atomic<bool>> callerGone_;
  bool watchingCaller_ = false;
  int callerWakeups_ = 0;
};

}  // namespace

Status HttpServer::Impl::loadTls() {
  const auto& o = options;
  try {
    tls.emplace(ssl::context::tls_server);
    tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                     ssl::context::single_dh_use | ssl::context::no_compression);
    SSL_CTX* native = tls->native_handle();
    SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    SSL_CTX_set_options(native, SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_RENEGOTIATION);
    if (SSL_CTX_set_cipher_list(native, kTls12Ciphers) != 1) {
      return Error{ErrorCode::kInternal, "TLS: no usable cipher suite"};
    }
    tls->use_certificate_chain_file(o.tlsCertFile);
    tls->use_private_key_file(o.tlsKeyFile, ssl::context::pem);
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInvalidArgument, "cannot load --tls-cert " + o.tlsCertFile +
                                                  " / --tls-key " + o.tlsKeyFile + ": " + e.what()};
  }
  if (o.tlsClientCaFile.empty()) return Ok{};
  try {
    tls->load_verify_file(o.tlsClientCaFile);
    tls->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
    // Tells clients which CA to pick a certificate for.
    if (STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(o.tlsClientCaFile.c_str())) {
      SSL_CTX_set_client_CA_list(tls->native_handle(), names);
    }
  } catch (const std::exception& e) {
    return Error{ErrorCode::kInvalidArgument,
                 "cannot load --tls-client-ca " + o.tlsClientCaFile + ": " + e.what()};
  }
  return Ok{};
}

Status HttpServer::Impl::listen() {
  error_code ec;
  const auto address = net::ip::make_address(options.host, ec);
  const std::string where = options.host + ":" + std::to_string(options.port);
  if (ec)
    return Error{ErrorCode::kInvalidArgument, "cannot listen on " + where + ": " + ec.message()};
  acceptor.emplace(net::make_strand(ioc));
  const tcp::endpoint endpoint(address, options.port);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    acceptor.reset();
    return Error{ErrorCode::kUnavailable, "cannot listen on " + where + ": " + ec.message()};
  }
  // Port 0 asks the kernel for a free port: the one it gave is what is logged and reported.
  if (options.port == 0) options.port = acceptor->local_endpoint(ec).port();
  acceptRetry.emplace(acceptor->get_executor());
  return Ok{};
}

void HttpServer::Impl::accept() {
  acceptor->async_accept(net::make_strand(ioc), [this](const error_code& ec, tcp::socket socket) {
    onAccept(ec, std::move(socket));
  });
}

void HttpServer::Impl::onAccept(const error_code& ec, tcp::socket socket) {
  if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
  if (ec) {
    if (isResourceExhaustion(ec)) {
      log::warn("accept failed; retrying shortly", {{"error", ec.message()}});
      acceptRetry->expires_after(kAcceptBackoff);
      acceptRetry->async_wait([this](const error_code& e) {
        if (!e && acceptor->is_open()) accept();
      });
      return;
    }
    return accept();
  }
  error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  // A connection over the cap is closed when its session is dropped here, unanswered.
  // run() starts on the session's own strand, where a concurrent closeWhenIdle() is also posted.
  if (tls) {
    auto s = std::make_shared<Session<TlsStream>>(*this, std::move(socket), *tls);
    if (admit(s)) net::dispatch(s->executor(), [s] { s->run(); });
  } else {
    auto s = std::make_shared<Session<PlainStream>>(*this, std::move(socket));
    if (admit(s)) net::dispatch(s->executor(), [s] { s->run(); });
  }
  accept();
}

// Registers a new connection unless the cap is reached (then it is closed when dropped).
bool HttpServer::Impl::admit(const std::shared_ptr<Connection>& connection) {
  {
    std::lock_guard lock(mutex);
    if (connections.size() < options.maxConnections && !closing) {
      connections.emplace(connection.get(), connection);
      return true;
    }
  }
  router.countRejected("connection_limit");
  log::debug("connection refused: too many connections",
             {{"max_connections", std::to_string(options.maxConnections)}});
  return false;
}

void HttpServer::Impl::forget(Connection* connection) {
  std::lock_guard lock(mutex);
  if (connections.erase(connection) > 0) connectionsChanged.notify_all();
}

bool HttpServer::Impl::waitForConnections(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex);
  return connectionsChanged.wait_until(lock, deadline, [this] { return connections.empty(); });
}

HttpServer::HttpServer(ServerOptions options, Router& router)
    : impl_(std::make_unique<Impl>(std::move(options), router)) {}

HttpServer::~HttpServer() {
  stop(std::chrono::seconds(5));
}

Status HttpServer::start() {
  auto& impl = *impl_;
  const auto& o = impl.options;
  if (!o.tlsCertFile.empty()) {
    if (auto s = impl.loadTls(); !s) return s;
  }
  if (auto s = impl.listen(); !s) return s;
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY &&
      files.rlim_cur < o.maxConnections + 64) {
    log::warn("the open-file limit is below --max-connections; accept pauses at the limit",
              {{"nofile", std::to_string(files.rlim_cur)},
               {"max_connections", std::to_string(o.maxConnections)}});
  }
  impl.decisions.emplace(std::max<std::size_t>(1, o.decisionThreads));
  impl.work.emplace(impl.ioc.get_executor());
  impl.accept();
  const std::size_t threads = std::max<std::size_t>(1, o.ioThreads);
  for (std::size_t i = 0; i < threads; ++i)
    impl.ioThreads.emplace_back([&impl] { impl.ioc.run(); });
  impl.started = true;
  const std::string url = std::string(impl.tls ? "https://" : "http://") +
                          (o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host) +
                          ":" + std::to_string(o.port);
  log::info("listening", {{"url", url},
                          {"port", std::to_string(o.port)},
                          {"max_body_bytes", std::to_string(o.maxBodyBytes)},
                          {"max_connections", std::to_string(o.maxConnections)},
                          {"client_certificates", o.tlsClientCaFile.empty() ? "off" : "required"}});
  return Ok{};
}

std::uint16_t HttpServer::port() const noexcept {
  return impl_->options.port;
}

void HttpServer::drain() {
  auto& impl = *impl_;
  if (!impl.started || impl.draining.exchange(true)) return;
  impl.router.setDraining(true);
}

bool HttpServer::stop(std::chrono::milliseconds deadline) {
  auto& impl = *impl_;
  if (!impl.started || impl.stopped) return true;
  impl.stopped = true;
  const auto until = std::chrono::steady_clock::now() + deadline;
  drain();
  impl.closing = true;
  net::post(impl.acceptor->get_executor(), [&impl] {
    error_code ignored;
    impl.acceptRetry->cancel();
    impl.acceptor->close(ignored);
  });
  std::vector<std::shared_ptr<Connection>> live;
  {
    std::lock_guard lock(impl.mutex);
    for (auto& [raw, weak] : impl.connections) {
      if (auto c = weak.lock()) live.push_back(std::move(c));
    }
  }
  for (auto& c : live)
    net::post(c->executor(), [c] { c->closeWhenIdle(); });
  live.clear();
  const bool drained = impl.waitForConnections(until);
  if (!drained) log::warn("shutdown deadline passed with requests unanswered; closing them");
  impl.work.reset();
  impl.ioc.stop();
  for (auto& t : impl.ioThreads)
    t.join();
  impl.ioThreads.clear();
  if (drained) {
    impl.decisions->join();
  } else {
    impl.decisions->stop();
  }
  return drained;
}

}  // namespace gte::server
