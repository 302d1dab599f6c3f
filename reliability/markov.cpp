#include "reliability/markov.h"

namespace afasim::reliability {

double markov_mttdl_hours(int drives, double partners, double mtbf_hours, double mttr_hours) {
  const double lambda = 1.0 / mtbf_hours;
  const double mu = 1.0 / mttr_hours;
  const double n = drives;
  return (mu + (n + partners) * lambda) / (n * partners * lambda * lambda);
}

}  // namespace afasim::reliability
