// What a workload runs against: the simulated array (its volumes), or a bare device through
// a host NVMe queue model (workload/device_target.h). FioSession and the VDBench runner
// submit through this seam and never see which one it is.
//
// Not thread-safe: a target belongs to the model thread.
#pragma once

#include <functional>
#include <string>

#include "controller/array.h"
#include "controller/io.h"
#include "sim/status.h"

namespace afasim::workload {

class IoTarget {
 public:
  virtual ~IoTarget() = default;
  // Names the system or device in reports ("ise-860-g3", "liqid-lqd4500").
  virtual std::string name() const = 0;
  // The id of the volume (LUN) `volume` names, for HostIo::volume_id; kNotFound otherwise.
  virtual sim::Result<controller::Id> volume(const std::string& volume) const = 0;
  // Starts `io`; `done` runs once, at its completion time, in an event of its own.
  virtual void submit(const controller::HostIo& io, controller::IoCallback done) = 0;
  // `io` will be submitted later (after other I/O): the target may start loading the state it
  // will touch. Speed only: no state changes, no effect on any result.
  virtual void hint(const controller::HostIo& io) { (void)io; }
  // Whether written bytes can be read back (fio's verify=); when not, why, as a sentence
  // fragment for "FILE:LINE: verify: ...".
  virtual bool keeps_payload() const = 0;
  virtual std::string payload_refusal() const = 0;
};

// The array's volumes through controller::Array::submit.
class ArrayTarget final : public IoTarget {
 public:
  explicit ArrayTarget(controller::Array& array) : array_(array) {}
  std::string name() const override { return array_.preset().name; }
  sim::Result<controller::Id> volume(const std::string& volume) const override {
    const controller::Volume* v = array_.volume_by_name(volume);
    if (v == nullptr) return sim::not_found("no volume \"" + volume + "\" in the array");
    return v->id;
  }
  void submit(const controller::HostIo& io, controller::IoCallback done) override {
    array_.submit(io, std::move(done));
  }
  void hint(const controller::HostIo& io) override { array_.hint(io); }
  bool keeps_payload() const override {
    return array_.data_path().options().payload != datapac::PayloadKind::kNone;
  }
  std::string payload_refusal() const override {
    return "the array keeps no payload (payload none); verification needs memory or file payload";
  }

 private:
  controller::Array& array_;
};

}  // namespace afasim::workload
