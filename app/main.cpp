// afasim: a simulator of all-flash storage array firmware (X-IO ISE 800 G3 kind).
#include <variant>

#include "app/commands.h"

int main(int argc, char** argv) {
  auto cli = afasim::app::make_cli();
  auto parsed = afasim::app::parse_cli(*cli, argc, argv);
  if (const int* code = std::get_if<int>(&parsed)) return *code;
  return std::get<afasim::app::Runner>(parsed)();
}
