#include "engine/knowledge/json_fields.h"

#include <cmath>

namespace hiera::engine::knowledge {

using nlohmann::json;

std::string describe_json_type(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "null";
    case json::value_t::object: return "an object";
    case json::value_t::array: return "an array";
    case json::value_t::string: return "a string";
    case json::value_t::boolean: return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "an integer";
    case json::value_t::number_float: return "a number";
    default: return "an unsupported value";
  }
}

JsonFields::JsonFields(const json& value, std::string prefix) : object_(value), prefix_(std::move(prefix)) {
  if (!value.is_object()) throw FieldError(prefix_, "expected a JSON object, got " + describe_json_type(value));
}

std::string JsonFields::path(std::string_view key) const {
  return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
}

bool JsonFields::has(std::string_view key) const { return object_.contains(key); }

const json& JsonFields::required(std::string_view key) {
  const json* value = optional(key);
  if (value == nullptr) throw FieldError(path(key), "missing required field");
  return *value;
}

const json* JsonFields::optional(std::string_view key) {
  read_.emplace(key);
  const auto it = object_.find(key);
  return it == object_.end() ? nullptr : &*it;
}

std::string JsonFields::text(std::string_view key) {
  const json& value = required(key);
  if (!value.is_string()) throw FieldError(path(key), "expected a string, got " + describe_json_type(value));
  std::string out = value.get<std::string>();
  if (out.empty()) throw FieldError(path(key), "must not be empty");
  return out;
}

std::optional<std::string> JsonFields::optional_text(std::string_view key) {
  if (!has(key)) {
    read_.emplace(key);
    return std::nullopt;
  }
  return text(key);
}

std::string JsonFields::text_or_lines(std::string_view key) {
  const json& value = required(key);
  if (value.is_string()) return text(key);
  if (!value.is_array())
    throw FieldError(path(key), "expected a string or an array of strings, got " + describe_json_type(value));
  const std::vector<std::string> lines = string_array(value, key, true);
  if (lines.empty()) throw FieldError(path(key), "must not be empty");
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i == 0 ? "" : "\n") + lines[i];
  return out;
}

std::int64_t JsonFields::integer(std::string_view key, std::int64_t min, std::int64_t max) {
  const json& value = required(key);
  if (!value.is_number_integer()) throw FieldError(path(key), "expected an integer, got " + describe_json_type(value));
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(max))
    throw FieldError(path(key), "must be at most " + std::to_string(max) + ", got " + value.dump());
  const auto out = value.get<std::int64_t>();
  if (out < min) throw FieldError(path(key), "must be at least " + std::to_string(min) + ", got " + std::to_string(out));
  if (out > max) throw FieldError(path(key), "must be at most " + std::to_string(max) + ", got " + std::to_string(out));
  return out;
}

std::optional<std::int64_t> JsonFields::optional_integer(std::string_view key, std::int64_t min, std::int64_t max) {
  if (!has(key)) {
    read_.emplace(key);
    return std::nullopt;
  }
  return integer(key, min, max);
}

double JsonFields::positive_number(std::string_view key) {
  const json& value = required(key);
  if (!value.is_number()) throw FieldError(path(key), "expected a number, got " + describe_json_type(value));
  const auto out = value.get<double>();
  if (!(out > 0) || !std::isfinite(out)) throw FieldError(path(key), "must be a positive number, got " + value.dump());
  return out;
}

std::vector<std::string> JsonFields::string_array(const json& value, std::string_view key, bool allow_empty_items) const {
  if (!value.is_array()) throw FieldError(path(key), "expected an array of strings, got " + describe_json_type(value));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const std::string item = path(key) + "[" + std::to_string(i) + "]";
    if (!value[i].is_string()) throw FieldError(item, "expected a string, got " + describe_json_type(value[i]));
    out.push_back(value[i].get<std::string>());
    if (out.back().empty() && !allow_empty_items) throw FieldError(item, "must not be empty");
  }
  return out;
}

std::vector<std::string> JsonFields::texts(std::string_view key) {
  std::vector<std::string> out = string_array(required(key), key, false);
  if (out.empty()) throw FieldError(path(key), "must not be empty");
  return out;
}

std::vector<std::string> JsonFields::optional_texts(std::string_view key) {
  const json* value = optional(key);
  return value == nullptr ? std::vector<std::string>{} : string_array(*value, key, false);
}

void JsonFields::reject_unknown() const {
  for (const auto& [key, value] : object_.items()) {
    if (key != "notes" && !read_.contains(key)) throw FieldError(path(key), "unknown field");
  }
}

}  // namespace hiera::engine::knowledge
