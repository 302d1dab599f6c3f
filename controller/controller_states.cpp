#include "controller/controller_states.h"

namespace afasim::controller {

std::string_view to_string(ControllerTrigger t) {
  switch (t) {
    case ControllerTrigger::kPowerRestore: return "power_restore";
    case ControllerTrigger::kBootComplete: return "boot_complete";
    case ControllerTrigger::kSyncComplete: return "sync_complete";
    case ControllerTrigger::kLinkRestore: return "link_restore";
    case ControllerTrigger::kControllerFail: return "controller_fail";
    case ControllerTrigger::kControllerRestore: return "controller_restore";
    case ControllerTrigger::kPowerLoss: return "power_loss";
    case ControllerTrigger::kVaultComplete: return "vault_complete";
    case ControllerTrigger::kVaultFailed: return "vault_failed";
  }
  return "?";
}

std::optional<ControllerState> next_state(ControllerState from, ControllerTrigger trigger) {
  for (const auto& t : kTransitions)
    if (t.from == from && t.trigger == trigger) return t.to;
  return std::nullopt;
}

}  // namespace afasim::controller
