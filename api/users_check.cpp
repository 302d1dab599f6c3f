// api::role_name and api::parse_role, the roles' names in users files and answers; the rules
// for a user's name and password (auth_internal::check_name, check_password_rules); and
// api::users_file_problem: the consistency of a users file read at start (hostile round 16: two
// users with one id, a next_id that handed out an existing id, a duplicate "admin" that shadowed
// the real one, no admin at all were all loaded without a word).
#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "api/auth.h"
#include "api/auth_internal.h"

namespace afasim::api {

sim::Status auth_internal::check_name(const std::string& name) {
  const bool ok = !name.empty() && name.size() <= 64 &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                           c == '.';
                  });
  if (!ok) return sim::invalid_argument("a user name is 1 to 64 letters, digits, '-', '_' or '.'");
  return sim::Status::ok();
}

sim::Status auth_internal::check_password_rules(const std::string& password) {
  if (password.size() < kPasswordMinBytes || password.size() > kPasswordMaxBytes)
    return sim::invalid_argument("a password is " + std::to_string(kPasswordMinBytes) + " to " +
                                 std::to_string(kPasswordMaxBytes) + " bytes long");
  return sim::Status::ok();
}

const char* role_name(Role r) {
  switch (r) {
    case Role::kMonitor:
      return "monitor";
    case Role::kOperator:
      return "operator";
    case Role::kAdmin:
      return "admin";
  }
  return "monitor";
}

std::optional<Role> parse_role(std::string_view name) {
  if (name == "monitor") return Role::kMonitor;
  if (name == "operator") return Role::kOperator;
  if (name == "admin") return Role::kAdmin;
  return std::nullopt;
}

std::string users_file_problem(const std::vector<User>& users, std::int64_t next_id) {
  std::map<std::int64_t, std::string> ids;
  std::map<std::string, std::int64_t> names;
  std::int64_t largest = 0;
  bool admin = false;
  for (const User& u : users) {
    if (u.id < 1) return "user " + u.name + " has id " + std::to_string(u.id) + ": ids start at 1";
    if (const auto [it, fresh] = ids.emplace(u.id, u.name); !fresh)
      return "user id " + std::to_string(u.id) + " appears twice (users " + it->second + " and " + u.name + ")";
    if (!names.emplace(u.name, u.id).second) return "user name " + u.name + " appears twice";
    largest = std::max(largest, u.id);
    admin = admin || u.role == Role::kAdmin;
  }
  if (next_id <= largest)
    return "next_id " + std::to_string(next_id) + " is not above the largest user id " + std::to_string(largest) +
           " (a new user would get an id in use)";
  if (!admin)
    return users.empty() ? "holds no users: move it aside to have a new admin made at the next start"
                         : "no user has the admin role, so no one could administer the array: give one the role "
                           "admin, or move the file aside to have a new admin made";
  return "";
}

}  // namespace afasim::api
