// Reading a file a user wrote (a scenario, a sweep file, a job file) whole, with a bound on
// its size; a FIFO nobody writes reads as empty (it does not block).
// Stateless and thread-safe.
#pragma once

#include <cstddef>
#include <string>

#include "sim/status.h"

namespace afasim::config {

// The bytes of the file at `path`. Reading stops once more than `max_bytes` are in, so the
// result is at most one buffer (64 KiB) longer than max_bytes: a caller that finds it longer
// than max_bytes refuses the size without having read a huge file whole.
// kNotFound "cannot read PATH" when the file cannot be opened; kIoError "cannot read PATH"
// when reading it fails.
sim::Result<std::string> read_file_text(const std::string& path, std::size_t max_bytes);

}  // namespace afasim::config
