// `afasim capacity`: the capacity model's figures for one preset (JSON) or all (a table).
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "app/commands.h"
#include "config/preset.h"
#include "pool/capacity.h"
#include "config/json_text.h"

namespace afasim::app {
namespace {

struct CapacityOptions {
  std::string system;
  std::string format = "table";
  std::string config_dir;
};

sim::Result<config::Catalog> load_catalog(const std::string& dir) {
  return dir.empty() ? config::Catalog::embedded() : config::Catalog::from_directory(dir);
}

std::string tb(std::int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f TB", pool::to_tb_rounded(bytes));
  return buf;
}

int run_capacity(const CapacityOptions& o) {
  auto catalog = load_catalog(o.config_dir);
  if (!catalog.is_ok()) {
    return fail_command("capacity", catalog.status().message(), 2);  // escaped (hostile review 43)
  }
  const pool::CapacityModel model(catalog->capacity());
  std::vector<std::string> names = catalog->system_names();
  if (!o.system.empty()) {
    auto s = catalog->system(o.system);
    if (!s.is_ok()) {
      return fail_command("capacity", s.status().message(), 2);  // escaped (hostile review 43)
    }
    names = {o.system};
  }
  if (o.format == "json") {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const auto& name : names) {
      const auto preset = catalog->system(name).value();
      const auto cap = model.system(preset);
      out.push_back({{"system", name},
                     {"pre_raid_bytes", cap.pre_raid_bytes},
                     {"usable_bytes", {{"RAID10", cap.usable_raid10_bytes}, {"RAID5", cap.usable_raid5_bytes}}}});
    }
    // One system: the object itself; all of them: an array.
    std::printf("%s\n", config::dump_json(names.size() == 1 && !o.system.empty() ? out[0] : out).c_str());
    return 0;
  }
  std::printf("%-11s %-11s %-17s %9s %9s %9s   %s\n", "system", "model", "SSDs", "pre-RAID", "RAID10",
              "RAID5", "spec sheet (pre-RAID / RAID10 / RAID5)");
  for (const auto& name : names) {
    const auto p = catalog->system(name).value();
    const auto cap = model.system(p);
    char ssds[48];
    std::snprintf(ssds, sizeof ssds, "%d x %.0f GB", p.drive_count(), p.ssd.capacity_bytes / 1e9);
    char spec[64] = "-";
    if (p.published_capacity.present)
      std::snprintf(spec, sizeof spec, "%.1f / %.1f / %.1f TB", p.published_capacity.pre_raid_tb,
                    p.published_capacity.raid10_tb, p.published_capacity.raid5_tb);
    std::printf("%-11s %-11s %-17s %9s %9s %9s   %s\n", name.c_str(), p.model.c_str(), ssds,
                tb(cap.pre_raid_bytes).c_str(), tb(cap.usable_raid10_bytes).c_str(),
                tb(cap.usable_raid5_bytes).c_str(), spec);
  }
  std::printf("\nModel (docs/capacity.md): per SSD, nominal x %.2f (over-provisioning) x %.2f (rebuild spare)\n"
              "  - %.0f GiB metadata, in %lld MiB chunks; RAID10 keeps %d copies, RAID5 is %d+%d.\n",
              1 - catalog->capacity().over_provisioning_fraction, 1 - catalog->capacity().rebuild_spare_fraction,
              catalog->capacity().metadata_reserve_bytes_per_drive / double(1LL << 30),
              static_cast<long long>(catalog->capacity().chunk_bytes >> 20), catalog->capacity().raid10_copies,
              catalog->capacity().raid5_data_drives, catalog->capacity().raid5_parity_drives);
  return 0;
}

}  // namespace

Runner add_capacity_command(CLI::App& app) {
  auto opts = std::make_shared<CapacityOptions>();
  CLI::App* cmd = app.add_subcommand("capacity", "Pre-RAID and usable capacity of the system presets");
  cmd->add_option("--system", opts->system, "One preset (default: a table of all)");
  cmd->add_option("--format", opts->format, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_option("--config-dir", opts->config_dir, "Read presets from this folder instead of the built-in ones");
  return [opts] { return run_capacity(*opts); };
}

}  // namespace afasim::app
