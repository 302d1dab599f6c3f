#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "config/file_text.h"
#include "config/preset.h"

using namespace afasim;
using nlohmann::json;

namespace {

// The embedded files with one of them edited by `edit`; returns the load error ("" if ok).
std::string load_error(const std::string& path, const std::function<void(json&)>& edit) {
  auto files = config::embedded_files();
  json j = json::parse(files.at(path));
  edit(j);
  files[path] = j.dump();
  auto cat = config::Catalog::from_files(files);
  return cat.is_ok() ? "" : cat.status().message();
}

std::string load_error_raw(const std::string& path, const std::string& text) {
  auto files = config::embedded_files();
  files[path] = text;
  auto cat = config::Catalog::from_files(files);
  return cat.is_ok() ? "" : cat.status().message();
}

}  // namespace

TEST_CASE("the embedded presets load, with the ISE 860 G3 as the default") {
  auto cat = config::Catalog::embedded();
  REQUIRE(cat.is_ok());
  CHECK(cat->system_names() == std::vector<std::string>{"ise-820-g3", "ise-850-g3", "ise-860-g3"});
  auto s = cat->system(config::Catalog::kDefaultSystem).value();
  CHECK(s.model == "ISE 860 G3");
  // Shared figures come from the family file through `extends` (spec sheet: 2 controllers,
  // 2.2 GHz 6-core, 16 GB DRAM, 8 FC ports, 2 supercap packs, 20 × 1.6 TB per DataPac).
  CHECK(s.controllers.count == 2);
  CHECK(s.controllers.cpu_cores == 6);
  CHECK(s.controllers.cpu_clock_mhz == 2200);
  CHECK(s.controllers.dram_bytes == 16LL << 30);
  CHECK(s.controllers.host_ports.count_per_controller * s.controllers.count == 8);
  CHECK(s.supercaps.packs == 2);
  CHECK(s.drive_count() == 40);
  CHECK(s.ssd.capacity_bytes == 1'600'000'000'000);
  CHECK(cat->system("ise-850-g3")->drive_count() == 20);
  CHECK(cat->system("ise-820-g3")->ssd.capacity_bytes == 200'000'000'000);
  // The SSD model's NAND and buffer sizes (assumptions in config/ssds/*.json): 8 channels x
  // 16 dies of 128 Gb.
  CHECK(s.ssd.raw_nand_bytes == 2LL << 40);
  CHECK(s.ssd.dies() == 128);
  CHECK(s.ssd.write_buffer_bytes == 64LL << 20);
}

TEST_CASE("an unknown system names the known ones; the abstract family file is not a system") {
  auto cat = config::Catalog::embedded().value();
  auto s = cat.system("ise-999");
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.status().code() == sim::Code::kNotFound);
  CHECK(s.status().message().find("ise-860-g3") != std::string::npos);
  CHECK_FALSE(cat.system("ise-800-g3").is_ok());
}

