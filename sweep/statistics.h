// The summary statistics of a sweep (docs/sweeps.md "Summary"): the mean of a figure over a
// point's seeds and the 95 % confidence interval of that mean.
//
// The interval is Student's t interval for a mean with unknown variance (NIST/SEMATECH
// e-Handbook of Statistical Methods, section 7.2.2.1 "Confidence limits for the mean",
// https://www.itl.nist.gov/div898/handbook/prc/section2/prc221.htm):
//
//     mean ± t(0.975, n − 1) · s / √n,   s² = Σ (x − mean)² / (n − 1)
//
// It assumes the n seeds' figures are independent draws of one distribution, near normal or
// with n large enough: each seed is an independent run of the same point, which is what a
// sweep's seeds are. t(0.975, ν) is student_t_975 below.
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

namespace afasim::sweep {

// t(0.975, ν): the 97.5th percentile of Student's t distribution with ν degrees of freedom
// (two-sided 95 %). ν 1..30 from a table computed from the t distribution's CDF (regularized
// incomplete beta function, mpmath, 10 significant digits; they agree with NIST/SEMATECH
// e-Handbook table 1.3.6.7.2 to its 3 decimals: 12.706, 4.303, ..., 2.042); ν > 30 from the
// Cornish-Fisher expansion of Abramowitz & Stegun 26.7.5 in 1/ν to the 4th order (error under
// 3e-8 there). REQUIRES: ν ≥ 1.
double student_t_975(std::size_t degrees_of_freedom);

struct MeanInterval {
  std::size_t count = 0;  // samples
  double mean = 0;        // 0 when count is 0
  // t(0.975, n − 1) · s / √n; nullopt below 2 samples (no spread to estimate).
  std::optional<double> ci95_half_width;
};

// The mean and 95 % interval of `samples` (any unit; the result is in the same unit).
MeanInterval mean_ci95(const std::vector<double>& samples);

}  // namespace afasim::sweep
