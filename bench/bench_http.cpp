// Filter and prioritize over HTTP on loopback, as kube-scheduler calls them: the extender binary
// (names mode from a --cluster-file of N nodes; full-Node mode at 1,000 nodes) and a bare Beast
// server with no logic (http_floor_server) side by side, over 1 and 8 keep-alive connections.
// Prints p50/p90/p99 latency and requests per second; figures in docs/performance.md.
//
//   build/bin/bench_http [seconds-per-run] [nodes]
// With `nodes` (100, 1000 or 5000) only that cluster size runs in names mode. A second floor,
// http_floor_cpprest (cpprestsdk's listener parsing each body with nlohmann, which is what the
// extender's listener was before Beast), runs beside the Beast one; the last lines give the
// extender's p99 against both.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

std::string selfDir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  const std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

std::uint16_t freePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// One keep-alive connection sending prepared requests and reading Content-Length answers.
class Connection {
 public:
  explicit Connection(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      ::close(fd_);
      fd_ = -1;
      return;
    }
    int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  ~Connection() {
    if (fd_ >= 0) ::close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The status of the answer, 0 on a transport error.
  int exchange(const std::string& request) {
    for (std::size_t sent = 0; sent < request.size();) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return 0;
      sent += static_cast<std::size_t>(n);
    }
    std::size_t headerEnd;
    while ((headerEnd = buffer_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return 0;
    }
    const int status = std::atoi(buffer_.c_str() + 9);
    std::size_t length = 0;
    for (const char* key : {"Content-Length: ", "content-length: "}) {
      const auto at = buffer_.find(key);
      if (at != std::string::npos && at < headerEnd) {
        length = std::strtoull(buffer_.c_str() + at + std::strlen(key), nullptr, 10);
      }
    }
    while (buffer_.size() < headerEnd + 4 + length) {
      if (!fill()) return 0;
    }
    buffer_.erase(0, headerEnd + 4 + length);
    return status;
  }

  bool connected() const { return fd_ >= 0; }

 private:
  bool fill() {
    char chunk[65536];
    const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buffer_.append(chunk, static_cast<std::size_t>(n));
    return true;
  }

  int fd_;
  std::string buffer_;
};

std::string postRequest(const std::string& path, const std::string& body) {
  return "POST " + path +
         " HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: Go-http-client/1.1\r\n"
         "Content-Type: application/json\r\nAccept-Encoding: gzip\r\nContent-Length: " +
         std::to_string(body.size()) + "\r\n\r\n" + body;
}

struct Process {
  pid_t pid = -1;
  std::uint16_t port = 0;
};

Process start(std::vector<std::string> args, std::uint16_t port) {
  std::fflush(nullptr);  // or the child flushes the parent's pending output a second time
  Process p{::fork(), port};
  if (p.pid == 0) {
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    // A shell that starts the bench in the background ignores SIGINT, and an ignored disposition
    // survives exec: the server would never see the stop() below.
    std::signal(SIGINT, SIG_DFL);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const std::string probe = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  for (int i = 0; i < 600; ++i) {
    Connection c(port);
    if (c.connected() && c.exchange(probe) == 200) return p;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::fprintf(stderr, "bench_http: %s did not start\n", args[0].c_str());
  std::exit(1);
}

// SIGINT: stops without the drain period that SIGTERM starts.
void stop(Process& p) {
  ::kill(p.pid, SIGINT);
  ::waitpid(p.pid, nullptr, 0);
}

struct Machine {
  const char* model;
  const char* fabric;
  const char* nvl;
  const char* pci;
};

// Real topologies (labels-v1 encodings of the captures in tests/data/topologies).
const Machine kMachines[] = {
    {"Tesla-V100-SXM2-16GB", "mesh", "1122000210200200100001112212",
     "PHHSSSSHHSSSSPSSSSSSSSPHHHHP"},
    {"NVIDIA-H100-80GB-HBM3", "nvsw4", "iiiiiiiiiiiiiiiiiiiiiiiiiiii",
     "NNNSSSSNNSSSSNSSSSSSSSNNNNNN"},
    {"NVIDIA-RTX-A6000", "none", "0000000000000000000000000000", "PHSSSSSHSSSSSSSSSSSSPHHHHHHP"},
};

std::string nodeName(int i) {
  return "gpu-node-" + std::to_string(i);
}

// A Node as kube-scheduler sends it in full-Node mode (~2.9 KB with status and images).
std::string nodeJson(int i, std::mt19937& rng) {
  const Machine& m = kMachines[i % 3];
  std::string used(8, '0');
  const int busy = static_cast<int>(rng() % 8);
  for (int b = 0; b < busy; ++b)
    used[rng() % 8] = '1';
  std::string images;
  for (int k = 0; k < 12; ++k) {
    if (k > 0) images += ',';
    images += R"({"names":["registry.example/ml/image-)" + std::to_string(k) +
              R"(@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"],)"
              R"("sizeBytes":123456789})";
  }
  return R"({"kind":"Node","metadata":{"name":")" + nodeName(i) +
         R"(","labels":{"gputopo.dev/v":"1","gputopo.dev/n":"8","gputopo.dev/model":")" + m.model +
         R"(","gputopo.dev/fabric":")" + m.fabric + R"(","gputopo.dev/nvl":")" + m.nvl +
         R"(","gputopo.dev/pci":")" + m.pci +
         R"(","gputopo.dev/numa":"00001111","gputopo.dev/health":"11111111","gputopo.dev/used":")" +
         used +
         R"(","gputopo.dev/mig":"nnnnnnnn","gputopo.dev/gen":"1764670000"}},)"
         R"("status":{"capacity":{"cpu":"96","nvidia.com/gpu":"8","pods":"110"},)"
         R"("allocatable":{"cpu":"95500m","nvidia.com/gpu":"8","pods":"110"},)"
         R"("conditions":[{"type":"Ready","status":"True","reason":"KubeletReady"}],)"
         R"("addresses":[{"type":"InternalIP","address":"10.0.0.11"}],"images":[)" +
         images + "]}}";
}