TEST_CASE("malformed and inconsistent presets fail with file: key: what is wrong") {
  const std::string sys = "systems/ise-860-g3.json";
  const std::string fam = "systems/ise-800-g3.json";
  const std::string ssd = "ssds/xio-g3-sas-1600gb.json";
  struct Case {
    std::string expect;  // the message must start with this
    std::string path;
    std::function<void(json&)> edit;
  };
  const Case cases[] = {
      {sys + ": datapacs.ssds_per_datapac: a bare number", sys,
       [](json& j) { j["datapacs"]["ssds_per_datapac"] = 20; }},
      {sys + ": datapacs.ssds_per_datapac.value: must be a number, got a string", sys,
       [](json& j) { j["datapacs"]["ssds_per_datapac"]["value"] = "20"; }},
      {sys + ": datapacs.ssds_per_datapac.value: must be in [1, 64], got 0", sys,
       [](json& j) { j["datapacs"]["ssds_per_datapac"]["value"] = 0; }},
      {sys + ": datapacs.ssds_per_datapac.value: must be an integer", sys,
       [](json& j) { j["datapacs"]["ssds_per_datapac"]["value"] = 19.5; }},
      {sys + ": datapacs.ssds_per_datapac.source: \"nowhere\" is not a key of sources.json", sys,
       [](json& j) { j["datapacs"]["ssds_per_datapac"]["source"] = "nowhere"; }},
      {sys + ": datapacs.ssds_per_datapac: needs exactly one of", sys,
       [](json& j) { j["datapacs"]["ssds_per_datapac"]["assumption"] = "both"; }},
      {sys + ": datapacs.ssd_model: no SSD model \"sata-ssd\"", sys,
       [](json& j) { j["datapacs"]["ssd_model"] = "sata-ssd"; }},
      {sys + ": datapacs.colour: unknown key", sys, [](json& j) { j["datapacs"]["colour"] = "red"; }},
      {sys + ": extends: no system \"ise-700\"", sys, [](json& j) { j["extends"] = "ise-700"; }},
      {sys + ": name: must match the file name", sys, [](json& j) { j["name"] = "ise-861-g3"; }},
      {sys + ": model: missing", sys, [](json& j) { j.erase("model"); }},
      // Hostile round 28a (L7): a newline or NUL in a model split the capacity table's rows.
      {sys + ": model: must not hold control characters (a newline, a tab, NUL); byte 3 is 10", sys,
       [](json& j) { j["model"] = std::string("ISE\n860"); }},
      {ssd + ": description: must not hold control characters (a newline, a tab, NUL); byte 1 is 0", ssd,
       [](json& j) { j["description"] = std::string("X\0IO", 4); }},
      // Hostile round 25: a published capacity or price of 0 loaded (and printed 0.0 TB).
      {sys + ": published_capacity_tb.pre_raid.value: must be in [0.001, 1000000], got 0", sys,
       [](json& j) { j["published_capacity_tb"]["pre_raid"]["value"] = 0; }},
      {sys + ": list_price_usd.value: must be in [1, 1000000000000], got 0", sys,
       [](json& j) { j["list_price_usd"]["value"] = 0; }},
      {fam + ": supercaps.voltage_min: must be below voltage_max", fam,
       [](json& j) { j["supercaps"]["voltage_min"]["value"] = 20.0; }},
      {fam + ": chassis.power_max_w: must be at least power_typical_w", fam,
       [](json& j) { j["chassis"]["power_max_w"]["value"] = 100; }},
      {fam + ": controllers.count.value: must be in [2, 2], got 3", fam,
       [](json& j) { j["controllers"]["count"]["value"] = 3; }},
      {fam + ": controllers.host_ports.protocol: must be one of", fam,
       [](json& j) { j["controllers"]["host_ports"]["protocol"] = "scsi-over-pigeon"; }},
      {ssd + ": host_interface.kind: must be one of nvme, sas, got \"sata\"", ssd,
       [](json& j) { j["host_interface"]["kind"] = "sata"; }},
      {ssd + ": nand.page_bytes.value: must be a multiple of 4096", ssd,
       [](json& j) { j["nand"]["page_bytes"]["value"] = 6000; }},
      {ssd + ": nand.program_suspend: must be true or false", ssd,
       [](json& j) { j["nand"]["program_suspend"] = "yes"; }},
      {ssd + ": nand.tlc_magic: unknown key", ssd, [](json& j) { j["nand"]["tlc_magic"] = 1; }},
      {ssd + ": datasheet.source: \"nowhere\" is not a key of sources.json", ssd,
       [](json& j) { j["datasheet"] = {{"source", "nowhere"}}; }},
      {"devices/liqid-lqd4500.json: members.ssd_model: no SSD model \"nope\"",
       "devices/liqid-lqd4500.json", [](json& j) { j["members"]["ssd_model"] = "nope"; }},
      {"devices/liqid-lqd4500.json: composition: \"single\" needs exactly one member",
       "devices/liqid-lqd4500.json", [](json& j) { j["composition"] = "single"; }},
      {"devices/liqid-lqd4500.json: stripe_bytes.value: must be a power of two",
       "devices/liqid-lqd4500.json", [](json& j) { j["stripe_bytes"]["value"] = 100000; }},
      {ssd + ": dwpd: missing", ssd, [](json& j) { j.erase("dwpd"); }},
      {ssd + ": schema: expected \"afasim.ssd/2\"", ssd, [](json& j) { j["schema"] = "afasim.ssd/9"; }},
      {ssd + ": geometry: the NAND (channels x dies_per_channel x die_bytes, less reserved_fraction) "
             "must exceed capacity_bytes",
       ssd, [](json& j) { j["geometry"]["dies_per_channel"]["value"] = 11; }},
      {ssd + ": write_buffer_bytes.value: must be in [4096, ", ssd,
       [](json& j) { j["write_buffer_bytes"]["value"] = 512; }},
      {ssd + ": write_buffer_bytes: missing", ssd, [](json& j) { j.erase("write_buffer_bytes"); }},
      {"models/capacity.json: chunk_bytes.value: must be a power of two", "models/capacity.json",
       [](json& j) { j["chunk_bytes"]["value"] = 3 << 20; }},
      {"models/reliability.json: drive_afr_percent.value: must be in [1e-06, 100000], got 0",
       "models/reliability.json", [](json& j) { j["drive_afr_percent"]["value"] = 0; }},
      {"models/reliability.json: scrub_interval_hours: needs exactly one of \"source\" or \"assumption\"",
       "models/reliability.json", [](json& j) { j["scrub_interval_hours"].erase("assumption"); }},
      {"models/reliability.json: mttdl_magic: unknown key", "models/reliability.json",
       [](json& j) { j["mttdl_magic"] = 1; }},
      {"models/reliability.json: controller_mtbf_hours: missing", "models/reliability.json",
       [](json& j) { j.erase("controller_mtbf_hours"); }},
  };
  for (const Case& c : cases) {
    const std::string err = load_error(c.path, c.edit);
    INFO("expected: " << c.expect << "\n     got: " << err);
    CHECK(err.rfind(c.expect, 0) == 0);
  }
}

