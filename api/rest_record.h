// Recording and replaying the ReST side of a serve session (docs/record-replay.md).
//
// While a serve::Recorder is active, every handler's trip onto the model thread
// (Endpoints::on_model) records the call as a "rest" request: the method, the route, the id
// segment, the target with its query, the headers the handlers read (Content-Type,
// If-Match) and the body; and its answer as a "rest.reply" outcome (status, revision,
// Location, a digest of the body) or a "rest.error" outcome (status and detail). A replay
// runs the same handler again with that request; its model work then happens inline.
//
// Each handler makes exactly one on_model call, so one request record is one call.
//
// A change of the users (/api/v1/users, Redfish's AccountService) changes api::Auth, outside
// the model: what enters the model is only its event (category "user"), through
// log_user_event, recorded as a "user.event" request. The users file and passwords are not
// part of the session, so a password never reaches the record.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <type_traits>

#include "api/problem.h"
#include "api/views.h"
#include "serve/model_thread.h"
#include "serve/session_record.h"

namespace afasim::api {

struct Call;
struct Reply;
struct Route;

// The request the current worker thread is serving, for on_model to record. The router
// holds one for the duration of a handler (thread-local).
class CallScope {
 public:
  CallScope(const Route& route, const Call& call);
  ~CallScope();
  CallScope(const CallScope&) = delete;
  CallScope& operator=(const CallScope&) = delete;
  static const CallScope* current();
  // Model thread: records the call as a "rest" request.
  void record() const;

 private:
  const Route& route_;
  const Call& call_;
  const CallScope* outer_;
};

// Model thread: records a reply or an error of the call `scope` recorded.
void record_reply(const Reply& reply);
void record_error(int status, const std::string& detail);

// Runs `fn` (a handler's model work) and records the call and its answer when a recorder is
// active and a call is in scope.
template <typename F>
auto recorded(const CallScope* scope, F& fn) -> std::invoke_result_t<F&> {
  if (scope == nullptr || serve::Recorder::active() == nullptr) return fn();
  scope->record();
  try {
    using R = std::invoke_result_t<F&>;
    if constexpr (std::is_same_v<R, Reply>) {
      R reply = fn();
      record_reply(reply);
      return reply;
    } else {
      return fn();
    }
  } catch (const ApiError& e) {
    record_error(e.status(), e.detail());
    throw;
  }
}

// Model thread: logs the event (severity info, category "user") of a change of the users
// made by `actor`, and records it as a "user.event" request (actor, object, message) when a
// session is recorded. The message names the user and role, never a password.
void log_user_event(controller::Array& array, const std::string& actor, const std::string& object,
                    const std::string& message);

using ReplayHandler = std::function<void(std::string_view payload)>;

// The "rest" and "user.event" handlers for `afasim replay`: "rest" builds the Endpoints over
// `array` and `inline_model` (a serve::ModelThread in Inline mode) and runs each recorded
// call's handler; "user.event" logs the recorded event again. REQUIRES: both outlive the
// handlers.
std::map<std::string, ReplayHandler> rest_replay_handlers(controller::Array& array, serve::ModelThread& inline_model,
                                                          SystemIdentity identity);

}  // namespace afasim::api
