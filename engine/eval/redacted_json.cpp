#include "engine/eval/redacted_json.h"

#include <string>
#include <utility>
#include <vector>

namespace hiera::engine::eval {

void redact_strings(nlohmann::json& value, const SecretRedactor& secrets) {
  if (secrets.empty()) return;
  if (value.is_string()) {
    std::string& text = value.get_ref<std::string&>();
    if (secrets.contains_secret(text)) text = secrets.redact(text);
  } else if (value.is_array()) {
    for (auto& item : value) redact_strings(item, secrets);
  } else if (value.is_object()) {
    // Keys cannot be changed in place: an object with a secret in a key is rebuilt.
    bool secret_key = false;
    for (auto it = value.begin(); it != value.end(); ++it) {
      secret_key = secret_key || secrets.contains_secret(it.key());
      redact_strings(it.value(), secrets);
    }
    if (!secret_key) return;
    nlohmann::json rebuilt = nlohmann::json::object();
    for (auto it = value.begin(); it != value.end(); ++it) rebuilt[secrets.redact(it.key())] = std::move(it.value());
    value = std::move(rebuilt);
  }
}

}  // namespace hiera::engine::eval
