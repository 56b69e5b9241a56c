#include "engine/spec/task_spec.h"

#include <algorithm>

#include "engine/spec/clause_registry.h"
#include "engine/spec/spec_error.h"

namespace hiera::engine::spec {

using nlohmann::json;

namespace {

std::size_t registry_index(std::string_view name) {
  const auto& registry = clause_registry();
  for (std::size_t i = 0; i < registry.size(); ++i) {
    if (registry[i].name == name) return i;
  }
  return registry.size();
}

bool is_tolerance(std::string_view name) { return name == "numerics.atol" || name == "numerics.rtol"; }

// A tolerance as an object of dtype to number ("*": every other dtype).
json tolerance_object(const json& value) { return value.is_object() ? value : json{{"*", value}}; }

// {"*": x} alone is written x.
json canonical_tolerance(json value) {
  if (value.is_object() && value.size() == 1 && value.contains("*")) return json(value["*"]);
  return value;
}

void insert_override(std::vector<Override>& overrides, Override entry) {
  const auto at = std::find_if(overrides.begin(), overrides.end(),
                               [&](const Override& o) { return o.source > entry.source; });
  overrides.insert(at, std::move(entry));
}

std::vector<std::string> strings(const Clause* clause) {
  std::vector<std::string> out;
  if (clause) {
    for (const auto& item : clause->value) out.push_back(item.get<std::string>());
  }
  return out;
}

SizeMap size_map(const Clause* clause) {
  SizeMap out;
  if (clause) {
    for (const auto& [name, size] : clause->value.items()) out[name] = size.get<std::int64_t>();
  }
  return out;
}

std::optional<double> number(const Clause* clause) {
  if (!clause) return std::nullopt;
  return clause->value.get<double>();
}

std::optional<double> tolerance(const Clause* clause, std::string_view dtype) {
  if (!clause) return std::nullopt;
  if (clause->value.is_number()) return clause->value.get<double>();
  if (const auto it = clause->value.find(std::string(dtype)); it != clause->value.end()) return it->get<double>();
  if (const auto it = clause->value.find("*"); it != clause->value.end()) return it->get<double>();
  return std::nullopt;
}

const json& field(const json& object, const char* name, const std::string& where) {
  const auto it = object.find(name);
  if (it == object.end()) throw SpecError(where + ": '" + name + "' is missing");
  return *it;
}

std::string string_field(const json& object, const char* name, const std::string& where) {
  const json& value = field(object, name, where);
  if (!value.is_string()) throw SpecError(where + ": '" + name + "' must be a string");
  return value.get<std::string>();
}

Source source_field(const json& object, const std::string& where) {
  const auto source = parse_source(string_field(object, "source", where));
  if (!source) throw SpecError(where + ": source must be default, configuration, probe or annotation");
  return *source;
}

std::string describe(Source source, const std::string& origin) {
  if (origin.empty() || origin == to_string(source)) return to_string(source);
  return std::string(to_string(source)) + " (" + origin + ")";
}

std::string cell(const json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() > 100) text = text.substr(0, 97) + "...";
  std::string out = "`";
  for (char c : text) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out + "`";
}

}  // namespace

const Clause* TaskSpec::find(std::string_view name) const {
  for (const auto& clause : clauses) {
    if (clause.name == name) return &clause;
  }
  return nullptr;
}

const Clause& TaskSpec::apply(const std::string& name, json value, Source source, std::string origin) {
  const ClauseInfo& info = check_clause(name, value, kind);
  auto existing = std::find_if(clauses.begin(), clauses.end(), [&](const Clause& c) { return c.name == name; });
  if (existing == clauses.end()) {
    Clause clause{name, info.family, std::move(value), source, std::move(origin), std::string(info.enforced_by), {}};
    if (is_tolerance(name)) clause.value = canonical_tolerance(std::move(clause.value));
    const auto at = std::find_if(clauses.begin(), clauses.end(), [&](const Clause& c) {
      return registry_index(c.name) > registry_index(name);
    });
    return *clauses.insert(at, std::move(clause));
  }
  if (source < existing->source) {
    insert_override(existing->overrides, {std::move(value), source, std::move(origin)});
    return *existing;
  }
  if (is_tolerance(name) && value.is_object() && !value.contains("*")) {
    json merged = tolerance_object(existing->value);
    for (const auto& [dtype, number] : value.items()) merged[dtype] = number;
    value = std::move(merged);
  }
  if (is_tolerance(name)) value = canonical_tolerance(std::move(value));
  insert_override(existing->overrides, {existing->value, existing->source, existing->origin});
  existing->value = std::move(value);
  existing->source = source;
  existing->origin = std::move(origin);
  return *existing;
}

