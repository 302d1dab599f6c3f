// The fuzz targets compiled into replay_fuzz (tests/fuzz/CMakeLists.txt generates their
// table): a name (corpus/NAME) and the target's LLVMFuzzerTestOneInput, renamed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace afasim::fuzz {

struct ReplayTarget {
  std::string name;                                        // "http_request": corpus/http_request
  int (*one_input)(const std::uint8_t* data, std::size_t size);  // never null
};

// Every target, in tests/fuzz/CMakeLists.txt's order.
const std::vector<ReplayTarget>& replay_targets();

}  // namespace afasim::fuzz
