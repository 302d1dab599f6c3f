// serve::ConnectionSlots: the two bounds, and whose slot a newcomer takes when every slot is
// held (the hostile round of the twenty-sixth session: a few addresses holding every NBD and
// HTTP slot with connections that never became clients).
#include "serve/connection_slots.h"

#include <doctest/doctest.h>

#include <vector>

namespace afasim::serve {
namespace {

using namespace std::chrono_literals;
using Clock = ConnectionSlots::Clock;

const Clock::time_point t0{};

// `n` attached, unsettled connections from `address` at `when`.
std::vector<std::uint64_t> hold(ConnectionSlots& s, const std::string& address, int n,
                                Clock::time_point when) {
  std::vector<std::uint64_t> ids;
  for (int i = 0; i < n; ++i) {
    const ConnectionSlots::Grant g = s.admit(address, when);
    REQUIRE(g.id != 0);
    REQUIRE(g.evicted == 0);
    s.attach(g.id);
    ids.push_back(g.id);
  }
  return ids;
}

TEST_CASE("the total and the per-address bound refuse, naming which") {
  ConnectionSlots s(3, 2, 1s);
  hold(s, "10.0.0.1", 2, t0);
  const auto over = s.admit("10.0.0.1", t0);
  CHECK(over.id == 0);
  CHECK(over.why == "2 connections already open from this address");
  const auto third = s.admit("10.0.0.2", t0);
  REQUIRE(third.id != 0);
  s.settle(third.id);
  // Full; the unsettled ones are too young to give up their slots.
  const auto full = s.admit("10.0.0.3", t0 + 999ms);
  CHECK(full.id == 0);
  CHECK(full.why == "3 connections already open");
  CHECK(s.active() == 3);
  s.release(third.id);
  CHECK(s.admit("10.0.0.3", t0).id != 0);
  s.stop();
  CHECK(s.admit("10.0.0.4", t0).why == "the server is stopping");
}

TEST_CASE("a newcomer takes the oldest unsettled slot of the busiest address once past the grace") {
  // The hostile round's shape: a few addresses fill every slot, a real client arrives.
  ConnectionSlots s(8, 4, 1s);
  const auto a = hold(s, "10.0.9.1", 3, t0);
  const auto b = hold(s, "10.0.9.2", 4, t0 + 10ms);  // the busiest
  const auto c = hold(s, "10.0.9.3", 1, t0);
  const auto g = s.admit("10.0.0.1", t0 + 1s + 10ms);
  REQUIRE(g.id != 0);
  CHECK(g.evicted == b.front());
  CHECK(g.evicted_address == "10.0.9.2");
  CHECK(s.evictions() == 1);
  CHECK(s.active() == 8);
  // The evicted connection's own release later changes nothing.
  s.release(g.evicted);
  CHECK(s.active() == 8);
  // Ties between equally busy addresses go to the older connection.
  const auto g2 = s.admit("10.0.0.2", t0 + 2s);
  REQUIRE(g2.id != 0);
  CHECK(g2.evicted == a.front());  // 10.0.9.1 and .2 hold 3 each; a's is older
  (void)c;
}

TEST_CASE("an address cannot push out one that holds as many or fewer connections") {
  ConnectionSlots s(4, 4, 0ms);
  const auto real = hold(s, "10.0.0.1", 1, t0);  // a client still in its handshake
  const auto hog = hold(s, "10.0.9.1", 3, t0);
  // The hog's fourth: its address holds 3, the only other holds 1: refused.
  const auto more = s.admit("10.0.9.1", t0 + 1s);
  CHECK(more.id == 0);
  CHECK(s.evictions() == 0);
  // A second client address (holding none) may take one of the hog's, never the real one's.
  const auto other = s.admit("10.0.0.2", t0 + 1s);
  REQUIRE(other.id != 0);
  CHECK(other.evicted == hog.front());
  (void)real;
}

TEST_CASE("settled and not yet attached connections are never taken") {
  ConnectionSlots s(2, 2, 0ms);
  const auto settled = s.admit("10.0.9.1", t0);
  s.attach(settled.id);
  s.settle(settled.id, t0);
  const auto unattached = s.admit("10.0.9.2", t0);  // its front end has not registered it
  REQUIRE(unattached.id != 0);
  CHECK(s.admit("10.0.0.1", t0 + 1h).id == 0);
  s.attach(unattached.id);
  const auto g = s.admit("10.0.0.1", t0 + 1h);
  CHECK(g.evicted == unattached.id);
  // Settling twice or settling an id already gone counts nothing twice.
  s.settle(settled.id, t0);
  s.settle(unattached.id, t0);
  CHECK(s.admit("10.0.0.3", t0 + 2h).id == 0);  // 10.0.9.1's is settled, 10.0.0.1's not attached
}

TEST_CASE("a proven client takes a stranger's slot at once, whatever its age (hostile round 29, F1 and F2)") {
  // F2: a host in transmission on one volume could not open a second connection while 64
  // addresses held one silent connection each. F1: strangers with more addresses than slots,
  // reconnecting the moment they were refused, kept each slot younger than the grace.
  ConnectionSlots s(5, 4, 2s);
  const auto host = s.admit("10.0.0.1", t0);
  s.attach(host.id);
  s.settle(host.id, t0);  // in transmission: 10.0.0.1 is proven from now on
  std::vector<std::uint64_t> strangers;
  for (const char* a : {"10.0.9.1", "10.0.9.2", "10.0.9.3", "10.0.9.4"}) strangers.push_back(hold(s, a, 1, t0 + 1s)[0]);
  // A stranger holding nothing cannot take a slot younger than the grace...
  CHECK(s.admit("10.0.9.5", t0 + 1500ms).id == 0);
  // ...the proven host's second and third connections take the oldest strangers' at once.
  for (std::size_t i = 0; i < 2; ++i) {
    const auto more = s.admit("10.0.0.1", t0 + 1500ms);
    REQUIRE(more.id != 0);
    CHECK(more.evicted == strangers[i]);
    s.attach(more.id);
  }
  // 10.0.0.1 now holds the most unsettled connections (2 against 1 each), so without the
  // rule a stranger would take one of them; it takes a stranger's.
  CHECK(s.admit("10.0.9.5", t0 + 1h).evicted == strangers[2]);
}

TEST_CASE("a trusted address (NBD: a host's initiator names it) is a client before it settles") {
  ConnectionSlots s(3, 2, 1h);
  s.set_trusted([](const std::string& a) { return a.rfind("10.0.0.", 0) == 0; });
  const auto busy = hold(s, "10.0.9.1", 2, t0);
  const auto other = hold(s, "10.0.9.2", 1, t0);
  for (const std::uint64_t expected : {busy[0], busy[1]}) {  // young strangers, no matter
    const auto g = s.admit("10.0.0.7", t0);
    CHECK(g.evicted == expected);
    s.attach(g.id);
  }
  // 10.0.0.7 holds two unsettled connections, the stranger one: the stranger's goes.
  CHECK(s.admit("10.0.9.3", t0 + 2h).evicted == other[0]);
}

TEST_CASE("a proven address is forgotten after kProvenTtl") {
  // With a 2 s grace, only a known client may take the young strangers' slots.
  for (const auto after : {ConnectionSlots::kProvenTtl - 1h, ConnectionSlots::kProvenTtl + 1h}) {
    ConnectionSlots s(2, 2, 2s);
    const auto c = s.admit("10.0.0.1", t0);
    s.attach(c.id);
    s.settle(c.id, t0);
    s.release(c.id);
    hold(s, "10.0.9.1", 1, t0 + after);
    hold(s, "10.0.9.2", 1, t0 + after);
    const bool proven = after < ConnectionSlots::kProvenTtl;
    CAPTURE(proven);
    CHECK((s.admit("10.0.0.1", t0 + after + 1s).id != 0) == proven);
  }
}

TEST_CASE("LogLimiter: a burst, then one a second, and the count of those left out") {
  LogLimiter l;
  std::int64_t left_out = -1;
  for (int i = 0; i < LogLimiter::kBurst; ++i) CHECK(l.admit(left_out, t0));
  CHECK(left_out == 0);
  for (int i = 0; i < 5; ++i) CHECK_FALSE(l.admit(left_out, t0 + 100ms));
  CHECK(l.admit(left_out, t0 + 1100ms));  // one token a second (kPerMinute 60)
  CHECK(left_out == 5);
  CHECK(LogLimiter::suffix(5) == " (and 5 more like it not logged)");
  CHECK(LogLimiter::suffix(0).empty());
}

}  // namespace
}  // namespace afasim::serve