std::optional<double> TaskSpec::atol(std::string_view dtype) const { return tolerance(find("numerics.atol"), dtype); }
std::optional<double> TaskSpec::rtol(std::string_view dtype) const { return tolerance(find("numerics.rtol"), dtype); }
std::vector<std::string> TaskSpec::allowed_precisions() const { return strings(find("numerics.allow")); }

bool TaskSpec::deterministic() const {
  const Clause* clause = find("numerics.deterministic");
  return !clause || clause->value.get<bool>();
}

std::string TaskSpec::nan_inf() const {
  const Clause* clause = find("numerics.nan_inf");
  return clause ? clause->value.get<std::string>() : "propagate";
}

bool TaskSpec::no_input_mutation() const {
  const Clause* clause = find("invariants.no_input_mutation");
  return !clause || clause->value.get<bool>();
}

bool TaskSpec::stateless() const {
  const Clause* clause = find("invariants.stateless");
  return !clause || clause->value.get<bool>();
}

std::vector<std::string> TaskSpec::inplace() const { return strings(find("interface.inplace")); }
SizeMap TaskSpec::sizes() const { return size_map(find("interface.sizes")); }
SizeMap TaskSpec::second_sizes() const { return size_map(find("invariants.shape_generality")); }

std::map<std::string, std::pair<std::int64_t, std::int64_t>> TaskSpec::shape_ranges() const {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> out;
  if (const Clause* clause = find("interface.shape_range")) {
    for (const auto& [name, range] : clause->value.items()) {
      out[name] = {range[0].get<std::int64_t>(), range[1].get<std::int64_t>()};
    }
  }
  return out;
}

std::vector<KernelArg> TaskSpec::args() const {
  std::vector<KernelArg> out;
  if (const Clause* clause = find("interface.args")) {
    for (const auto& arg : clause->value) out.push_back(KernelArg::from_json(arg));
  }
  return out;
}

std::optional<Launch> TaskSpec::launch() const {
  const Clause* clause = find("interface.launch");
  if (!clause) return std::nullopt;
  return Launch::from_json(clause->value);
}

std::vector<std::string> TaskSpec::output_dtypes() const {
  std::vector<std::string> out;
  if (kind == TargetKind::Cuda) {
    for (const KernelArg& arg : args()) {
      if (arg.is_compared()) out.push_back(arg.type);
    }
  } else {
    out = strings(find("interface.dtypes"));
  }
  return out;
}

std::vector<std::string> TaskSpec::spaces() const { return strings(find("environment.spaces")); }
std::vector<std::string> TaskSpec::libraries() const { return strings(find("environment.libraries")); }
std::optional<double> TaskSpec::target_speedup() const { return number(find("performance.target_speedup")); }

std::optional<std::int64_t> TaskSpec::candidate_budget() const {
  const Clause* clause = find("environment.candidate_budget");
  if (!clause) return std::nullopt;
  return clause->value.get<std::int64_t>();
}

std::optional<double> TaskSpec::time_budget_s() const { return number(find("environment.time_budget_s")); }
std::optional<double> TaskSpec::compile_budget_s() const { return number(find("environment.compile_budget_s")); }
std::optional<double> TaskSpec::reference_ms() const { return number(find("performance.reference_ms")); }
std::optional<double> TaskSpec::speed_of_light_ms() const { return number(find("performance.speed_of_light_ms")); }

