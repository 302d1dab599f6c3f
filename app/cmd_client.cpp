// The client commands: `afasim volume|pool|host|mapping|qos-policy|fault|event|alert|system|
// controller ...` and `afasim metrics`, talking to a running array's ReST API (docs/cli.md).
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "app/client.h"
#include "app/commands.h"
#include "config/file_text.h"

namespace afasim::app {
namespace {

using nlohmann::json;

// One client command group: its options, the action its chosen leaf set, and how it runs.
struct Group {
  ClientOptions options;
  std::function<void(ApiClient&)> action;
};

void add_client_options(CLI::App* cmd, ClientOptions& o) {
  cmd->add_option("--url", o.url, "The array's ReST API (default $AFASIM_URL or http://127.0.0.1:8080)");
  cmd->add_option("--user", o.user, "User name (default $AFASIM_USER)");
  cmd->add_option("--password", o.password, "Password (default $AFASIM_PASSWORD)");
  cmd->add_option("--password-file", o.password_file,
                  "Read the password from this file's first line (default $AFASIM_PASSWORD_FILE; the admin's is "
                  "STATE/admin-password)");
  cmd->add_option("--token", o.token, "Bearer token (default $AFASIM_TOKEN)");
  cmd->add_option("--cacert", o.ca_cert, "CA certificate for an https:// --url (default $AFASIM_CACERT)");
  cmd->add_option("-o,--output", o.output, "table or json")->check(CLI::IsMember({"table", "json"}));
  cmd->add_flag("--bytes", o.bytes, "Sizes as exact byte counts");
  cmd->add_option("--timeout", o.timeout_seconds, "Seconds to wait for the array's whole answer")->check(finite_range_check(0.1, 3600));
}

// A leaf: sets the group's action when CLI11 selects it; the group's options fall through.
CLI::App* leaf(CLI::App* group, Group& g, const std::string& name, const std::string& help,
               std::function<void(ApiClient&)> action) {
  CLI::App* cmd = group->add_subcommand(name, help);
  cmd->fallthrough();
  cmd->callback([&g, action = std::move(action)] { g.action = action; });
  return cmd;
}

// The object `ref` (an id or a name) of `collection`, fetched.
json fetch(ApiClient& c, const std::string& collection, const std::string& noun, const std::string& ref) {
  return c.get("/" + collection + "/" + std::to_string(c.resolve(collection, noun, ref)));
}

// Sets body[key] from the QoS flag `flag`: a number, or "none" to clear it (null).
void qos_field(json& body, const char* key, const char* flag, const std::optional<std::string>& v) {
  if (!v) return;
  if (*v == "none") {
    body[key] = nullptr;
    return;
  }
  const auto n = whole_number(*v);
  if (!n)
    throw ClientError(kExitUsage, std::string(flag) + " must be a whole number or none, got " + *v);
  body[key] = *n;
}

// A size flag: digits are bytes, anything else ("100GiB", or digits beyond 64 bits) goes to
// the array as written, whose size rules then apply (docs/api.md "Sizes").
json size_value(const std::string& v) {
  if (auto n = whole_number(v)) return *n;
  return v;
}

// A controller flag: A or B (any case) as a name, 1 or 2 as an id (a JSON number: the array reads a
// string as a name, so "2" was refused; hostile review 42). Anything else: exit 2.
json controller_value(const std::string& v) {
  if (v == "A" || v == "B" || v == "a" || v == "b") return std::string(1, static_cast<char>(std::toupper(v[0])));
  if (v == "1" || v == "2") return v[0] - '0';
  throw ClientError(kExitUsage, "--controller must be A, B, 1 or 2, got \"" + v + "\"");
}

struct QosFlags {
  std::optional<std::string> min, max, burst;
  void add(CLI::App* cmd) {
    cmd->add_option("--min-iops", min, "Reserved IOPS (none to clear)");
    cmd->add_option("--max-iops", max, "IOPS limit (none to clear)");
    cmd->add_option("--burst-iops", burst, "Burst IOPS limit (none to clear)");
  }
  void into(json& body) const {
    qos_field(body, "min_iops", "--min-iops", min);
    qos_field(body, "max_iops", "--max-iops", max);
    qos_field(body, "burst_iops", "--burst-iops", burst);
  }
};

void print_created(ApiClient& c, const std::string& noun, const json& obj) {
  if (c.options().output == "table") std::cout << "created " << noun << " " << obj.value("id", 0) << "\n";
  print_object(c.options(), obj);
}

// list, show and delete, the same for every managed object.
void add_list_show_delete(CLI::App* group, Group& g, const std::string& collection, const std::string& noun,
                          std::vector<Column> columns, bool deletable = true) {
  leaf(group, g, "list", "List the " + collection, [collection, columns](ApiClient& c) {
    print_list(c.options(), c.get_all("/" + collection), columns);
  });
  auto ref = std::make_shared<std::string>();
  leaf(group, g, "show", "Show one " + noun + " (by id or name)", [collection, noun, ref](ApiClient& c) {
    print_object(c.options(), fetch(c, collection, noun, *ref));
  })->add_option("REF", *ref, "Id or name")->required();
  if (!deletable) return;
  auto del = std::make_shared<std::string>();
  leaf(group, g, "delete", "Delete one " + noun, [collection, noun, del](ApiClient& c) {
    const auto id = c.resolve(collection, noun, *del);
    c.del("/" + collection + "/" + std::to_string(id));
    if (c.options().output == "table") std::cout << "deleted " << noun << " " << id << "\n";
  })->add_option("REF", *del, "Id or name")->required();
}

void add_volume(CLI::App* group, Group& g) {
  add_list_show_delete(group, g, "volumes", "volume",
                       {{"ID", "id"}, {"NAME", "name"}, {"POOL", "pool_id"}, {"SIZE", "capacity_bytes"},
                        {"RAID", "raid_type"}, {"PROV", "provisioning"}, {"ALLOCATED", "allocated_bytes"},
                        {"STATE", "state"}, {"OWNER", "owner_controller"}, {"MIN", "effective_qos.min_iops"},
                        {"MAX", "effective_qos.max_iops"}, {"BURST", "effective_qos.burst_iops"},
                        {"IOPS", "qos_status.current_iops"}});
  struct Create {
    std::string name, size, raid, provisioning;
    // Optional, not empty-as-absent: --controller '' let the array choose (hostile review 42).
    std::optional<std::string> pool, controller, policy;
    QosFlags qos;
  };
  auto cr = std::make_shared<Create>();
  CLI::App* create = leaf(group, g, "create", "Create a volume", [cr](ApiClient& c) {
    json body = {{"name", cr->name}, {"capacity_bytes", size_value(cr->size)}};
    if (!cr->raid.empty()) body["raid_type"] = cr->raid;
    if (!cr->provisioning.empty()) body["provisioning"] = cr->provisioning;
    if (cr->controller) body["preferred_controller"] = controller_value(*cr->controller);
    if (cr->pool) body["pool_id"] = c.resolve("pools", "pool", *cr->pool);
    if (cr->policy) body["qos_policy_id"] = c.resolve("qos-policies", "QoS policy", *cr->policy);
    cr->qos.into(body);
    print_created(c, "volume", c.post("/volumes", body));
  });
  create->add_option("NAME", cr->name, "Volume name")->required();
  create->add_option("--size", cr->size, "Capacity: bytes or a size (100GiB, 2TiB)")->required();
  create->add_option("--raid", cr->raid, "RAID10 (default) or RAID5 (any case)")
      ->transform(CLI::IsMember({"RAID10", "RAID5"}, CLI::ignore_case));
  create->add_option("--provisioning", cr->provisioning, "thin (default) or fixed")
      ->check(CLI::IsMember({"thin", "fixed"}));
  create->add_option("--pool", cr->pool, "Pool id or name (default: the only pool)");
  create->add_option("--controller", cr->controller, "Preferred controller: A, B, 1 or 2");
  create->add_option("--qos-policy", cr->policy, "QoS policy id or name");
  cr->qos.add(create);

  struct Update {
    std::string ref;
    std::optional<std::string> name, size, controller, policy;
    QosFlags qos;
  };
  auto up = std::make_shared<Update>();
  CLI::App* update = leaf(group, g, "update", "Change a volume", [up](ApiClient& c) {
    json body = json::object();
    if (up->name) body["name"] = *up->name;
    if (up->size) body["capacity_bytes"] = size_value(*up->size);
    if (up->controller) body["preferred_controller"] = controller_value(*up->controller);
    up->qos.into(body);
    if (body.empty() && !up->policy) throw ClientError(kExitUsage, "volume update: nothing to change (see --help)");
    // Looked up once the flags are known good: a bad flag is exit 2 without a request.
    if (up->policy)
      body["qos_policy_id"] = *up->policy == "none" ? json(nullptr) : json(c.resolve("qos-policies", "QoS policy", *up->policy));
    const auto id = c.resolve("volumes", "volume", up->ref);
    print_object(c.options(), c.patch("/volumes/" + std::to_string(id), body));
  });
  update->add_option("REF", up->ref, "Id or name")->required();
  update->add_option("--name", up->name, "New name");
  update->add_option("--size", up->size, "New capacity (grow only)");
  update->add_option("--controller", up->controller, "Preferred controller: A, B, 1 or 2");
  update->add_option("--qos-policy", up->policy, "QoS policy id or name, or none");
  up->qos.add(update);
}

std::vector<std::int64_t> int_list(const std::string& flag, const std::string& s) {
  std::vector<std::int64_t> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    const std::string part = s.substr(i, j - i);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 9)
      throw ClientError(kExitUsage, flag + " must be numbers separated by commas, got " + s);
    out.push_back(std::stoll(part));
    i = j + 1;
  }
  return out;
}

