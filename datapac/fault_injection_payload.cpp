#include "datapac/fault_injection_payload.h"

namespace afasim::datapac {

FaultInjectionPayloadStore::FaultInjectionPayloadStore(std::unique_ptr<PayloadStore> inner)
    : PayloadStore(inner->capacity_bytes()), inner_(std::move(inner)) {}

sim::Status FaultInjectionPayloadStore::remember(std::int64_t offset, std::int64_t length) {
  Undo u{offset, std::vector<std::uint8_t>(static_cast<std::size_t>(length))};
  AFASIM_RETURN_IF_ERROR(inner_->read(offset, u.old_bytes));
  unsynced_bytes_ += length;
  unsynced_.push_back(std::move(u));
  return sim::Status::ok();
}

sim::Status FaultInjectionPayloadStore::write(std::int64_t offset, std::span<const std::uint8_t> data) {
  if (fail_writes_ > 0) {
    --fail_writes_;
    ++writes_failed_;
    return sim::io_error("payload write at " + std::to_string(offset) + " failed (injected)");
  }
  AFASIM_RETURN_IF_ERROR(remember(offset, static_cast<std::int64_t>(data.size())));
  return inner_->write(offset, data);
}

sim::Status FaultInjectionPayloadStore::read(std::int64_t offset, std::span<std::uint8_t> out) const {
  if (fail_reads_ > 0) {
    --fail_reads_;
    ++reads_failed_;
    return sim::io_error("payload read at " + std::to_string(offset) + " failed (injected)");
  }
  return inner_->read(offset, out);
}

sim::Status FaultInjectionPayloadStore::trim(std::int64_t offset, std::int64_t length) {
  if (fail_writes_ > 0) {
    --fail_writes_;
    ++writes_failed_;
    return sim::io_error("payload trim at " + std::to_string(offset) + " failed (injected)");
  }
  AFASIM_RETURN_IF_ERROR(remember(offset, length));
  return inner_->trim(offset, length);
}

bool FaultInjectionPayloadStore::may_hold_data(std::int64_t offset, std::int64_t length) const {
  // After a drop the inner store may hold restored bytes where it had a hole: stay unsure.
  return inner_->may_hold_data(offset, length);
}

sim::Status FaultInjectionPayloadStore::flush() {
  AFASIM_RETURN_IF_ERROR(inner_->flush());
  unsynced_.clear();
  unsynced_bytes_ = 0;
  return sim::Status::ok();
}

sim::Status FaultInjectionPayloadStore::erase_all() {
  unsynced_.clear();
  unsynced_bytes_ = 0;
  return inner_->erase_all();
}

sim::Status FaultInjectionPayloadStore::drop_unsynced() {
  for (auto it = unsynced_.rbegin(); it != unsynced_.rend(); ++it)
    AFASIM_RETURN_IF_ERROR(inner_->write(it->offset_bytes, it->old_bytes));
  unsynced_.clear();
  unsynced_bytes_ = 0;
  return sim::Status::ok();
}

sim::Status FaultInjectionPayloadStore::corrupt(std::int64_t offset, std::int64_t length) {
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(length));
  AFASIM_RETURN_IF_ERROR(inner_->read(offset, bytes));
  for (auto& b : bytes) b = static_cast<std::uint8_t>(~b);
  return inner_->write(offset, bytes);
}

PayloadWrapper fault_injection_wrapper(std::function<void(const std::string&, FaultInjectionPayloadStore*)> created) {
  return [created = std::move(created)](std::unique_ptr<PayloadStore> inner, const std::string& name) {
    auto store = std::make_unique<FaultInjectionPayloadStore>(std::move(inner));
    created(name, store.get());
    return std::unique_ptr<PayloadStore>(std::move(store));
  };
}

}  // namespace afasim::datapac
