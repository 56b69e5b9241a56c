#pragma once
// The user's hiera settings: initializationOptions first, then whatever the
// client answers to workspace/configuration for section "hiera".
#include <mutex>

#include <nlohmann/json.hpp>

namespace hiera::server {

class Settings {
 public:
  // Replaces keys present in `update` (a JSON object; anything else is ignored).
  void merge(const nlohmann::json& update);
  nlohmann::json snapshot() const;
  // The value at a JSON pointer such as "/hints/enabled", or fallback.
  nlohmann::json get(const std::string& pointer, nlohmann::json fallback = nullptr) const;

 private:
  mutable std::mutex mutex_;
  nlohmann::json values_ = nlohmann::json::object();
};

}  // namespace hiera::server