void add_pool(CLI::App* group, Group& g) {
  add_list_show_delete(group, g, "pools", "pool",
                       {{"ID", "id"}, {"NAME", "name"}, {"DATAPACS", "datapac_ids"}, {"RAID", "raid_types"},
                        {"VOLUMES", "volume_count"}, {"PROVISIONED", "capacity.provisioned_bytes"},
                        {"ALLOCATED", "capacity.allocated_bytes"},
                        {"FREE RAID10", "capacity.free_bytes.RAID10", "free_bytes"},
                        {"FREE RAID5", "capacity.free_bytes.RAID5", "free_bytes"}});
  struct Args {
    std::string ref, name, datapacs;
    std::optional<std::string> new_name, thresholds;
  };
  auto a = std::make_shared<Args>();
  CLI::App* create = leaf(group, g, "create", "Create a pool over free DataPacs", [a](ApiClient& c) {
    json body = {{"name", a->name}, {"datapac_ids", int_list("--datapacs", a->datapacs)}};
    if (a->thresholds) body["space_thresholds_percent"] = int_list("--thresholds", *a->thresholds);
    print_created(c, "pool", c.post("/pools", body));
  });
  create->add_option("NAME", a->name, "Pool name")->required();
  create->add_option("--datapacs", a->datapacs, "DataPac ids, comma-separated (1,2)")->required();
  create->add_option("--thresholds", a->thresholds, "Space thresholds in percent (80,90,95)");
  CLI::App* update = leaf(group, g, "update", "Rename a pool or change its thresholds", [a](ApiClient& c) {
    json body = json::object();
    if (a->new_name) body["name"] = *a->new_name;
    if (a->thresholds) body["space_thresholds_percent"] = int_list("--thresholds", *a->thresholds);
    if (body.empty()) throw ClientError(kExitUsage, "pool update: nothing to change (see --help)");
    const auto id = c.resolve("pools", "pool", a->ref);
    print_object(c.options(), c.patch("/pools/" + std::to_string(id), body));
  });
  update->add_option("REF", a->ref, "Id or name")->required();
  update->add_option("--name", a->new_name, "New name");
  update->add_option("--thresholds", a->thresholds, "Space thresholds in percent (80,90,95)");
}

