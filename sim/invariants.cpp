#include "sim/invariants.h"

namespace afasim::sim {

std::size_t Invariants::add(std::string name, Check check) {
  enabled_ = true;
  checks_.push_back({std::move(name), std::move(check)});
  return checks_.size() - 1;
}

void Invariants::violation(Time now, std::string name, std::string what) {
  violations_.push_back("t=" + std::to_string(now) + " " + name + ": " + what);
}

std::size_t Invariants::check_all(Time now) {
  std::size_t failed = 0;
  for (auto& c : checks_) {
    std::string what = c.check();
    if (!what.empty()) {
      ++failed;
      violation(now, c.name, std::move(what));
    }
  }
  return failed;
}

std::string Invariants::report(std::size_t limit) const {
  std::string out;
  for (std::size_t i = 0; i < violations_.size() && i < limit; ++i) out += violations_[i] + "\n";
  if (violations_.size() > limit)
    out += "... and " + std::to_string(violations_.size() - limit) + " more\n";
  return out;
}

}  // namespace afasim::sim
