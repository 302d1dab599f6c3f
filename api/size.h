// Size syntax of the management API: "100GiB", "2TB", "512", "1.5TiB".
//
// The parser lives in config/size.h so that scenario files (workload/) read sizes exactly
// as the API does without linking the API; this header keeps the API's name for it.
// Pure functions; thread-safe.
#pragma once

#include "config/size.h"

namespace afasim::api {

using config::kSizeStringMaxChars;
using config::parse_size;

}  // namespace afasim::api
