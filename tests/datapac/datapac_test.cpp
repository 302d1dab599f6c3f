// The DataPac enclosure: its SSDs, its backplane links, pull and insert.
#include "datapac/datapac.h"

#include <doctest/doctest.h>

#include "test_support.h"

using namespace afasim;
using namespace afasim::datapac;

namespace {

std::unique_ptr<DataPac> ise860_datapac(int id) {
  auto cat = config::Catalog::embedded();
  REQUIRE(cat.is_ok());
  const auto preset = cat->system("ise-860-g3").value();
  DataPacOptions o;
  o.id = id;
  o.ssd.payload = PayloadKind::kMemory;
  auto dp = DataPac::create(preset.datapacs, preset.ssd, o);
  REQUIRE(dp.is_ok());
  return std::move(dp).value();
}

}  // namespace

TEST_CASE("an ISE 860 G3 DataPac has 20 SSDs and an x4 12G SAS port per controller and way") {
  auto dp = ise860_datapac(1);
  CHECK(dp->id() == 1);
  CHECK(dp->ssd_count() == 20);  // xio-spec-sheet: 20 × 1.6 TB per DataPac
  CHECK(dp->ssd(7).name() == "dp1-ssd07");
  CHECK(dp->ssd(19).capacity_bytes() == 1'600'000'000'000);
  CHECK(dp->controller_count() == 2);
  // ise-800-g3.json: 4 lanes × 1.2 GB/s (t10-sas3) per controller.
  Link& to = dp->backplane(0, LinkDirection::kToDataPac);
  CHECK(to.lanes() == 4);
  CHECK(to.bytes_per_second() == 4'800'000'000);
  CHECK(&to != &dp->backplane(0, LinkDirection::kFromDataPac));
  CHECK(&to != &dp->backplane(1, LinkDirection::kToDataPac));
  CHECK(dp->backplane(1, LinkDirection::kFromDataPac).name() == "dp1-c1-from");
}

TEST_CASE("pulling a DataPac removes all its SSDs; inserting it restores their states") {
  auto dp = ise860_datapac(0);
  const std::vector<std::uint8_t> data(512, 0x3C);
  REQUIRE(dp->ssd(2).write_payload(4096, data).is_ok());
  REQUIRE(dp->ssd(3).fail().is_ok());
  REQUIRE(dp->ssd(4).remove().is_ok());
  REQUIRE(dp->pull().is_ok());
  CHECK(dp->state() == DataPacState::kPulled);
  CHECK(dp->pull().code() == sim::Code::kPreconditionFailed);
  for (int s = 0; s < dp->ssd_count(); ++s) CHECK(dp->ssd(s).state() == SsdState::kRemoved);
  CHECK(dp->ssd(0).schedule(0, SsdOp::kRead, 0, 4096).status().code() == sim::Code::kUnavailable);
  CHECK(dp->ssd(4).insert().code() == sim::Code::kPreconditionFailed);
  CHECK(dp->ssd(5).insert_replacement().code() == sim::Code::kPreconditionFailed);
  REQUIRE(dp->insert().is_ok());
  CHECK(dp->insert().code() == sim::Code::kPreconditionFailed);
  CHECK(dp->ssd(2).state() == SsdState::kHealthy);
  CHECK(dp->ssd(3).state() == SsdState::kFailed);
  CHECK(dp->ssd(4).state() == SsdState::kRemoved);  // it was out before the pull
  std::vector<std::uint8_t> out(512);
  REQUIRE(dp->ssd(2).read_payload(4096, out).is_ok());
  CHECK(out == data);
}

TEST_CASE("a bad DataPac spec or SSD option is refused, not crashed on") {
  auto cat = config::Catalog::embedded();
  const auto preset = cat->system("ise-860-g3").value();
  auto spec = preset.datapacs;
  spec.ssds_per_datapac = 0;
  CHECK(DataPac::create(spec, preset.ssd, {}).status().code() == sim::Code::kInvalidArgument);
  DataPacOptions o;
  o.ssd.host_span_fraction = 2;
  CHECK(DataPac::create(preset.datapacs, preset.ssd, o).status().code() ==
        sim::Code::kInvalidArgument);
}
