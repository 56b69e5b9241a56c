#include "engine/facade/configuration.h"

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "hiera/config_schema.h"

namespace hiera::engine::facade {

using nlohmann::json;
namespace fs = std::filesystem;

namespace {

void collect_unknown(const json& value, const json& schema, const std::string& path, std::vector<std::string>& out) {
  if (!schema.is_object()) return;
  if (value.is_object()) {
    const auto properties = schema.find("properties");
    const auto additional = schema.find("additionalProperties");
    const bool closed = additional != schema.end() && additional->is_boolean() && !additional->get<bool>();
    for (const auto& [key, item] : value.items()) {
      const std::string key_path = path.empty() ? key : path + "." + key;
      if (properties != schema.end() && properties->is_object() && properties->contains(key)) {
        collect_unknown(item, (*properties)[key], key_path, out);
      } else if (additional != schema.end() && additional->is_object()) {
        collect_unknown(item, *additional, key_path, out);
      } else if (closed) {
        out.push_back(key_path);
      }
    }
  } else if (value.is_array()) {
    const auto items = schema.find("items");
    if (items == schema.end()) return;
    for (std::size_t i = 0; i < value.size(); ++i) {
      collect_unknown(value[i], *items, path + "[" + std::to_string(i) + "]", out);
    }
  }
}

}  // namespace

fs::path find_configuration(const std::string& explicit_path, const fs::path& start) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("HIERA_CONFIG"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path dir = fs::absolute(start.empty() ? fs::path(".") : start, ec).lexically_normal();
  if (ec) return {};
  while (true) {
    const fs::path candidate = dir / ".hiera" / "config.json";
    if (fs::is_regular_file(candidate, ec)) return candidate;
    if (!dir.has_relative_path()) return {};  // the root, looked at
    fs::path parent = dir.parent_path();
    if (parent == dir) return {};
    dir = std::move(parent);
  }
}

LoadedConfiguration load_configuration(const std::string& explicit_path, const fs::path& start) {
  LoadedConfiguration loaded;
  loaded.file = find_configuration(explicit_path, start);
  if (loaded.file.empty()) return loaded;
  std::ifstream in(loaded.file);
  if (!in) throw std::runtime_error("cannot read the configuration " + loaded.file.string());
  try {
    loaded.json = json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error("the configuration " + loaded.file.string() + " is not valid: " + e.what());
  }
  if (!loaded.json.is_object()) {
    throw std::runtime_error("the configuration " + loaded.file.string() + " is not valid: must be a JSON object");
  }
  for (const auto& key : unknown_configuration_keys(loaded.json, configuration_schema())) {
    loaded.warnings.push_back(loaded.file.string() + ": unknown configuration key '" + key +
                              "' (ignored; the keys are in docs/config.schema.json)");
  }
  return loaded;
}

const json& configuration_schema() {
  static const json schema = json::parse(kConfigSchema);
  return schema;
}

std::vector<std::string> unknown_configuration_keys(const json& config, const json& schema) {
  std::vector<std::string> out;
  collect_unknown(config, schema, "", out);
  return out;
}

}  // namespace hiera::engine::facade
