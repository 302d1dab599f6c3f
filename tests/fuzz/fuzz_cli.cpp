// Fuzz target: the `afasim` command line (app/commands.h): the input, split at newlines, is
// argv after the program name; it is parsed with every subcommand's options and checks but
// nothing is run. Also the HOST:PORT parser of --listen and --nbd-listen.
#include <cstdint>
#include <string>
#include <vector>

#include "app/commands.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > 4096) return 0;
  std::vector<std::string> args{"afasim"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == '\n') {
      args.push_back(current);
      current.clear();
    } else {
      current.push_back(static_cast<char>(data[i]));
    }
  }
  args.push_back(current);
  std::vector<const char*> argv;
  for (const auto& a : args) {
    argv.push_back(a.c_str());
    (void)afasim::app::parse_host_port(a);
  }
  auto cli = afasim::app::make_cli();
  (void)afasim::app::parse_cli(*cli, static_cast<int>(argv.size()), argv.data());
  return 0;
}
