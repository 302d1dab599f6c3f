// parse_size: the size syntax of docs/api.md and docs/scenarios.md (the API uses it through
// api/size.h). Expected byte counts are the unit
// definitions (IEC 80000-13 binary prefixes, SI decimal prefixes) worked by hand.
#include "config/size.h"

#include <doctest/doctest.h>

namespace afasim::config {
namespace {

std::int64_t ok(const char* s) {
  auto r = parse_size(s);
  REQUIRE_MESSAGE(r.is_ok(), s << ": " << r.status().to_string());
  return *r;
}
sim::Code code(const char* s) {
  return parse_size(s).status().code();
}

TEST_CASE("parse_size reads plain, binary and decimal sizes") {
  CHECK(ok("512") == 512);
  CHECK(ok("0") == 0);
  CHECK(ok("1B") == 1);
  CHECK(ok("4KiB") == 4096);
  CHECK(ok("4kib") == 4096);
  CHECK(ok("4 KiB") == 4096);
  CHECK(ok("100GiB") == 107374182400LL);
  CHECK(ok("100G") == 107374182400LL);
  CHECK(ok("2TB") == 2000000000000LL);
  CHECK(ok("2tb") == 2000000000000LL);
  CHECK(ok("1kB") == 1000);
  CHECK(ok("3MB") == 3000000);
  CHECK(ok("1.5TiB") == 1649267441664LL);  // 1.5 x 2^40
  CHECK(ok("1.5KiB") == 1536);
  CHECK(ok("0.5MiB") == 524288);
  CHECK(ok("1PiB") == (1LL << 50));
  CHECK(ok("7EiB") == 7LL << 60);
  CHECK(ok("9223372036854775807") == INT64_MAX);
  // Leading zeros and zeros past the 18th digit after the point change nothing (hostile round
  // 14: both were "absurdly large").
  CHECK(ok("0000000000000000000000000000001GiB") == (1LL << 30));
  CHECK(ok("1.000000000000000000000000000000GiB") == (1LL << 30));
  CHECK(ok("000000000000000000009223372036854775807") == INT64_MAX);
  CHECK(ok("0.500000000000000000000000KiB") == 512);
}

TEST_CASE("parse_size refuses nonsense with kInvalidArgument") {
  for (const char* s :
       {"", " ", "GiB", "lots", "1e3", "0x10", "1,000", "10 XB", "10GiBs", "1.", ".5G", "1 GiB ",
        " 1GiB", "1  GiB", "+5G", "5-G", "1.2.3G", "-", "1.0000000000000000001GiB"}) {
    INFO("\"" << s << "\"");
    CHECK(code(s) == sim::Code::kInvalidArgument);
  }
  CHECK(code("1234567890123456789012345678901234567890123456789012345678901234567890") ==
        sim::Code::kInvalidArgument);  // longer than kSizeStringMaxChars
  // The unknown unit is quoted as written, and the message lists the one-letter units too (a
  // new user saw "XB" quoted as "xb" and no K M G).
  CHECK(parse_size("10 XB").status().message() ==
        "size \"10 XB\" has an unknown unit \"XB\" (B; K, M, G, T, P, E or KiB ... EiB: powers of 1024; "
        "kB, MB, GB, TB, PB, EB: of 1000; any case) (examples: 1073741824, \"100GiB\", \"2TB\", \"1.5TiB\")");
  CHECK(ok("10 K") == 10240);  // as the message says
  CHECK(ok("1e") == (1LL << 60));
}

TEST_CASE("parse_size refuses negative, fractional-byte and absurd sizes with kUnprocessable") {
  for (const char* s : {"-5GiB", "-1", "1.3B", "0.1KiB", "8EiB", "9223372036854775808",
                        "99999999999999999999999999999", "16EB", "1000000PiB"}) {
    INFO("\"" << s << "\"");
    CHECK(code(s) == sim::Code::kUnprocessable);
  }
}

}  // namespace
}  // namespace afasim::config