json TaskSpec::to_json() const {
  json out = {{"target", target}, {"kind", to_string(kind)}, {"clauses", json::array()}};
  for (const Clause& clause : clauses) {
    json entry = {{"name", clause.name},
                  {"family", to_string(clause.family)},
                  {"value", clause.value},
                  {"source", to_string(clause.source)},
                  {"origin", clause.origin},
                  {"enforced_by", clause.enforced_by}};
    if (!clause.overrides.empty()) {
      json overrides = json::array();
      for (const Override& o : clause.overrides) {
        overrides.push_back({{"value", o.value}, {"source", to_string(o.source)}, {"origin", o.origin}});
      }
      entry["overrides"] = std::move(overrides);
    }
    out["clauses"].push_back(std::move(entry));
  }
  return out;
}

TaskSpec TaskSpec::from_json(const json& value) {
  if (!value.is_object()) throw SpecError("task spec: must be an object");
  TaskSpec spec;
  spec.target = string_field(value, "target", "task spec");
  const auto kind = parse_target_kind(string_field(value, "kind", "task spec"));
  if (!kind) throw SpecError("task spec: kind must be cuda or pytorch");
  spec.kind = *kind;
  const json& clauses = field(value, "clauses", "task spec");
  if (!clauses.is_array()) throw SpecError("task spec: 'clauses' must be an array");
  for (const json& entry : clauses) {
    if (!entry.is_object()) throw SpecError("task spec: each clause must be an object");
    const std::string name = string_field(entry, "name", "task spec clause");
    const std::string where = "clause '" + name + "'";
    const ClauseInfo& info = check_clause(name, field(entry, "value", where), spec.kind);
    if (string_field(entry, "family", where) != to_string(info.family)) {
      throw SpecError(where + ": family must be " + to_string(info.family));
    }
    if (string_field(entry, "enforced_by", where) != info.enforced_by) {
      throw SpecError(where + ": enforced_by must be " + std::string(info.enforced_by));
    }
    if (spec.find(name)) throw SpecError(where + " appears twice");
    Clause clause{name, info.family, entry["value"], source_field(entry, where), string_field(entry, "origin", where),
                  std::string(info.enforced_by), {}};
    if (const auto overrides = entry.find("overrides"); overrides != entry.end()) {
      if (!overrides->is_array()) throw SpecError(where + ": 'overrides' must be an array");
      for (const json& o : *overrides) {
        if (!o.is_object()) throw SpecError(where + ": each override must be an object");
        clause.overrides.push_back(
            {field(o, "value", where + " override"), source_field(o, where + " override"), string_field(o, "origin", where + " override")});
      }
    }
    const auto at = std::find_if(spec.clauses.begin(), spec.clauses.end(), [&](const Clause& c) {
      return registry_index(c.name) > registry_index(name);
    });
    spec.clauses.insert(at, std::move(clause));
  }
  return spec;
}

std::string TaskSpec::to_markdown() const {
  std::string out = "**Task spec** `" + target + "` (" + to_string(kind) + ")\n\n";
  out += "| family | clause | value | source | enforced by |\n|---|---|---|---|---|\n";
  std::optional<Family> family;
  for (const Clause& clause : clauses) {
    const std::string family_cell = family == clause.family ? "" : to_string(clause.family);
    family = clause.family;
    out += "| " + family_cell + " | `" + clause.name + "` | " + cell(clause.value) + " | " +
           describe(clause.source, clause.origin) + " | " + clause.enforced_by + " |\n";
  }
  std::string notes;
  for (const Clause& clause : clauses) {
    if (clause.overrides.empty()) continue;
    notes += "- `" + clause.name + "`: " + describe(clause.source, clause.origin) + " overrides";
    for (std::size_t i = 0; i < clause.overrides.size(); ++i) {
      const Override& o = clause.overrides[clause.overrides.size() - 1 - i];  // the nearest first
      notes += std::string(i ? "," : "") + " " + cell(o.value) + " from " + describe(o.source, o.origin);
    }
    notes += "\n";
  }
  if (!notes.empty()) out += "\nOverrides:\n\n" + notes;
  return out;
}

}  // namespace hiera::engine::spec
