#include "sim/buggify.h"

#include "sim/assert.h"

namespace afasim::sim {

struct Buggify::State {
  BuggifyOptions options;
  Rng rng;
  std::map<std::string, bool, std::less<>> active;  // decided at a point's first use
  std::map<std::string, std::int64_t> firings;
};

Buggify::State* Buggify::state_ = nullptr;

bool Buggify::fires(std::string_view point) {
  AFASIM_ASSERT(state_ != nullptr, "a fault point reached with no BuggifyScope");
  State& s = *state_;
  auto it = s.active.find(point);
  if (it == s.active.end()) {
    // From the seed and the name only: independent of which point is reached first.
    Rng decide(s.options.seed, std::string("buggify.active.") + std::string(point));
    const bool active = decide.bernoulli(s.options.activate_probability) && s.options.off.count(point) == 0;
    it = s.active.emplace(std::string(point), active).first;
  }
  if (!it->second || !s.rng.bernoulli(s.options.fire_probability)) return false;
  ++s.firings[it->first];
  return true;
}

std::int64_t Buggify::between(std::int64_t lo, std::int64_t hi) {
  AFASIM_ASSERT(state_ != nullptr, "a fault point reached with no BuggifyScope");
  return state_->rng.uniform_range(lo, hi);
}

std::map<std::string, std::int64_t> Buggify::firings() {
  return state_ == nullptr ? std::map<std::string, std::int64_t>{} : state_->firings;
}

BuggifySuspend::BuggifySuspend() : saved_(Buggify::state_) {
  Buggify::state_ = nullptr;
}

BuggifySuspend::~BuggifySuspend() {
  Buggify::state_ = saved_;
}

BuggifyScope::BuggifyScope(BuggifyOptions options) {
  AFASIM_ASSERT(Buggify::state_ == nullptr, "two BuggifyScopes at once");
  AFASIM_ASSERT(options.activate_probability >= 0 && options.activate_probability <= 1 &&
                    options.fire_probability >= 0 && options.fire_probability <= 1,
                "BuggifyOptions: probabilities must be in [0, 1]");
  Buggify::state_ = new Buggify::State{options, Rng(options.seed, "buggify"), {}, {}};
}

BuggifyScope::~BuggifyScope() {
  delete Buggify::state_;
  Buggify::state_ = nullptr;
}

}  // namespace afasim::sim