TEST_CASE("a file that is not JSON, and an extends cycle, are reported by file") {
  const std::string sys = "systems/ise-860-g3.json";
  CHECK(load_error_raw(sys, "{\"name\": ").rfind(sys + ": (top level): not valid JSON", 0) == 0);
  // A NUL byte ended nlohmann's text there: the file read as its part before it (review 41).
  const std::string whole = config::embedded_files().at(sys);
  CHECK(load_error_raw(sys, whole + std::string("\0 garbage {{{", 13)).rfind(sys + ": (top level): not valid JSON", 0) == 0);
  CHECK(load_error_raw(sys, whole) == "");
  const std::string fam = "systems/ise-800-g3.json";
  const std::string err = load_error(fam, [](json& j) { j["extends"] = "ise-860-g3"; });
  CHECK(err.find("cycle") != std::string::npos);
}

TEST_CASE("a system whose SSDs hold more than 2^28 chunks in all is refused, naming the counts") {
  // Hostile round 22: 128 SSDs of 30 PB were accepted and a 50 ms fio job then ran out of
  // memory (the pool keeps state per 16 MiB chunk). The ISE 860 G3 has 40 SSDs; at
  // 113 TB each they hold 40 x 6,735,324 = 269,412,960 chunks, past 2^28 = 268,435,456; at
  // 112 TB, 267,028,960, within it. The ISE 850 G3 (20 SSDs) is within it at either size,
  // and so is the ISE 860 G3 at 113 TB with 32 MiB chunks.
  const std::string ssd = "ssds/xio-g3-sas-1600gb.json";
  auto sized = [](double capacity_bytes) {
    return [capacity_bytes](json& j) {
      j["nand"]["die_bytes"]["value"] = 1e13;
      j["geometry"]["channels"]["value"] = 64;
      j["capacity_bytes"]["value"] = capacity_bytes;
    };
  };
  CHECK(load_error(ssd, sized(112e12)) == "");
  const std::string err = load_error(ssd, sized(113e12));
  CHECK(err.rfind("systems/ise-860-g3.json: datapacs: 40 SSDs of 113000000000000 bytes "
                  "(xio-g3-sas-1600gb) hold 269412960 chunks of 16777216 bytes", 0) == 0);
  CHECK(err.find("at most 268435456") != std::string::npos);
  auto files = config::embedded_files();
  json model = json::parse(files.at(ssd));
  sized(113e12)(model);
  files[ssd] = model.dump();
  json capacity = json::parse(files.at("models/capacity.json"));
  capacity["chunk_bytes"]["value"] = 32 << 20;
  files["models/capacity.json"] = capacity.dump();
  auto larger_chunks = config::Catalog::from_files(files);
  CHECK_MESSAGE(larger_chunks.is_ok(), larger_chunks.status().message());
}

TEST_CASE("from_directory reads the source tree's config/ like the embedded copy") {
  const char* src = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(src != nullptr);
  auto cat = config::Catalog::from_directory(std::string(src) + "/config");
  REQUIRE(cat.is_ok());
  CHECK(cat->system_names().size() == 3);
  auto missing = config::Catalog::from_directory("/nonexistent/afasim");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message() == "/nonexistent/afasim: no such directory");
}

