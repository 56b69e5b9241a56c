#include "engine/common/secret_redactor.h"

#include <algorithm>
#include <cstdlib>

namespace hiera::engine {

void SecretRedactor::add_from_environment(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  add(name, value ? std::string(value) : std::string());
}

void SecretRedactor::add(const std::string& name, std::string value) {
  if (std::find(names_.begin(), names_.end(), name) == names_.end()) names_.push_back(name);
  secrets_.erase(std::remove_if(secrets_.begin(), secrets_.end(), [&](const Secret& s) { return s.name == name; }),
                 secrets_.end());
  if (value.size() < kMinSecretLength) return;
  secrets_.push_back(Secret{name, std::move(value)});
  std::stable_sort(secrets_.begin(), secrets_.end(),
                   [](const Secret& a, const Secret& b) { return a.value.size() > b.value.size(); });
}

std::string SecretRedactor::redact(std::string_view text) const {
  if (secrets_.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    // At each position the longest secret that starts there wins.
    const Secret* found = nullptr;
    for (const Secret& secret : secrets_) {
      if (text.compare(i, secret.value.size(), secret.value) == 0) {
        found = &secret;
        break;
      }
    }
    if (found) {
      out += "[redacted $" + found->name + "]";
      i += found->value.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

bool SecretRedactor::contains_secret(std::string_view text) const {
  return std::any_of(secrets_.begin(), secrets_.end(),
                     [&](const Secret& s) { return text.find(s.value) != std::string_view::npos; });
}

}  // namespace hiera::engine
