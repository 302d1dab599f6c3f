// Shared by the tests of ssd/: a seed device's spec from the embedded catalog.
#pragma once

#include <doctest/doctest.h>

#include <string>

#include "config/preset.h"

namespace afasim::ssd_test {

inline config::DeviceSpec device_spec(const std::string& name) {
  auto cat = config::Catalog::embedded();
  REQUIRE_MESSAGE(cat.is_ok(), cat.status().message());
  auto d = cat->device(name);
  REQUIRE_MESSAGE(d.is_ok(), d.status().message());
  return *d;
}

}  // namespace afasim::ssd_test
