#pragma once
// One clause of a task spec: a named fact about the target (a tolerance, a
// shape, a budget), where it came from, and the check that enforces it. A
// clause nothing enforces is not a contract (clause_registry.h refuses it).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace hiera::engine::spec {

enum class Family { Interface, Numerics, Invariants, Performance, Environment };

// In order of precedence: a clause from a later source replaces one from an
// earlier source (Default < Configuration < Probe < Annotation).
enum class Source { Default, Configuration, Probe, Annotation };

const char* to_string(Family family);  // "interface", "numerics", ...
const char* to_string(Source source);  // "default", "configuration", "probe", "annotation"
std::optional<Family> parse_family(std::string_view text);
std::optional<Source> parse_source(std::string_view text);

// A value a clause held before a higher source replaced it, for the report.
struct Override {
  nlohmann::json value;
  Source source = Source::Default;
  std::string origin;
  bool operator==(const Override&) const = default;
};

struct Clause {
  std::string name;  // "numerics.atol"
  Family family = Family::Interface;
  nlohmann::json value;
  Source source = Source::Default;
  // Where exactly: "default", "line 12" (or "lines 3, 4") for annotations,
  // "settings: hiera.numerics.atol" for configuration, "reference run on NVIDIA H200" for a probe.
  std::string origin;
  // The check that enforces it: a worker verification check (shape, values,
  // input_mutation, ...) or an engine acceptance gate (speedup, budget, space).
  std::string enforced_by;
  // What this clause replaced, lowest source first.
  std::vector<Override> overrides;
  bool operator==(const Clause&) const = default;
};

}  // namespace hiera::engine::spec
