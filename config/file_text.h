// Reading a file a user names (a scenario, a sweep file, a job file, a trace, a session
// record, a PEM file): opened without waiting for a FIFO's writer, so that a FIFO nobody
// writes reads as empty instead of hanging the command (hostile round 17: fio, run, sweep,
// trace, read_iolog= and replay waited for ever); a pipe with a writer (`<(...)`) is then
// read blocking, as any file.
// Stateless and thread-safe.
#pragma once

#include <atomic>
#include <cstddef>
#include <istream>
#include <memory>
#include <string>
#include <string_view>

#include "sim/status.h"

namespace afasim::config {

// A descriptor of the file at `path`, open for blocking reads; the caller closes it.
// Errors carry the reason alone, for the caller to put after its own words:
// kNotFound with the system's reason ("No such file or directory", "Permission denied")
// when it cannot be opened, kInvalidArgument "a directory" when it is one.
sim::Result<int> open_for_reading(const std::string& path);

// Every byte `fd` gives until its end, stopping once more than `max_bytes` are in (the
// result is then at most one 64 KiB buffer longer than max_bytes: a caller that finds it
// longer refuses the size without having read a huge file whole). Closes `fd`.
// kIoError with the system's reason when a read fails.
sim::Result<std::string> read_descriptor(int fd, std::size_t max_bytes);

// `text` safe to print to a terminal: every control character (below 0x20, DEL, the C1
// controls U+0080..U+009F in UTF-8) and every byte that is not UTF-8 as \xNN; other UTF-8
// stays. For what a user's file holds
// and afasim prints back (a trace's device field, a bad line, a description): hostile round
// 23's trace set the terminal's title and cleared its screen with ESC sequences.
// `keep_lines`: newlines and tabs stay (a whole report or message of several lines).
std::string printable(std::string_view text, bool keep_lines = false);

// The compressor whose magic number `first_bytes` start with ("gzip", "xz", "zstd", "bzip2"),
// or "" (a user handing a .gz trace or job file is told to decompress it).
std::string_view compression_of(std::string_view first_bytes);

// The bytes of the file at `path`, as read_descriptor gives them.
// kNotFound "cannot read PATH: REASON" when the file cannot be opened, kInvalidArgument
// "cannot read PATH: a directory", kIoError "cannot read PATH: REASON" when reading fails.
sim::Result<std::string> read_file_text(const std::string& path, std::size_t max_bytes);

// The file at `path` as a stream read in 256 KiB blocks (a trace of any length is streamed),
// the stream owning the descriptor. Errors as open_for_reading's. While it waits for input (a
// pipe's writer is silent) it reads `stop` every 250 ms and a signal wakes it: once `stop`
// reads true the stream ends there. With `stop`, a FIFO nobody has opened for writing yet is
// waited for (its first writer's bytes, or its end when the writer leaves having written
// nothing); without, it reads as empty at once.
sim::Result<std::unique_ptr<std::istream>> open_file_stream(const std::string& path,
                                                           const std::atomic<bool>* stop = nullptr);

}  // namespace afasim::config