const std::string kPod =
    R"({"metadata":{"name":"train-0","namespace":"ml","uid":"p1"},"spec":{"containers":[{"name":"m",)"
    R"("resources":{"limits":{"nvidia.com/gpu":"2"},"requests":{"nvidia.com/gpu":"2"}}}]}})";

std::string namesBody(int nodes) {
  std::string body = R"({"Pod":)" + kPod + R"(,"Nodes":null,"NodeNames":[)";
  for (int i = 0; i < nodes; ++i) {
    if (i > 0) body += ',';
    body += '"' + nodeName(i) + '"';
  }
  return body + "]}";
}

std::string fullNodeBody(int nodes) {
  std::mt19937 rng(7);
  std::string body = R"({"Pod":)" + kPod + R"(,"Nodes":{"metadata":{},"items":[)";
  for (int i = 0; i < nodes; ++i) {
    if (i > 0) body += ',';
    body += nodeJson(i, rng);
  }
  return body + R"(]},"NodeNames":null})";
}

std::string writeClusterFile(int nodes) {
  const std::string path = "/tmp/bench-http-cluster-" + std::to_string(nodes) + ".json";
  std::ofstream out(path);
  out << R"({"apiVersion":"v1","kind":"List","items":[)";
  std::mt19937 rng(7);
  for (int i = 0; i < nodes; ++i)
    out << (i ? "," : "") << nodeJson(i, rng);
  out << "]}";
  return path;
}

struct Result {
  double p50 = 0, p90 = 0, p99 = 0, rps = 0;
  std::size_t errors = 0;
};

Result load(std::uint16_t port, const std::string& request, int connections, double seconds) {
  std::vector<std::vector<double>> perThread(static_cast<std::size_t>(connections));
  std::atomic<std::size_t> errors{0};
  const auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  const auto began = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < connections; ++t) {
    threads.emplace_back([&, t] {
      Connection c(port);
      for (int w = 0; w < 10; ++w)
        c.exchange(request);  // warm-up: caches, allocator, TCP windows
      auto& out = perThread[static_cast<std::size_t>(t)];
      while (Clock::now() < deadline) {
        const auto t0 = Clock::now();
        if (c.exchange(request) != 200) ++errors;
        out.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
    });
  }
  for (auto& th : threads)
    th.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - began).count();
  std::vector<double> all;
  for (auto& v : perThread)
    all.insert(all.end(), v.begin(), v.end());
  std::sort(all.begin(), all.end());
  Result r;
  if (all.empty()) return r;
  auto at = [&](double q) { return all[static_cast<std::size_t>(q * double(all.size() - 1))]; };
  r.p50 = at(0.50);
  r.p90 = at(0.90);
  r.p99 = at(0.99);
  r.rps = double(all.size()) / elapsed;
  r.errors = errors;
  return r;
}

