#include "extender_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

#include "http_test_client.h"
#include "support/free_port.h"

namespace gte::testing {
namespace {

std::string selfDir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return ".";
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/'));
}

}  // namespace

std::string extenderBinary() {
  if (const char* env = std::getenv("GTE_BINARY")) return env;
  return selfDir() + "/gpu-topology-extender";
}

ExtenderProcess::ExtenderProcess(std::vector<std::string> extraArgs) {
  port_ = freePort();
  char tmpl[] = "/tmp/gte-extender-log-XXXXXX";
  const int logFd = ::mkstemp(tmpl);
  logPath_ = tmpl;
  // No drain period unless a test asks for one: the destructor's SIGTERM ends a test, not a
  // rollout, and would otherwise wait the default 5 s.
  std::vector<std::string> args = {extenderBinary(), "serve",
                                   "--listen",       "127.0.0.1:" + std::to_string(port_),
                                   "--drain-period", "0s"};
  args.insert(args.end(), extraArgs.begin(), extraArgs.end());
  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(logFd, STDERR_FILENO);
    ::dup2(logFd, STDOUT_FILENO);
    std::vector<char*> argv;
    for (auto& a : args)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(logFd);
  // Over HTTPS a plain /healthz never answers: there, a listening port is the signal (the
  // certificate is loaded before the server listens).
  const bool tls = std::find(extraArgs.begin(), extraArgs.end(), "--tls-cert") != extraArgs.end();
  // `--listen 127.0.0.1:0` among the extra flags: the kernel picks the port, and the extender's
  // listening line says which.
  const auto zero = std::find(extraArgs.begin(), extraArgs.end(), "127.0.0.1:0");
  const bool kernelPort =
      zero != extraArgs.begin() && zero != extraArgs.end() && *(zero - 1) == "--listen";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (std::chrono::steady_clock::now() < deadline && running()) {
    if (kernelPort) {
      const std::string text = log();
      const auto at = text.find("msg=listening");
      const auto port = at == std::string::npos ? std::string::npos : text.find(" port=", at);
      if (port == std::string::npos) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        continue;
      }
      port_ = static_cast<std::uint16_t>(std::stoi(text.substr(port + 6)));
    }
    if (tls ? HttpConnection(port_).connected()
            : httpRequest(port_, "GET", "/healthz").status == 200) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

ExtenderProcess::~ExtenderProcess() {
  terminate();
  if (!logPath_.empty()) ::unlink(logPath_.c_str());
}

bool ExtenderProcess::running() const {
  if (pid_ <= 0 || exited_) return false;
  if (::waitpid(pid_, &exitStatus_, WNOHANG) == pid_) exited_ = true;
  return !exited_;
}

std::string ExtenderProcess::log() const {
  std::ifstream in(logPath_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void ExtenderProcess::signal(int sig) {
  if (running()) ::kill(pid_, sig);
}

int ExtenderProcess::waitExit() {
  for (int i = 0; i < 200 && running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (running()) return -1;
  return WIFEXITED(exitStatus_) ? WEXITSTATUS(exitStatus_) : 128 + WTERMSIG(exitStatus_);
}

int ExtenderProcess::terminate() {
  if (pid_ <= 0) return -1;
  int status = exitStatus_;
  if (exited_) {
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 200; ++i) {
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (r < 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
  return -1;
}

}  // namespace gte::testing
