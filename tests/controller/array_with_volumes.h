// An ISE 860 G3 Array over a MemoryJournal, and 1 GiB fixed volumes on demand: the setup
// the Telemetry and metrics tests share.
#pragma once

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "controller/array.h"

namespace afasim::controller::testing {

struct ArrayWithVolumes {
  config::Catalog catalog = config::Catalog::embedded().value();
  config::SystemPreset preset = catalog.system("ise-860-g3").value();
  sim::Simulator sim{1};
  MemoryJournal journal;
  std::unique_ptr<Array> array;

  ArrayWithVolumes() {
    auto a = Array::open(sim, catalog, preset, journal, journal.snapshot());
    REQUIRE(a.is_ok());
    array = std::move(a).value();
  }

  // A 1 GiB fixed RAID10 volume preferring `controller`; its id.
  Id volume(const std::string& name, Id controller = 1) {
    VolumeSpec s;
    s.name = name;
    s.capacity_bytes = 1LL << 30;
    s.provisioning = Provisioning::kFixed;
    s.preferred_controller = controller;
    auto v = array->create_volume(s);
    REQUIRE_MESSAGE(v.is_ok(), v.status().to_string());
    return v->id;
  }
};

}  // namespace afasim::controller::testing
