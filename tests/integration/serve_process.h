// Runs the real `afasim serve` binary for integration tests: a temporary state directory,
// free ports, the log captured, SIGINT to stop. The binary is $AFASIM_BINARY (set by CTest).
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace afasim::testing {

class TempStateDir {
 public:
  TempStateDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "afasim-it-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempStateDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class ServeProcess {
 public:
  // Starts `afasim serve --state STATE --listen 127.0.0.1:0 --nbd-listen 127.0.0.1:0 EXTRA...`
  // (free ports, so that tests run side by side) and waits until the
  // ReST API listens (its port is read from the log).
  ServeProcess(const std::string& state, std::vector<std::string> extra = {}) : log_(state + ".serve.log") {
    const char* binary = std::getenv("AFASIM_BINARY");
    REQUIRE_MESSAGE(binary != nullptr, "AFASIM_BINARY is not set (run through ctest)");
    std::vector<std::string> args = {binary,     "serve",       "--state",      state,
                                     "--listen", "127.0.0.1:0", "--nbd-listen", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    std::filesystem::remove(log_);  // never read an earlier run's port
    pid_ = ::fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      FILE* out = std::freopen(log_.c_str(), "w", stdout);
      (void)out;
      ::dup2(STDOUT_FILENO, STDERR_FILENO);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    static const std::regex listening("listening on https?://127\\.0\\.0\\.1:([0-9]+)");
    while (std::chrono::steady_clock::now() < deadline) {
      std::smatch m;
      const std::string text = log();
      if (std::regex_search(text, m, listening)) {
        port_ = std::stoi(m[1]);
        return;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL("afasim serve exited before listening:\n" << text);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    FAIL("afasim serve did not start listening within 20 s:\n" << log());
  }
  ~ServeProcess() { stop(); }

  int port() const { return port_; }
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  // SIGINT, then waits; returns the exit status (-1 if it had to be killed).
  int stop() {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, SIGINT);
    int status = 0;
    for (int i = 0; i < 200; ++i) {
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        return exit_code_;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    exit_code_ = -1;
    return exit_code_;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_code_ = -1;
};

}  // namespace afasim::testing
