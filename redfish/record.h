// Recording and replaying the Redfish side of a serve session (docs/record-replay.md).
//
// While a serve::Recorder is active, every Redfish change that reaches the model (the
// service's change(): POST, PATCH and DELETE of Volumes, EndpointGroups and Connections)
// records the request as a "redfish" request: the method, the path, the caller's user (the
// events it causes name it), the headers the handlers read (Content-Type, If-Match) and the
// body; and its answer as a "redfish.reply" outcome (status, body length and digest: the
// Location is the body's @odata.id) or a "redfish.error" outcome (status, Base message id,
// message). A replay runs the same route's handler again with that request; its model work
// then happens inline.
//
// A Redfish request is not recorded as a "rest" one: its handlers read Redfish bodies and
// answer in Redfish's shape, which no /api/v1 route does, so only running the Redfish route
// again reproduces its answer (a refused PropertyUnknown included) byte for byte.
//
// Not recorded here: reads (GET changes nothing in the model), sessions and event
// subscriptions (they live outside the model), and AccountService changes, which change
// api::Auth and enter the model only as their event: api::log_user_event records that as a
// "user.event" (api/rest_record.h), so the password in their body is never recorded.
//
// Model thread only.
#pragma once

#include <map>
#include <string>

#include "api/rest_record.h"
#include "controller/array.h"
#include "http/message.h"
#include "redfish/internal.h"
#include "redfish/service.h"
#include "serve/model_thread.h"
#include "serve/session_record.h"

namespace afasim::redfish {

// Records `r` as a "redfish" request.
void record_request(const http::Request& r);
// Records the answer `body` (null for none) of the change recorded last, as "redfish.reply".
void record_reply(int status, const json& body);
// Records a refused change as "redfish.error".
void record_error(const RedfishError& e);

// Runs `fn` (a change's model work, returning the answer's body) and records the request and
// its answer (`status` on success) when a recorder is active.
template <typename F>
json recorded_change(const http::Request& r, int status, F&& fn) {
  if (serve::Recorder::active() == nullptr) return fn();
  record_request(r);
  try {
    json body = fn();
    record_reply(status, body);
    return body;
  } catch (const RedfishError& e) {
    record_error(e);
    throw;
  }
}

// The "redfish" handler for `afasim replay`: builds a Service over `array` and `inline_model`
// (a serve::ModelThread in Inline mode; `options` as the session's, without auth and events)
// and runs each recorded change's route. REQUIRES: both outlive the handler.
std::map<std::string, api::ReplayHandler> redfish_replay_handlers(controller::Array& array,
                                                                  serve::ModelThread& inline_model,
                                                                  ServiceOptions options);

}  // namespace afasim::redfish