json initiators(const std::vector<std::string>& specs) {
  json out = json::array();
  for (const auto& s : specs) {
    const auto colon = s.find(':');
    if (colon == std::string::npos || colon == 0)
      throw ClientError(kExitUsage, "--initiator must be TYPE:ADDRESS (fc:21:00:..., iscsi:iqn..., nbd:127.0.0.1), got " + s);
    out.push_back({{"type", s.substr(0, colon)}, {"address", s.substr(colon + 1)}});
  }
  return out;
}

void add_host(CLI::App* group, Group& g) {
  add_list_show_delete(group, g, "hosts", "host",
                       {{"ID", "id"}, {"NAME", "name"}, {"INITIATORS", "initiators"},
                        {"MAPPINGS", "mapping_count"}, {"DESCRIPTION", "description"}});
  struct Args {
    std::string ref, name;
    std::optional<std::string> new_name, description;
    std::vector<std::string> initiators;
    bool no_initiators = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* create = leaf(group, g, "create", "Create a host", [a](ApiClient& c) {
    json body = {{"name", a->name}, {"initiators", initiators(a->initiators)}};
    if (a->description) body["description"] = *a->description;
    print_created(c, "host", c.post("/hosts", body));
  });
  create->add_option("NAME", a->name, "Host name")->required();
  create->add_option("--description", a->description, "Free text");
  create->add_option("--initiator", a->initiators, "TYPE:ADDRESS, repeatable (fc, iscsi, nbd)");
  CLI::App* update = leaf(group, g, "update", "Change a host", [a](ApiClient& c) {
    json body = json::object();
    if (a->new_name) body["name"] = *a->new_name;
    if (a->description) body["description"] = *a->description;
    if (a->no_initiators && !a->initiators.empty())
      throw ClientError(kExitUsage, "host update: --no-initiators and --initiator both given: choose one");
    if (!a->initiators.empty()) body["initiators"] = initiators(a->initiators);
    if (a->no_initiators) body["initiators"] = json::array();
    if (body.empty()) throw ClientError(kExitUsage, "host update: nothing to change (see --help)");
    const auto id = c.resolve("hosts", "host", a->ref);
    print_object(c.options(), c.patch("/hosts/" + std::to_string(id), body));
  });
  update->add_option("REF", a->ref, "Id or name")->required();
  update->add_option("--name", a->new_name, "New name");
  update->add_option("--description", a->description, "Free text");
  update->add_option("--initiator", a->initiators, "TYPE:ADDRESS, repeatable: replaces the list");
  // The list could not be emptied: --initiator '' is not TYPE:ADDRESS (hostile review 42).
  update->add_flag("--no-initiators", a->no_initiators, "Empty the host's initiator list");
}

void add_mapping(CLI::App* group, Group& g) {
  add_list_show_delete(group, g, "mappings", "mapping",
                       {{"ID", "id"}, {"VOLUME", "volume_id"}, {"HOST", "host_id"}, {"LUN", "lun"}, {"ACCESS", "access"}});
  struct Args {
    std::string volume, host;
    std::optional<std::int64_t> lun;
    bool read_only = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* create = leaf(group, g, "create", "Map a volume to a host", [a](ApiClient& c) {
    json body = {{"volume_id", c.resolve("volumes", "volume", a->volume)}, {"host_id", c.resolve("hosts", "host", a->host)}};
    if (a->lun) body["lun"] = *a->lun;
    if (a->read_only) body["access"] = "read_only";
    print_created(c, "mapping", c.post("/mappings", body));
  });
  create->add_option("--volume", a->volume, "Volume id or name")->required();
  create->add_option("--host", a->host, "Host id or name")->required();
  create->add_option("--lun", a->lun, "LUN (default: the host's lowest free one)")->check(count_check(0, 16383));
  create->add_flag("--read-only", a->read_only, "Map read-only");
}

void add_qos_policy(CLI::App* group, Group& g) {
  add_list_show_delete(group, g, "qos-policies", "QoS policy",
                       {{"ID", "id"}, {"NAME", "name"}, {"MIN", "min_iops"}, {"MAX", "max_iops"},
                        {"BURST", "burst_iops"}, {"VOLUMES", "volume_count"}});
  struct Args {
    std::string ref, name;
    std::optional<std::string> new_name;
    QosFlags qos;
  };
  auto a = std::make_shared<Args>();
  CLI::App* create = leaf(group, g, "create", "Create a QoS policy", [a](ApiClient& c) {
    json body = {{"name", a->name}};
    a->qos.into(body);
    print_created(c, "QoS policy", c.post("/qos-policies", body));
  });
  create->add_option("NAME", a->name, "Policy name")->required();
  a->qos.add(create);
  auto b = std::make_shared<Args>();
  CLI::App* update = leaf(group, g, "update", "Change a QoS policy", [b](ApiClient& c) {
    json body = json::object();
    if (b->new_name) body["name"] = *b->new_name;
    b->qos.into(body);
    if (body.empty()) throw ClientError(kExitUsage, "qos-policy update: nothing to change (see --help)");
    const auto id = c.resolve("qos-policies", "QoS policy", b->ref);
    print_object(c.options(), c.patch("/qos-policies/" + std::to_string(id), body));
  });
  update->add_option("REF", b->ref, "Id or name")->required();
  update->add_option("--name", b->new_name, "New name");
  b->qos.add(update);
}

// The fault that undoes `type` (fault clear), or "" when none does.
std::string inverse_fault(const std::string& type) {
  static const std::map<std::string, std::string> kInverse = {
      {"drive_fail", "drive_replace"},         {"drive_pull", "drive_replace"},
      {"drive_slow", "drive_restore_speed"},   {"controller_fail", "controller_restore"},
      {"link_cut", "link_restore"},            {"power_loss", "power_restore"},
      {"supercap_degrade", "supercap_restore"}};
  const auto it = kInverse.find(type);
  return it == kInverse.end() ? "" : it->second;
}

void add_fault(CLI::App* group, Group& g) {
  add_list_show_delete(group, g, "faults", "fault",
                       {{"ID", "id"}, {"TIME", "time_ns"}, {"TYPE", "type"}, {"DRIVE", "drive"},
                        {"CONTROLLER", "controller"}, {"RESULT", "result"}},
                       false);
  struct Args {
    std::string type;
    std::optional<std::int64_t> drive, id;
    std::optional<std::string> controller;
    std::optional<double> multiplier;
  };
  auto a = std::make_shared<Args>();
  CLI::App* inject = leaf(group, g, "inject", "Inject a fault now", [a](ApiClient& c) {
    json body = {{"type", a->type}};
    if (a->drive) body["drive"] = *a->drive;
    if (a->controller) body["controller"] = controller_value(*a->controller);
    if (a->multiplier) body["latency_multiplier"] = *a->multiplier;
    print_created(c, "fault", c.post("/faults", body));
  });
  inject->add_option("TYPE", a->type, "drive_fail, drive_pull, drive_replace, drive_slow, drive_restore_speed, "
                                      "corrupt_block, controller_fail, controller_restore, link_cut, link_restore, power_loss, "
                                      "power_restore, supercap_degrade, supercap_restore")
      ->required();
  inject->add_option("--drive", a->drive, "Drive id (drive faults)")->check(count_check(1, INT64_MAX));
  inject->add_option("--controller", a->controller, "Controller: A, B, 1 or 2 (controller faults)");
  // Checked here: JSON has no NaN or infinity, and nlohmann_json writes them as null, which
  // the array read as a missing field.
  inject->add_option("--multiplier", a->multiplier, "Latency multiplier (drive_slow)")
      ->check(finite_range_check(1, 1000));
  CLI::App* clear = leaf(group, g, "clear", "Undo a fault by injecting its opposite", [a](ApiClient& c) {
    const json f = c.get("/faults/" + std::to_string(*a->id));
    const std::string type = f["type"].get<std::string>();
    const std::string undo = inverse_fault(type);
    if (undo.empty())
      throw ClientError(kExitRefused,
                        "refused: fault " + std::to_string(*a->id) + " (" + type + ") " +
                            (type == "corrupt_block" ? "has no opposite fault: a write over the block, or the "
                                                       "scrub's or a read's repair, makes it readable again"
                                                     : "is itself a recovery; nothing undoes it"));
    json body = {{"type", undo}};
    if (f.contains("drive")) body["drive"] = f["drive"];
    if (f.contains("controller")) body["controller"] = f["controller"];
    print_created(c, "fault", c.post("/faults", body));
  });
  clear->add_option("ID", a->id, "The fault's id")->required()->check(count_check(1, INT64_MAX));
}

// One line of `event list --follow`, in fixed columns under its header (a new user's tour:
// the lines had no header and their columns wandered).
void print_event_columns(const std::string& id, const std::string& time, const std::string& severity,
                         const std::string& kind, const std::string& object, const std::string& message) {
  std::cout << std::left << std::setw(7) << id << ' ' << std::right << std::setw(14) << time << "  " << std::left
            << std::setw(8) << severity << "  " << std::setw(10) << kind << "  " << std::setw(14) << object << "  "
            << message << std::endl;
}

void print_event_line(const json& e) {
  char t[32];
  std::snprintf(t, sizeof t, "%.3f s", static_cast<double>(e["time_ns"].get<std::int64_t>()) / 1e9);
  const std::string object = e["object"].get<std::string>();
  print_event_columns(std::to_string(e["id"].get<std::int64_t>()), t, e["severity"].get<std::string>(),
                      e["category"].get<std::string>(), object.empty() ? "-" : object, e["message"].get<std::string>());
}

void add_event(CLI::App* group, Group& g) {
  struct Args {
    std::optional<double> since_s;
    std::optional<std::string> severity, kind, object;
    std::optional<std::int64_t> after;
    std::int64_t limit = 50;
    bool follow = false;
  };
  auto a = std::make_shared<Args>();
  CLI::App* list = leaf(group, g, "list", "The event log, newest first; --follow streams new events", [a](ApiClient& c) {
    std::string q;
    auto add = [&q](const std::string& k, const std::string& v) {
      q += (q.empty() ? "?" : "&") + k + "=" + httplib::detail::encode_query_param(v);
    };
    if (a->since_s) add("since", std::to_string(static_cast<std::int64_t>(*a->since_s * 1e9)));
    if (a->severity) add("severity", *a->severity);
    if (a->kind) add("kind", *a->kind);
    if (a->object) add("object", *a->object);
    const std::string filters = q;
    if (a->after) add("after", std::to_string(*a->after));
    add("limit", std::to_string(a->limit));
    const json page = c.get("/events" + q);
    if (!a->follow) {
      print_list(c.options(), page, {{"ID", "id"}, {"TIME", "time_ns"}, {"SEVERITY", "severity"},
                                     {"KIND", "category"}, {"OBJECT", "object"}, {"MESSAGE", "message"}});
      return;
    }
    // --follow: the page oldest first (an --after page is; the newest page is turned), then
    // the stream from where it ended.
    json items = page["items"];
    if (!a->after) std::reverse(items.begin(), items.end());
    if (c.options().output != "json") print_event_columns("ID", "TIME", "SEVERITY", "KIND", "OBJECT", "MESSAGE");
    for (const json& e : items) {
      if (c.options().output == "json") std::cout << e.dump() << std::endl;
      else print_event_line(e);
    }
    std::int64_t last = page["next_after"].get<std::int64_t>();
    for (;;) {
      const std::int64_t before = last;
      last = c.stream("/events/stream" + filters, last, [&c](std::int64_t, const std::string& data) {
        const json e = json::parse(data, nullptr, false);
        if (c.options().output == "json") std::cout << data << std::endl;
        else if (!e.is_discarded()) print_event_line(e);
        return true;
      });
      // The stream ended (the server closed it): reconnect where it stopped, at once after a
      // piece of a long backlog, after a pause when it brought nothing (as an EventSource's
      // retry: a server that ends every stream is not asked again and again).
      if (last == before) std::this_thread::sleep_for(std::chrono::seconds(2));
    }
  });
  // Bounded so that since_s * 1e9 fits the API's int64 nanoseconds: NaN, infinity or 1e300
  // were cast to an integer (undefined; the array got since=-9223372036854775808).
  list->add_option("--since", a->since_s, "Events at or after this simulated time, seconds")
      ->check(finite_range_check(0, 9e9));
  list->add_option("--severity", a->severity, "At least: info, warning, error, critical")
      ->check(CLI::IsMember({"info", "warning", "error", "critical"}));
  list->add_option("--kind", a->kind, "Categories, comma-separated (drive,rebuild,alert,...)");
  list->add_option("--object", a->object, "volume/7, or volume/ for every volume");
  list->add_option("--after", a->after, "Events after this id, oldest first")->check(count_check(0, INT64_MAX));
  list->add_option("--limit", a->limit, "At most this many (0-1000)")->check(count_check(0, 1000));
  list->add_flag("-f,--follow", a->follow, "Then print new events as they happen (Ctrl-C stops)");
}

void add_alert(CLI::App* group, Group& g) {
  leaf(group, g, "list", "The alerts active now", [](ApiClient& c) {
    print_list(c.options(), c.get_all("/alerts"),
               {{"KIND", "kind"}, {"OBJECT", "object"}, {"SEVERITY", "severity"}, {"RAISED", "raised_time_ns"},
                {"MESSAGE", "message"}});
  });
}

void add_system(CLI::App* group, Group& g) {
  leaf(group, g, "show", "The array: model, state, power, capacity, counts", [](ApiClient& c) {
    json s = c.get("/system");
    if (c.options().output == "json") {
      print_object(c.options(), s);
      return;
    }
    // The wear block is long (per-drive figures live under datapacs): its summary only.
    json brief = s;
    brief.erase("wear");
    brief["wear"] = {{"max_percent_endurance_used", s["wear"]["max_percent_endurance_used"]},
                     {"projected_life_s", s["wear"]["projected_life_s"]}};
    print_object(c.options(), brief);
  });
}

void add_controller(CLI::App* group, Group& g) {
  leaf(group, g, "list", "Both controllers", [](ApiClient& c) {
    print_list(c.options(), c.get("/controllers"),
               {{"ID", "id"}, {"NAME", "name"}, {"STATE", "state"}, {"CACHE", "cache_mode"},
                {"DIRTY", "dirty_bytes"}, {"CACHED", "cached_bytes"}, {"MIRRORED", "mirrored_bytes"},
                {"VOLUMES", "owned_volumes"}});
  });
  auto ref = std::make_shared<std::string>();
  leaf(group, g, "show", "One controller (1, 2, A or B)", [ref](ApiClient& c) {
    std::string id = *ref;
    if (id == "A" || id == "a") id = "1";
    if (id == "B" || id == "b") id = "2";
    print_object(c.options(), c.get("/controllers/" + id));
  })->add_option("REF", *ref, "1, 2, A or B")->required();
}

// Runs the group's chosen action with its client, turning errors into exit codes.
int run_group(Group& g, const std::string& name) {
  try {
    resolve_client_options(g.options);
    ApiClient client(g.options);
    if (!g.action) throw ClientError(kExitUsage, name + ": a subcommand is required (--help lists them)");
    g.action(client);
    return kExitOk;
  } catch (const ClientError& e) {
    // The array's messages may quote what was sent (a name with an escape sequence): printed
    // escaped, as every CLI error is (round 24).
    std::cerr << "afasim " << name << ": " << config::printable(e.what()) << "\n";
    return e.code;
  } catch (const nlohmann::json::exception&) {
    std::cerr << "afasim " << name << ": unexpected answer: the JSON is not what an afasim array of this version "
              << "sends (is " << g.options.url << " one?)\n";
    return kExitFailure;
  }
}

}  // namespace

void add_client_commands(CLI::App& app, std::map<std::string, Runner>& runners) {
  struct Spec {
    const char* name;
    const char* help;
    void (*add)(CLI::App*, Group&);
  };
  static const Spec kGroups[] = {
      {"volume", "Volumes of a running array: list, show, create, update, delete", add_volume},
      {"pool", "Pools: list, show, create, update, delete", add_pool},
      {"host", "Hosts: list, show, create, update, delete", add_host},
      {"mapping", "Mappings of volumes to hosts: list, show, create, delete", add_mapping},
      {"qos-policy", "QoS policies: list, show, create, update, delete", add_qos_policy},
      {"fault", "Faults: list, show, inject, clear", add_fault},
      {"event", "The event log: list [--follow]", add_event},
      {"alert", "Active alerts: list", add_alert},
      {"system", "The array: show", add_system},
      {"controller", "The controllers: list, show", add_controller},
  };
  for (const Spec& spec : kGroups) {
    auto g = std::make_shared<Group>();
    CLI::App* cmd = app.add_subcommand(spec.name, spec.help);
    add_client_options(cmd, g->options);
    cmd->require_subcommand(1);
    spec.add(cmd, *g);
    runners[spec.name] = [g, name = std::string(spec.name)] { return run_group(*g, name); };
  }
  auto metrics = std::make_shared<Group>();
  CLI::App* cmd = app.add_subcommand("metrics", "GET /metrics of a running array (Prometheus text format)");
  add_client_options(cmd, metrics->options);
  metrics->action = [](ApiClient& c) {
    // The Prometheus text format as the array writes it; there is no table or JSON of it.
    if (c.options().output == "json")
      throw ClientError(kExitUsage, "metrics: -o json: the metrics are Prometheus text, printed as they are (leave -o out)");
    std::cout << c.get_text("/metrics", "text/plain");
  };
  runners["metrics"] = [metrics] { return run_group(*metrics, "metrics"); };
}

}  // namespace afasim::app
