// Admission control: shares of a resource add up; a change that pushes one past 100 % is
// refused with the numbers. Capacities here are the Array's for the ISE 860 G3 at 90 % of a
// controller's 6 cores (docs/qos.md): 78,602 RAID10 and 52,708 RAID5 4 KiB writes per second.
#include "qos/admission.h"

#include <doctest/doctest.h>

using namespace afasim;
using qos::Reservation;
using raid::RaidType;

namespace {

qos::ReservableCapacity ise860() {
  qos::ReservableCapacity c;
  c.resource_names = {"controller A", "controller B"};
  c.iops = {{RaidType::kRaid10, 78'602}, {RaidType::kRaid5, 52'708}};
  c.basis = "90 % of 6 cores";
  return c;
}

}  // namespace

TEST_CASE("with_thousands groups digits") {
  CHECK(qos::with_thousands(0) == "0");
  CHECK(qos::with_thousands(999) == "999");
  CHECK(qos::with_thousands(1000) == "1,000");
  CHECK(qos::with_thousands(1234567) == "1,234,567");
  CHECK(qos::with_thousands(-20000) == "-20,000");
}

TEST_CASE("a reservation's share is min over what its RAID type allows, rounded up") {
  const auto c = ise860();
  CHECK(qos::share_ppm({1, "a", 0, RaidType::kRaid10, 78'602}, c) == 1'000'000);
  CHECK(qos::share_ppm({1, "a", 0, RaidType::kRaid10, 39'301}, c) == 500'000);
  CHECK(qos::share_ppm({1, "a", 0, RaidType::kRaid10, 39'302}, c) == 500'013);
  CHECK(qos::share_ppm({1, "a", 0, RaidType::kRaid5, 52'708}, c) == 1'000'000);
  CHECK(qos::share_ppm({1, "a", 0, RaidType::kRaid10, 0}, c) == 0);
  // A RAID type the array cannot guarantee anything for takes more than everything.
  CHECK(qos::share_ppm({1, "a", 0, RaidType::kRaid0, 1}, c) == 2'000'000);
}

TEST_CASE("reservations that fit are admitted; mixed RAID types add up by share") {
  const auto c = ise860();
  std::vector<Reservation> after = {{1, "db", 0, RaidType::kRaid10, 39'000},
                                    {2, "arch", 0, RaidType::kRaid5, 26'000},
                                    {3, "b", 1, RaidType::kRaid10, 78'602}};
  CHECK(qos::check_admission({}, after, c).is_ok());
  const auto ppm = qos::reserved_ppm(after, c);
  CHECK(ppm[0] == 496'171 + 493'284);  // ceil(39,000e6 / 78,602) + ceil(26,000e6 / 52,708)
  CHECK(ppm[1] == 1'000'000);
}

TEST_CASE("a reservation past 100 % of a controller is refused with the numbers") {
  const auto c = ise860();
  std::vector<Reservation> before = {{1, "db", 0, RaidType::kRaid10, 60'000}};
  std::vector<Reservation> after = before;
  after.push_back({7, "new", 0, RaidType::kRaid10, 21'000});
  const sim::Status st = qos::check_admission(before, after, c);
  REQUIRE(st.code() == sim::Code::kUnprocessable);
  const std::string& m = st.message();
  INFO(m);
  CHECK(m.find("controller A") != std::string::npos);
  CHECK(m.find("103.1 %") != std::string::npos);  // (60,000 + 21,000) / 78,602 = 103.05 %
  CHECK(m.find("78,602 RAID10") != std::string::npos);
  CHECK(m.find("52,708 RAID5") != std::string::npos);
  CHECK(m.find("volume 1 \"db\" 60,000 RAID10 (76.3 %)") != std::string::npos);
  CHECK(m.find("volume 7 \"new\" 21,000 RAID10 (26.7 %)") != std::string::npos);
  // The same on controller B is fine.
  after.back().resource = 1;
  CHECK(qos::check_admission(before, after, c).is_ok());
}

TEST_CASE("a share just over 100 % is printed with the decimals that show it") {
  const auto c = ise860();
  // 52,709 RAID5 IOPS against 52,708 guaranteed: ceil(52,709e6 / 52,708) = 1,000,019 ppm.
  const sim::Status st = qos::check_admission({}, {{1, "x", 0, RaidType::kRaid5, 52'709}}, c);
  REQUIRE(st.code() == sim::Code::kUnprocessable);
  INFO(st.message());
  CHECK(st.message().find("would need 100.0019 % of what it can guarantee") != std::string::npos);
}

TEST_CASE("an over-committed state does not block changes that do not add to it") {
  const auto c = ise860();
  std::vector<Reservation> over = {{1, "a", 0, RaidType::kRaid10, 70'000},
                                   {2, "b", 0, RaidType::kRaid10, 70'000}};
  CHECK(qos::check_admission(over, over, c).is_ok());
  std::vector<Reservation> less = over;
  less[0].min_iops = 60'000;
  CHECK(qos::check_admission(over, less, c).is_ok());
  std::vector<Reservation> more = over;
  more[0].min_iops = 70'001;
  CHECK(qos::check_admission(over, more, c).code() == sim::Code::kUnprocessable);
}

TEST_CASE("a long list of reservations is cut at ten, largest first") {
  const auto c = ise860();
  std::vector<Reservation> after;
  for (int i = 1; i <= 15; ++i)
    after.push_back({i, "v" + std::to_string(i), 0, RaidType::kRaid10, 6'000 + i});
  const sim::Status st = qos::check_admission({}, after, c);
  REQUIRE(st.code() == sim::Code::kUnprocessable);
  CHECK(st.message().find("volume 15 \"v15\"") < st.message().find("volume 14 \"v14\""));
  CHECK(st.message().find("and 5 more") != std::string::npos);
}
