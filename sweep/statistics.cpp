#include "sweep/statistics.h"

#include <array>
#include <cmath>

#include "sim/assert.h"

namespace afasim::sweep {
namespace {

// t(0.975, ν) for ν = 1..30 (statistics.h says where they come from).
constexpr std::array<double, 30> kT975 = {
    12.70620474, 4.30265273, 3.182446305, 2.776445105, 2.570581836, 2.446911851, 2.364624252,
    2.306004135, 2.262157163, 2.228138852, 2.20098516,  2.17881283,  2.160368656, 2.144786688,
    2.131449546, 2.119905299, 2.109815578, 2.10092204,  2.093024054, 2.085963447, 2.079613845,
    2.073873068, 2.06865761,  2.063898562, 2.059538553, 2.055529439, 2.051830516, 2.048407142,
    2.045229642, 2.042272456};

// The standard normal's 97.5th percentile, z(0.975).
constexpr double kZ975 = 1.959963984540054;

}  // namespace

double student_t_975(std::size_t degrees_of_freedom) {
  AFASIM_ASSERT(degrees_of_freedom >= 1, "Student's t needs at least one degree of freedom");
  if (degrees_of_freedom <= kT975.size()) return kT975[degrees_of_freedom - 1];
  // Abramowitz & Stegun 26.7.5: t = x + g1/ν + g2/ν² + g3/ν³ + g4/ν⁴, x = z(0.975).
  const double x = kZ975, v = static_cast<double>(degrees_of_freedom);
  const double x3 = x * x * x, x5 = x3 * x * x, x7 = x5 * x * x, x9 = x7 * x * x;
  const double g1 = (x3 + x) / 4;
  const double g2 = (5 * x5 + 16 * x3 + 3 * x) / 96;
  const double g3 = (3 * x7 + 19 * x5 + 17 * x3 - 15 * x) / 384;
  const double g4 = (79 * x9 + 776 * x7 + 1482 * x5 - 1920 * x3 - 945 * x) / 92160;
  return x + g1 / v + g2 / (v * v) + g3 / (v * v * v) + g4 / (v * v * v * v);
}

MeanInterval mean_ci95(const std::vector<double>& samples) {
  MeanInterval out;
  out.count = samples.size();
  if (samples.empty()) return out;
  double sum = 0;
  for (double x : samples) sum += x;
  const double n = static_cast<double>(samples.size());
  out.mean = sum / n;
  if (samples.size() < 2) return out;
  double squares = 0;  // two passes: no cancellation for figures with a large mean
  for (double x : samples) squares += (x - out.mean) * (x - out.mean);
  const double s = std::sqrt(squares / (n - 1));
  out.ci95_half_width = student_t_975(samples.size() - 1) * s / std::sqrt(n);
  return out;
}

}  // namespace afasim::sweep
