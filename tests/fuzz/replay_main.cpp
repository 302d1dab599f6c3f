// Replays a fuzz target's corpus without libFuzzer, so that `make test` (any compiler) runs
// every seed and every crash once found: `replay_fuzz NAME DIR...` feeds each file under
// each DIR to target NAME's LLVMFuzzerTestOneInput. A crash or an assertion fails the test;
// the file being fed is printed first, so the failing input is named.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/replay_targets.h"

int main(int argc, char** argv) {
  const afasim::fuzz::ReplayTarget* target = nullptr;
  for (const auto& t : afasim::fuzz::replay_targets())
    if (argc >= 2 && t.name == argv[1]) target = &t;
  if (target == nullptr || argc < 3) {
    std::fprintf(stderr, "usage: %s TARGET CORPUS_DIR...\n  TARGET:", argv[0]);
    for (const auto& t : afasim::fuzz::replay_targets()) std::fprintf(stderr, " %s", t.name.c_str());
    std::fprintf(stderr, "\n");
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    for (const auto& e : std::filesystem::recursive_directory_iterator(argv[i]))
      if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::fprintf(stderr, "%s\n", f.c_str());
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    target->one_input(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs replayed, none crashed\n", files.size());
  return files.empty() ? 1 : 0;  // an empty corpus is a mistake, not a pass
}
