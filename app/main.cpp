// afasim: a simulator of all-flash storage array firmware (X-IO ISE 800 G3 kind).
#include <cstdio>
#include <new>
#include <variant>

#include "app/commands.h"

int main(int argc, char** argv) {
  auto cli = afasim::app::make_cli();
  auto parsed = afasim::app::parse_cli(*cli, argc, argv);
  if (const int* code = std::get_if<int>(&parsed)) return *code;
  try {
    return std::get<afasim::app::Runner>(parsed)();
  } catch (const std::bad_alloc&) {
    // A run bigger than the memory it may use (payload kept in memory for verify=, a trace of
    // many devices): a message and exit code 1, not an abort. What was committed stays.
    std::fprintf(stderr,
                 "afasim: out of memory: this run needs more than the machine (or its limit) gives; "
                 "payload none, a smaller size or fewer volumes need less\n");
    return 1;
  }
}
