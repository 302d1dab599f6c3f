// Internal to nbd/: the NBD target's session-record hooks (nbd_replay.h says what they
// record). Each does nothing unless a serve::Recorder is active. Model thread only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nbd/nbd_connection.h"

namespace afasim::nbd::detail {

// Records the batch `start_requests` is about to run for connection `connection_id`.
void record_batch(std::uint64_t connection_id, const ExportInfo& e, const std::vector<std::unique_ptr<Request>>& batch);
// Records a finished request (called as it is delivered to its mailbox).
void record_done(const Request& r);
// Logs an NBD event on the array (connect, disconnect), recording it first; `limiter` may
// leave it out (it is recorded either way: a replay's limiter decides the same).
void log_nbd_event(controller::Array& array, ConnectionEventLimiter& limiter, const std::string& object,
                   const std::string& message);

}  // namespace afasim::nbd::detail
