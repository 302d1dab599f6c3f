// config::printable: what a user's file holds, printed back without its control characters
// (hostile round 23: a trace's device field set the terminal's title and cleared its screen).
#include "config/file_text.h"

#include <doctest/doctest.h>

namespace afasim::config {
namespace {

TEST_CASE("printable escapes control characters, C1 controls included, and keeps other UTF-8") {
  CHECK(printable("sdb") == "sdb");
  CHECK(printable("\x1b]0;pwned\x07\x1b[31mRED") == "\\x1b]0;pwned\\x07\\x1b[31mRED");
  CHECK(printable(std::string("a\0b\x7f", 4)) == "a\\x00b\\x7f");
  CHECK(printable("\xc2\x9b" "2J") == "\\xc2\\x9b2J");  // U+009B, the 8-bit CSI
  CHECK(printable("delay (\xc2\xb5s)") == "delay (\xc2\xb5s)");  // µ stays
  CHECK(printable("\xc2") == "\\xc2");  // a cut sequence: not read past the end, escaped
  CHECK(printable("\x9b" "2J") == "\\x9b2J");  // a lone 8-bit CSI (review, round 23)
  CHECK(printable("\xe2\x82\xac \xf0\x9f\x92\xbe") == "\xe2\x82\xac \xf0\x9f\x92\xbe");  // € and a 4-byte one stay
}

}  // namespace
}  // namespace afasim::config
