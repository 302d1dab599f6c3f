// api::Auth's users and sessions (api/auth.h): made, changed and ended under Impl::mu; a new
// password or a deletion ends the user's sessions.
#include <algorithm>
#include <mutex>

#include "api/auth_impl.h"

namespace afasim::api {

std::vector<User> Auth::users() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::vector<User> out;
  for (const auto& s : impl_->users) out.push_back(s.user);
  return out;
}

sim::Result<User> Auth::user(std::int64_t id) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  for (const auto& s : impl_->users)
    if (s.user.id == id) return s.user;
  return sim::not_found("no user " + std::to_string(id));
}

sim::Result<User> Auth::create_user(const std::string& name, Role role, const std::string& password) {
  AFASIM_RETURN_IF_ERROR(check_name(name));
  AFASIM_RETURN_IF_ERROR(check_password_rules(password));
  const std::string hash = impl_->hash_password(password);  // outside the lock: it is slow
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (impl_->find(std::string_view(name)) != nullptr)
    return sim::conflict("a user named \"" + name + "\" exists");
  // Names are matched exactly at login, but two that differ only in case read as one user in
  // the audit log and the event stream: a new one may not (hostile round 24).
  for (const auto& other : impl_->users)
    if (http::iequals(other.user.name, name))
      return sim::conflict("a user named \"" + other.user.name + "\" exists; \"" + name +
                           "\" differs from it only in case");
  impl_->users.push_back({User{impl_->next_user_id++, name, role, now_unix_s()}, hash});
  if (sim::Status st = impl_->save(); !st.is_ok()) {
    impl_->users.pop_back();
    return st;
  }
  return impl_->users.back().user;
}

sim::Result<User> Auth::update_user(std::int64_t id, std::optional<Role> role,
                                    const std::optional<std::string>& password, const std::string* proof) {
  if (password) AFASIM_RETURN_IF_ERROR(check_password_rules(*password));
  const std::string hash = password ? impl_->hash_password(*password) : "";
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Stored* s = impl_->find(id);
  if (s == nullptr) return sim::not_found("no user " + std::to_string(id));
  if (role && *role != Role::kAdmin && s->user.role == Role::kAdmin && impl_->admins() == 1)
    return sim::conflict("user \"" + s->user.name + "\" is the last admin");
  if (proof != nullptr && !impl_->proves(s->user.name, *proof))
    return sim::conflict("the password of user \"" + s->user.name +
                         "\" changed after the current one was checked: nothing changed");
  const Impl::Stored before = *s;
  if (role) s->user.role = *role;
  if (password) {
    s->hash = hash;
    impl_->verified.erase(s->user.name);
  }
  if (sim::Status st = impl_->save(); !st.is_ok()) {
    *s = before;
    return st;
  }
  // A new password ends the user's sessions: resetting it is how a stolen token is shut out.
  if (password) std::erase_if(impl_->sessions, [&](const Impl::Live& l) { return l.session.user == s->user.name; });
  if (password) ++impl_->generation;
  return s->user;
}

sim::Status Auth::delete_user(std::int64_t id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  Impl::Stored* s = impl_->find(id);
  if (s == nullptr) return sim::not_found("no user " + std::to_string(id));
  if (s->user.role == Role::kAdmin && impl_->admins() == 1)
    return sim::conflict("user \"" + s->user.name + "\" is the last admin");
  const auto before = impl_->users;
  const std::string name = s->user.name;
  std::erase_if(impl_->users, [id](const Impl::Stored& u) { return u.user.id == id; });
  if (sim::Status st = impl_->save(); !st.is_ok()) {
    impl_->users = before;
    return st;
  }
  impl_->verified.erase(name);
  std::erase_if(impl_->sessions, [&](const Impl::Live& l) { return l.session.user == name; });
  ++impl_->generation;
  return sim::Status::ok();
}

sim::Result<std::pair<Session, std::string>> Auth::create_session(const std::string& user, const std::string& proof) {
  const std::string token = "afs_" + base64url(random_bytes(32));
  std::lock_guard<std::mutex> lock(impl_->mu);
  const Impl::Stored* s = impl_->find(std::string_view(user));
  if (s == nullptr) return sim::not_found("no user \"" + user + "\"");
  if (!impl_->proves(user, proof))
    return sim::precondition_failed("the password of user \"" + user +
                                    "\" changed after it was checked: log in with the new one");
  const std::int64_t now = now_unix_s();
  std::erase_if(impl_->sessions, [now](const Impl::Live& l) { return l.session.expires_unix_s <= now; });
  const auto own = std::count_if(impl_->sessions.begin(), impl_->sessions.end(),
                                 [&user](const Impl::Live& l) { return l.session.user == user; });
  if (own >= impl_->options.max_sessions_per_user)
    return sim::conflict(
        "user \"" + user + "\" has " + std::to_string(own) +
        " sessions open, the most one user may; delete one (DELETE /api/v1/sessions/{id})");
  if (static_cast<int>(impl_->sessions.size()) >= impl_->options.max_sessions)
    return sim::conflict(std::to_string(impl_->options.max_sessions) +
                         " sessions are open; delete one (DELETE /api/v1/sessions/{id})");
  Session session{impl_->next_session_id++, user, s->user.role, now,
                  now + impl_->options.session_ttl.count()};
  impl_->sessions.push_back({session, sha256(token)});
  return std::make_pair(session, token);
}

std::vector<Session> Auth::sessions() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const std::int64_t now = now_unix_s();
  std::vector<Session> out;
  for (const auto& l : impl_->sessions)
    if (l.session.expires_unix_s > now) out.push_back(l.session);
  return out;
}

sim::Status Auth::delete_session(std::int64_t id) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const auto n = std::erase_if(impl_->sessions, [id](const Impl::Live& l) { return l.session.id == id; });
  if (n == 0) return sim::not_found("no session " + std::to_string(id));
  ++impl_->generation;
  return sim::Status::ok();
}

}  // namespace afasim::api
