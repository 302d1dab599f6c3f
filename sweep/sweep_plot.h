// Plots of a sweep's results (docs/sweeps.md "Plots"): one figure's mean and 95 % interval per
// point, against the sweep's first field (the x axis, its values in the file's order), one
// line per combination of the other fields' values (the series). An SVG a browser shows
// as it is; the points' exact values are in each marker's tooltip (<title>).
// Pure; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/status.h"
#include "sweep/sweep_file.h"
#include "sweep/sweep_results.h"

namespace afasim::sweep {

// The SVG of `figure` (a name of figure_set(file.kind)) over `rows` (table order).
// kInvalidArgument "FIGURE: not a figure of this sweep (figures: ...)" for another name.
sim::Result<std::string> plot_svg(const SweepFile& file, const std::vector<SweepRow>& rows, std::string_view figure);

// kInvalidArgument, as plot_svg's, when `figure` is not a figure of `kind`: checked before a
// sweep runs, without building a plot.
sim::Status check_figure(SweepKind kind, std::string_view figure);

// The figure names a plot can take for `kind`, comma-separated (for messages).
std::string figure_names(SweepKind kind);

}  // namespace afasim::sweep