void row(const char* server, const char* mode, int nodes, const char* verb, int connections,
         const Result& r) {
  std::printf("| %-8s | %-5s | %5d | %-10s | %d | %7.3f | %7.3f | %7.3f | %8.0f | %zu |\n", server,
              mode, nodes, verb, connections, r.p50, r.p90, r.p99, r.rps, r.errors);
  std::fflush(stdout);
}

// p99 at one connection per (server, nodes, verb), for the ratios printed at the end.
struct OneConnection {
  std::string server;
  int nodes;
  std::string verb;
  double p99;
};

void floorRows(const char* label, const std::string& binary, int nodes, const std::string& body,
               double seconds, std::vector<OneConnection>& seen) {
  const char* verbs[] = {"filter", "prioritize"};
  const auto port = freePort();
  Process floor = start({binary, std::to_string(port)}, port);
  for (const char* verb : verbs) {
    const std::string request = postRequest(std::string("/scheduler/") + verb, body);
    for (const int c : {1, 8}) {
      const Result r = load(port, request, c, seconds);
      row(label, "names", nodes, verb, c, r);
      if (c == 1) seen.push_back({label, nodes, verb, r.p99});
    }
  }
  stop(floor);
}

double p99Of(const std::vector<OneConnection>& seen, const std::string& server, int nodes,
             const std::string& verb) {
  for (const auto& s : seen) {
    if (s.server == server && s.nodes == nodes && s.verb == verb) return s.p99;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const int onlyNodes = argc > 2 ? std::atoi(argv[2]) : 0;  // 0: 100, 1,000 and 5,000
  const std::string dir = selfDir();
  std::printf(
      "| server | mode | nodes | verb | conns | p50 ms | p90 ms | p99 ms | req/s | errors |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  const char* verbs[] = {"filter", "prioritize"};
  std::vector<OneConnection> seen;
  std::vector<int> sizes;
  for (const int nodes : {100, 1000, 5000}) {
    if (onlyNodes == 0 || onlyNodes == nodes) sizes.push_back(nodes);
  }

  for (const int nodes : sizes) {
    const std::string cluster = writeClusterFile(nodes);
    const std::string body = namesBody(nodes);
    const auto port = freePort();
    Process ext = start(
        {dir + "/gpu-topology-extender", "serve", "--listen", "127.0.0.1:" + std::to_string(port),
         "--cluster-file", cluster, "--threads", "2", "--log-level", "warn"},
        port);
    for (const char* verb : verbs) {
      const std::string request = postRequest(std::string("/scheduler/") + verb, body);
      for (const int c : {1, 8}) {
        const Result r = load(port, request, c, seconds);
        row("extender", "names", nodes, verb, c, r);
        if (c == 1) seen.push_back({"extender", nodes, verb, r.p99});
      }
    }
    stop(ext);
    std::remove(cluster.c_str());
    floorRows("floor", dir + "/http_floor_server", nodes, body, seconds, seen);
    floorRows("cpprest", dir + "/http_floor_cpprest", nodes, body, seconds, seen);
  }

  // Full-Node mode (nodeCacheCapable: false): 1,000 node objects in every request.
  const std::string full = fullNodeBody(1000);
  const auto port = freePort();
  Process ext =
      start({dir + "/gpu-topology-extender", "serve", "--listen",
             "127.0.0.1:" + std::to_string(port), "--threads", "2", "--log-level", "warn"},
            port);
  for (const char* verb : verbs) {
    row("extender", "full", 1000, verb, 1,
        load(port, postRequest(std::string("/scheduler/") + verb, full), 1, seconds));
  }
  stop(ext);
  std::printf("(full-Node body: %zu bytes; names body at 5,000 nodes: %zu bytes)\n", full.size(),
              namesBody(5000).size());
  std::printf("\np99 at one connection, extender against both floors of this run:\n");
  for (const int nodes : sizes) {
    for (const char* verb : verbs) {
      const double ext99 = p99Of(seen, "extender", nodes, verb);
      const double beast99 = p99Of(seen, "floor", nodes, verb);
      const double cpprest99 = p99Of(seen, "cpprest", nodes, verb);
      std::printf(
          "%5d nodes %-10s extender %7.3f ms  floor %7.3f ms  cpprest floor %7.3f ms  "
          "extender/cpprest %.2f\n",
          nodes, verb, ext99, beast99, cpprest99, cpprest99 > 0 ? ext99 / cpprest99 : 0.0);
    }
  }
  return 0;
}
