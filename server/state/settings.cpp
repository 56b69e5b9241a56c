#include "server/state/settings.h"

namespace hiera::server {

void Settings::merge(const nlohmann::json& update) {
  if (!update.is_object()) return;
  std::lock_guard lock(mutex_);
  values_.merge_patch(update);
}

nlohmann::json Settings::snapshot() const {
  std::lock_guard lock(mutex_);
  return values_;
}

nlohmann::json Settings::get(const std::string& pointer, nlohmann::json fallback) const {
  std::lock_guard lock(mutex_);
  try {
    const nlohmann::json::json_pointer ptr(pointer);
    if (values_.contains(ptr)) return values_.at(ptr);
  } catch (const nlohmann::json::exception&) {
    // A malformed pointer is a programming error in a caller; answer the fallback.
  }
  return fallback;
}

}  // namespace hiera::server
