#pragma once
// The configuration file (.hiera/config.json) as every front end finds,
// reads and checks it: `--config`, else $HIERA_CONFIG, else the first
// .hiera/config.json in the start directory (the target file's for `hiera
// optimize`, the current one for `hiera bench` and `hiera doctor`) or in a
// directory above it, up to the root, the way git finds .git. Its keys are
// checked against the schema shipped as docs/config.schema.json (embedded at
// build time): the schema is the one list of the keys the code reads, and
// every other key is named in a warning.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hiera::engine::facade {

struct LoadedConfiguration {
  nlohmann::json json = nlohmann::json::object();  // {} when no file was found
  std::filesystem::path file;                       // empty: none found, the defaults apply
  // One per key the schema does not list:
  // "<file>: unknown configuration key 'llm.endpoints[0].url' (ignored; the keys are in docs/config.schema.json)".
  std::vector<std::string> warnings;
};

// The file to read: `explicit_path` when not empty, else $HIERA_CONFIG when
// set and not empty, else the first `.hiera/config.json` found walking up from
// `start` (made absolute) to the root; empty when there is none.
std::filesystem::path find_configuration(const std::string& explicit_path, const std::filesystem::path& start);

// find_configuration, then the file read and its keys checked. Throws
// std::runtime_error naming the file: unreadable (an explicit or $HIERA_CONFIG
// path that does not exist included), not JSON, not a JSON object.
LoadedConfiguration load_configuration(const std::string& explicit_path, const std::filesystem::path& start);

// The schema (docs/config.schema.json), parsed once.
const nlohmann::json& configuration_schema();

// The keys of `config` that `schema` does not list, as dotted paths
// ("worker.cmd", "llm.endpoints[1].url"): wherever the schema gives an
// object's `properties` and `"additionalProperties": false`, every other key
// is unknown; `items` are followed into arrays.
std::vector<std::string> unknown_configuration_keys(const nlohmann::json& config, const nlohmann::json& schema);

}  // namespace hiera::engine::facade
