// The closed-form Markov estimate of the mean time to data loss by double failures
// (docs/reliability.md "The Markov estimate").
//
// States: 0 (every SSD up), 1 (one failed, being rebuilt), loss. From 0, N SSDs fail at λ
// each; from 1, the rebuild ends at μ, and a second failure among the d SSDs that share an
// extent with the failed one loses data (d λ). Solving for the mean time to absorption from 0:
//
//     MTTDL = (μ + (N + d) λ) / (N d λ²)
//
// With d = N − 1 (a RAID 5 group) this is Patterson, Gibson and Katz's formula (SIGMOD 1988)
// before its approximation MTTF² / (N (N − 1) MTTR). Assumes exponential failures and
// repairs, independent SSDs, N constant (failed SSDs replaced), and that a second failure
// among the other N − 1 − d SSDs changes nothing (exact for d = N − 1).
// Pure; thread-safe.
#pragma once

namespace afasim::reliability {

// Hours. REQUIRES: drives >= 1, partners > 0, mtbf_hours > 0, mttr_hours > 0.
double markov_mttdl_hours(int drives, double partners, double mtbf_hours, double mttr_hours);

}  // namespace afasim::reliability
