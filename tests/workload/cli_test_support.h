// Running the real afasim binary from a test (AFASIM_BINARY, set by CTest): its exit code,
// standard output and standard error; files for it in a folder of this test process.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace afasim::workload::testing {

struct Cli {
  int exit_code = -1;
  std::string out, err;
};

// The folder is made on first use and removed, with what the test left in it, when the test
// process exits.
inline std::filesystem::path cli_temp_dir() {
  struct Folder {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("afasim-cli-" + std::to_string(getpid()));
    ~Folder() {
      std::error_code ignored;
      std::filesystem::remove_all(path, ignored);
    }
  };
  static const Folder folder;
  std::filesystem::create_directories(folder.path);
  return folder.path;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `afasim ARGS` through the shell (ARGS are shell words).
inline Cli run_cli(const std::string& args) {
  const char* binary = std::getenv("AFASIM_BINARY");
  REQUIRE_MESSAGE(binary != nullptr, "AFASIM_BINARY is not set (run through ctest)");
  const auto dir = cli_temp_dir();
  const std::string cmd = std::string(binary) + " " + args + " >" + (dir / "out").string() + " 2>" +
                          (dir / "err").string();
  const int status = std::system(cmd.c_str());
  Cli r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(dir / "out");
  r.err = slurp(dir / "err");
  return r;
}

// Writes `text` to NAME in the test's folder; returns its path.
inline std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = cli_temp_dir() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

}  // namespace afasim::workload::testing