TEST_CASE("from_directory: a symlink loop, a dangling link or a file in place of the folder is an error naming it") {
  // Hostile round 28: a preset file linked to itself (systems/loop.json -> loop.json) threw
  // filesystem_error out of the folder's scan and killed every command that read presets.
  const char* src = std::getenv("AFASIM_SOURCE_DIR");
  REQUIRE(src != nullptr);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("afasim-preset-loop-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::copy(std::string(src) + "/config", dir, std::filesystem::copy_options::recursive);
  std::filesystem::create_symlink("loop.json", dir / "systems" / "loop.json");
  auto loop = config::Catalog::from_directory(dir.string());
  REQUIRE_FALSE(loop.is_ok());
  CHECK(loop.status().message() == (dir / "systems" / "loop.json").string() + ": Too many levels of symbolic links");
  std::filesystem::remove(dir / "systems" / "loop.json");
  std::filesystem::create_symlink("/nonexistent/afasim.json", dir / "ssds" / "gone.json");
  auto dangling = config::Catalog::from_directory(dir.string());
  REQUIRE_FALSE(dangling.is_ok());
  CHECK(dangling.status().message() == (dir / "ssds" / "gone.json").string() + ": No such file or directory");
  std::filesystem::remove(dir / "ssds" / "gone.json");
  // A folder or a FIFO where a preset belongs was skipped: the preset was then unknown
  // (hostile review 43).
  const auto preset = dir / "systems" / "ise-860-g3.json";
  const std::string kept = config::read_file_text(preset.string(), 1 << 20).value();
  std::filesystem::remove(preset);
  std::filesystem::create_directory(preset);
  auto folder = config::Catalog::from_directory(dir.string());
  REQUIRE_FALSE(folder.is_ok());
  CHECK(folder.status().message() == preset.string() + ": a folder where a preset's JSON file belongs");
  std::filesystem::remove(preset);
  REQUIRE(::mkfifo(preset.c_str(), 0600) == 0);
  auto fifo = config::Catalog::from_directory(dir.string());
  REQUIRE_FALSE(fifo.is_ok());
  CHECK(fifo.status().message() == preset.string() + ": not a regular file (a FIFO or a device?) where a preset's JSON file belongs");
  std::filesystem::remove(preset);
  std::ofstream(preset) << kept;
  CHECK(config::Catalog::from_directory(dir.string()).is_ok());
  auto file = config::Catalog::from_directory((dir / "sources.json").string());
  REQUIRE_FALSE(file.is_ok());
  CHECK(file.status().message() == (dir / "sources.json").string() + ": not a directory");
  std::filesystem::remove_all(dir);
}

TEST_CASE("from_directory: what a folder's files lack is named with the folder (hostile round 37)") {
  // `--config-dir /tmp` said "sources.json: (top level): missing: ...", naming no folder.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("afasim-preset-empty-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto empty = config::Catalog::from_directory(dir.string());
  REQUIRE_FALSE(empty.is_ok());
  CHECK(empty.status().message() == dir.string() + ": sources.json: (top level): missing: every figure must name a source in it");
  std::filesystem::remove_all(dir);
}

TEST_CASE("derived figures: rated endurance and supercap energy") {
  auto s = config::Catalog::embedded()->system("ise-860-g3").value();
  // 10 DWPD × 1.6 TB × 365 × 5 years = 29.2 PB.
  CHECK(s.ssd.rated_endurance_bytes() == doctest::Approx(2.92e16));
  // 2 packs × ½ × 30 F × (16.2² − 8²) V² = 5,953.2 J.
  CHECK(s.supercaps.usable_energy_joules() == doctest::Approx(5953.2));
}

TEST_CASE("devices: the seed devices from devices/ and every SSD model as a device of its own") {
  auto cat = config::Catalog::embedded().value();
  const auto names = cat.device_names();
  CHECK(names.size() == 8);
  const auto lqd = cat.device("liqid-lqd4500").value();
  // liqid-lqd4500: 8 members behind a PCIe 4.0 x16 switch, RAID 0.
  CHECK(lqd.member_count == 8);
  CHECK(lqd.member.name == "toshiba-xg5p-2048gb");
  CHECK(lqd.has_switch);
  CHECK(lqd.upstream.pcie_generation == 4);
  CHECK(lqd.upstream.lanes == 16);
  CHECK(lqd.composition == "raid0");
  CHECK(lqd.datasheet.random_read_iops == 4'000'000);
  // liqid-element-aic: the members over-provisioned to 1.6 TB each, 6.4 TB in all.
  CHECK(cat.device("liqid-element-aic-7.68tb")->capacity_bytes() == 6'400'000'000'000);
  const auto p5 = cat.device("memblaze-pblaze5-916-aic-6400gb").value();
  CHECK(p5.member_count == 1);
  CHECK_FALSE(p5.has_switch);
  CHECK(p5.datasheet.source == "memblaze-pblaze5-916");
  auto missing = cat.device("optane");
  REQUIRE_FALSE(missing.is_ok());
  CHECK(missing.status().message().find("liqid-lqd4500") != std::string::npos);
}
