#pragma once
// Typed, validated reads of one JSON object's fields for the knowledge files:
// each read names the field in the FieldError it throws, and fields nobody
// read (typos) are rejected at the end. "notes" is free text in every object.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/knowledge/field_error.h"

namespace hiera::engine::knowledge {

class JsonFields {
 public:
  // Throws FieldError(prefix, "expected a JSON object, got ...") when value is not an object.
  // prefix is the object's own path ("" for a file's top level, "shape" for a nested one).
  JsonFields(const nlohmann::json& value, std::string prefix);

  // The path of a key in this object: "key" or "prefix.key".
  std::string path(std::string_view key) const;

  bool has(std::string_view key) const;
  // Required fields throw "missing required field" when absent.
  const nlohmann::json& required(std::string_view key);
  const nlohmann::json* optional(std::string_view key);

  std::string text(std::string_view key);                       // non-empty string
  std::optional<std::string> optional_text(std::string_view key);
  // A non-empty string, or a non-empty array of lines (blank ones allowed) joined with "\n".
  std::string text_or_lines(std::string_view key);
  std::int64_t integer(std::string_view key, std::int64_t min, std::int64_t max);
  std::optional<std::int64_t> optional_integer(std::string_view key, std::int64_t min, std::int64_t max);
  double positive_number(std::string_view key);
  // An array of non-empty strings; required ones must not be empty either.
  std::vector<std::string> texts(std::string_view key);
  std::vector<std::string> optional_texts(std::string_view key);

  // Throws for the first field (in key order) that no read asked for.
  void reject_unknown() const;

 private:
  std::vector<std::string> string_array(const nlohmann::json& value, std::string_view key, bool allow_empty_items) const;

  const nlohmann::json& object_;
  std::string prefix_;
  std::set<std::string, std::less<>> read_;
};

// "a string", "an integer", "a number", ... for messages about a JSON value.
std::string describe_json_type(const nlohmann::json& value);

}  // namespace hiera::engine::knowledge
