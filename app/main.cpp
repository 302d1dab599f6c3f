// afasim: a simulator of all-flash storage array firmware (X-IO ISE 800 G3 kind).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <variant>

#include "app/commands.h"

int main(int argc, char** argv) {
  // A file past `ulimit -f` is a write error each command reports (EFBIG, naming the file),
  // not a signal that ends the process without a word (review, round 25: a sweep's results).
  std::signal(SIGXFSZ, SIG_IGN);
  auto cli = afasim::app::make_cli();
  auto parsed = afasim::app::parse_cli(*cli, argc, argv);
  if (const int* code = std::get_if<int>(&parsed)) return *code;
  int code = 0;
  try {
    code = std::get<afasim::app::Runner>(parsed)();
  } catch (const std::bad_alloc&) {
    // A run bigger than the memory it may use: a message and exit code 1, not an abort. What
    // was committed stays.
    std::fprintf(stderr,
                 "afasim: out of memory: this run needs more than the machine (or its limit) gives. What it "
                 "keeps grows with the bytes written under verify= or payload memory, the I/Os in flight "
                 "(numjobs x iodepth) and their block size, and the volumes or trace devices; a sweep's with "
                 "--jobs and, as it writes its results, with its runs (about 2 KB a run); a smaller run "
                 "needs less\n");
    return 1;
  }
  // The report went to standard output: a full disk or a closed pipe must not pass for success.
  std::cout.flush();
  errno = 0;
  const bool flush_failed = std::fflush(stdout) != 0;
  const int err = flush_failed ? errno : 0;
  if (flush_failed || std::ferror(stdout) || std::cout.fail()) {
    std::fprintf(stderr, "afasim: cannot write to standard output%s%s\n", err != 0 ? ": " : "",
                 err != 0 ? std::strerror(err) : "");
    return code == 0 ? 1 : code;
  }
  return code;
}
