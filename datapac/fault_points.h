// The fault points of datapac/ (sim/buggify.h): what can go wrong in an SSD or on a link
// that a simulation test may switch on. Each is one call at its site, so that the SSD model
// and the link can be rewritten around it. Off (and free but for one branch) in normal runs.
//
//   ssd.slow_op     an SSD command takes 10-100 times its NAND operation longer (firmware garbage
//                   collection stall, an internal read retry): the "slow SSD" of a few ops
//   ssd.delay       an SSD command completes 0.1-20 ms late (a rare firmware delay)
//   ssd.read_error  a read of the payload fails with an unrecoverable read error (a media
//                   error the drive reports; the data is still there on a retry)
//   link.drop       a frame on a link (SAS lane, host port, inter-controller link) is lost
//                   and resent after kLinkRetransmitNs: the transfer ends that much later
//
// Sources: the ranges are assumptions, chosen to cover what field reports of enterprise SSDs
// describe (tail latencies of tens of ms under GC; read-retry slowdowns of 10-100x) without
// reaching the slow-SSD fault's range (docs/faults.md), which models a drive that stays slow.
#pragma once

#include <string>

#include "sim/buggify.h"
#include "sim/status.h"
#include "sim/time.h"

namespace afasim::datapac {

// The completion time of an SSD command that would end at `done`; `unloaded_ns` is the
// NAND operation behind the command (tR for a read: a read retry senses again; tPROG for a
// write: a stall behind garbage collection's programs). A slow op takes 10-100 times
// that: the factor scales the command's own service, not the queueing in front of it (a
// write that waited 2 s for buffer room is not 200 s late because its firmware stalled).
inline sim::Time ssd_op_fault(sim::Time done, sim::Time unloaded_ns) {
  if (AFASIM_BUGGIFY("ssd.slow_op")) done += unloaded_ns * (sim::Buggify::between(10, 100) - 1);
  if (AFASIM_BUGGIFY("ssd.delay")) done += sim::Buggify::between(100'000, 20'000'000);
  return done;
}

// An unrecoverable read error of SSD `name`, or ok.
inline sim::Status ssd_read_fault(const std::string& name) {
  if (AFASIM_BUGGIFY("ssd.read_error"))
    return sim::io_error("SSD " + name + ": unrecoverable read error (fault point ssd.read_error)");
  return sim::Status::ok();
}

using sim::kLinkRetransmitNs;  // link.drop lives in sim/buggify.h: both timing models' links use it
using sim::link_drop_fault;

}  // namespace afasim::datapac
