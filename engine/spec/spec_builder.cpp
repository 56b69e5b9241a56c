#include "engine/spec/spec_builder.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <string_view>
#include <utility>

#include "engine/common/default_tolerance.h"
#include "engine/common/size_expression.h"
#include "engine/spec/annotations.h"
#include "engine/spec/kernel_signature.h"
#include "engine/spec/spec_error.h"

namespace hiera::engine::spec {

using nlohmann::json;

std::string SpecProblem::to_string() const {
  if (line == 0) return message;
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message;
}

std::string target_symbol(const std::string& target) {
  const auto scope = target.find("::");
  return scope == std::string::npos ? target : target.substr(scope + 2);
}

namespace {

class Builder {
 public:
  explicit Builder(const SpecInputs& inputs) : inputs_(inputs) {
    result_.spec.target = inputs.target;
    result_.spec.kind = inputs.kind;
  }

  SpecBuildResult build() {
    defaults();
    configuration();
    if (inputs_.probe) probe(*inputs_.probe);
    annotations();
    derive_second_sizes();
    if (inputs_.kind == TargetKind::Cuda) launch_contract();
    consistency();
    return std::move(result_);
  }

 private:
  TaskSpec& spec() { return result_.spec; }
  void problem(std::string message, int line = 0, int column = 0) {
    result_.problems.push_back({line, column, std::move(message)});
  }

  void defaults() {
    const bool cuda = inputs_.kind == TargetKind::Cuda;
    const json tolerance = {{"float32", engine::default_tolerance("float32")},
                             {"float16", engine::default_tolerance("float16")},
                             {"bfloat16", engine::default_tolerance("bfloat16")}};
    const std::vector<std::pair<const char*, json>> values = {
        {"numerics.atol", tolerance},
        {"numerics.rtol", tolerance},
        {"numerics.allow", json::array()},
        {"numerics.deterministic", true},
        {"numerics.nan_inf", "propagate"},
        {"invariants.no_input_mutation", true},
        {"invariants.stateless", true},
        {"interface.inplace", json::array()},
        {"performance.target_speedup", 1.0},
        // A CUDA target is a kernel with a launch: its candidates are kernels.
        {"environment.spaces", cuda ? json{"S3"} : json{"S1", "S2", "S3"}},
        {"environment.libraries", cuda ? json{"cuda"} : json{"torch"}},
        {"environment.compile_budget_s", 60},
        // The optimizer's own defaults (engine/optimize/optimizer.h kDefaultBudget,
        // kDefaultTimeLimitS; a unit test keeps them equal), documented once in README.md.
        {"environment.candidate_budget", 24},
        {"environment.time_budget_s", 1800},
    };
    for (const auto& [name, value] : values) spec().apply(name, value, Source::Default, "default");
  }

  void set(const std::string& name, const json& value, Source source, const std::string& origin,
           const std::string& where) {
    try {
      spec().apply(name, value, source, origin);
    } catch (const SpecError& e) {
      problem(where + ": " + e.what());
    }
  }

  void configuration() {
    const json& settings = inputs_.configuration;
    if (settings.is_null()) return;
    if (!settings.is_object()) {
      problem("settings: the hiera settings must be an object");
      return;
    }
    for (const auto& [key, value] : settings.items()) {
      const std::string path = "hiera." + key;
      if (value.is_null()) continue;
      if (key == "numerics" || key == "invariants" || key == "interface" || key == "performance" ||
          key == "environment") {
        if (!value.is_object()) {
          problem("settings: " + path + " must be an object");
          continue;
        }
        for (const auto& [name, item] : value.items()) {
          if (item.is_null()) continue;
          set(key + "." + name, item, Source::Configuration, "settings: " + path + "." + name,
              "settings: " + path + "." + name);
        }
      } else if (key == "budget") {
        budget(value);
      } else if (key == "spaces" || key == "libraries") {
        set("environment." + key, value, Source::Configuration, "settings: " + path, "settings: " + path);
      } else if (key == "target_speedup") {
        set("performance.target_speedup", value, Source::Configuration, "settings: " + path, "settings: " + path);
      }
    }
  }

  void budget(const json& value) {
    if (!value.is_object()) {
      problem("settings: hiera.budget must be an object");
      return;
    }
    const auto minutes = value.find("minutes");
    const auto seconds = value.find("time_s");
    if (minutes != value.end() && !minutes->is_null() && seconds != value.end() && !seconds->is_null()) {
      problem("settings: hiera.budget.minutes and hiera.budget.time_s both set the time budget: keep one");
      return;
    }
    for (const auto& [key, item] : value.items()) {
      const std::string path = "hiera.budget." + key;
      if (item.is_null()) continue;
      if (key == "candidates") {
        set("environment.candidate_budget", item, Source::Configuration, "settings: " + path, "settings: " + path);
      } else if (key == "minutes") {
        if (!item.is_number() || !std::isfinite(item.get<double>()) || item.get<double>() <= 0.0) {
          problem("settings: " + path + ": must be a positive number, got " + item.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
          continue;
        }
        const double s = item.get<double>() * 60.0;
        const json time = s == std::trunc(s) ? json(static_cast<std::int64_t>(s)) : json(s);
        set("environment.time_budget_s", time, Source::Configuration, "settings: " + path, "settings: " + path);
      } else if (key == "time_s") {
        set("environment.time_budget_s", item, Source::Configuration, "settings: " + path, "settings: " + path);
      } else if (key == "compile_s") {
        set("environment.compile_budget_s", item, Source::Configuration, "settings: " + path, "settings: " + path);
      } else {
        problem("settings: unknown key '" + path + "' (candidates, minutes, time_s, compile_s)");
      }
    }
  }

  void probe(const json& facts) {
    if (!facts.is_object()) {
      problem("probe: the reference's facts must be an object");
      return;
    }
    std::string origin = "reference run";
    if (const auto device = facts.find("device"); device != facts.end() && device->is_string()) {
      origin += " on " + device->get<std::string>();
    }
    // The facts that are one clause each, as they are.
    static constexpr std::pair<std::string_view, const char*> kFactClauses[] = {
        {"inputs", "interface.inputs"},
        {"sizes", "interface.sizes"},
        {"reference_ms", "performance.reference_ms"},
        {"regions", "performance.regions"},
        {"speed_of_light_ms", "performance.speed_of_light_ms"},
        {"deterministic", "numerics.deterministic"},
        {"inplace", "interface.inplace"},
    };
    for (const auto& [key, value] : facts.items()) {
      const std::string where = "probe: " + key;
      const auto clause = std::find_if(std::begin(kFactClauses), std::end(kFactClauses),
                                       [&key = key](const auto& fact) { return fact.first == key; });
      if (clause != std::end(kFactClauses)) {
        set(clause->second, value, Source::Probe, origin, where);
      } else if (key == "device") {
        if (!value.is_string()) problem(where + ": must be a string");
      } else if (key == "outputs") {
        // One fact, three clauses: each is enforced by its own check (count, shape, dtype).
        if (!value.is_array() || value.empty() || !std::all_of(value.begin(), value.end(), [](const json& o) {
              return o.is_object() && o.contains("shape") && o.contains("dtype");
            })) {
          problem(where + ": must be a non-empty list of {\"shape\": [dims], \"dtype\": name}");
          continue;
        }
        json shapes = json::array();
        json dtypes = json::array();
        for (const json& output : value) {
          shapes.push_back(output["shape"]);
          dtypes.push_back(output["dtype"]);
        }
        set("interface.outputs", static_cast<std::int64_t>(value.size()), Source::Probe, origin, where);
        set("interface.shapes", shapes, Source::Probe, origin, where);
        set("interface.dtypes", dtypes, Source::Probe, origin, where);
      } else if (key == "nan_inf") {
        if (!value.is_boolean()) problem(where + ": must be true or false");
        else reference_nan_inf_ = value.get<bool>();
      } else {
        problem("probe: unknown fact '" + key +
                "' (device, inputs, outputs, sizes, reference_ms, regions, speed_of_light_ms, deterministic, "
                "inplace, nan_inf)");
      }
    }
  }

  void annotations() {
    const Annotations parsed =
        parse_annotations(inputs_.source, inputs_.kind == TargetKind::Cuda ? SourceLanguage::Cuda : SourceLanguage::Python,
                          inputs_.first_line, inputs_.last_line);
    for (const AnnotationError& e : parsed.errors) problem(e.message, e.line, e.column);
    for (const AnnotatedClause& clause : parsed.clauses) {
      try {
        spec().apply(clause.name, clause.value, Source::Annotation, clause.origin());
      } catch (const SpecError& e) {
        problem(e.what(), clause.line, clause.column);
      }
    }
  }

  // A shape range with no second size given: try the largest odd size in the
  // range other than the first (odd sizes catch unhandled tails).
  void derive_second_sizes() {
    const Clause* range = spec().find("interface.shape_range");
    if (!range || spec().find("invariants.shape_generality")) return;
    const SizeMap sizes = spec().sizes();
    const bool sizes_known = inputs_.kind == TargetKind::Cuda || spec().find("interface.sizes");
    json second = json::object();
    for (const auto& [name, bounds] : spec().shape_ranges()) {
      const auto first = sizes.find(name);
      if (sizes_known && first == sizes.end()) continue;  // reported by consistency()
      const std::int64_t primary = first == sizes.end() ? 0 : first->second;
      std::optional<std::int64_t> pick;
      for (std::int64_t v = bounds.second % 2 ? bounds.second : bounds.second - 1; v >= bounds.first && !pick; v -= 2) {
        if (v != primary) pick = v;
      }
      for (std::int64_t v = bounds.second; v >= bounds.first && !pick; --v) {
        if (v != primary) pick = v;
      }
      if (pick) second[name] = *pick;
    }
    if (second.empty()) return;
    const Source source = range->source;
    const std::string origin = "derived from interface.shape_range (" + range->origin + ")";
    set("invariants.shape_generality", second, source, origin, "contract");
  }

  void launch_contract() {
    const std::vector<KernelArg> args = spec().args();
    const SizeMap sizes = spec().sizes();
    if (args.empty()) {
      problem("launch contract: no arguments: annotate each kernel parameter, in order, e.g. "
              "'// hiera: arg x input float32[N]'");
    } else if (std::none_of(args.begin(), args.end(), [](const KernelArg& a) { return a.is_compared(); })) {
      problem("launch contract: no output argument (an arg with role output or inout)");
    }
    const auto launch = spec().launch();
    if (!launch) problem("launch contract: no launch geometry: '// hiera: launch grid=(N+255)/256 block=256'");

    // Every size name the contract uses must be given.
    std::vector<std::pair<std::string, std::string>> uses;  // (expression, who uses it)
    for (const KernelArg& arg : args) {
      uses.emplace_back(arg.is_array() ? arg.extent : arg.value, "arg " + arg.name);
    }
    if (launch) {
      for (std::size_t i = 0; i < 3; ++i) {
        uses.emplace_back(launch->grid[i], "launch grid");
        uses.emplace_back(launch->block[i], "launch block");
      }
      uses.emplace_back(launch->shared_bytes, "launch smem");
    }
    for (const char* work : {"performance.flops", "performance.bytes"}) {
      if (const Clause* c = spec().find(work); c && c->value.is_string()) {
        uses.emplace_back(c->value.get<std::string>(), std::string(work).substr(12));
      }
    }
    std::set<std::string> reported;
    for (const auto& [expression, user] : uses) {
      std::set<std::string> names;
      try {
        names = size_expression_names(expression);
      } catch (const SizeExpressionError&) {
        continue;  // a number (a scalar's value)
      }
      for (const std::string& name : names) {
        if (sizes.count(name) || !reported.insert(name).second) continue;
        problem("launch contract: size '" + name + "' is not given (used by " + user + "): '// hiera: size " +
                name + "=...'");
      }
    }

    if (!args.empty()) {
      const std::string kernel = target_symbol(inputs_.target);
      if (const auto parameters = kernel_parameters(inputs_.source, kernel)) {
        std::vector<std::string> annotated;
        for (const KernelArg& arg : args) annotated.push_back(arg.name);
        if (annotated != *parameters) {
          auto join = [](const std::vector<std::string>& names) {
            std::string out;
            for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
            return "(" + out + ")";
          };
          problem("launch contract: the arg annotations give " + join(annotated) + " but kernel " + kernel +
                  " takes " + join(*parameters));
        }
      }
    }
  }

  void consistency() {
    const bool cuda = inputs_.kind == TargetKind::Cuda;
    const SizeMap sizes = spec().sizes();
    const bool sizes_known = cuda || spec().find("interface.sizes");
    const auto ranges = spec().shape_ranges();
    auto known_sizes = [&] {
      std::string out;
      for (const auto& [name, unused] : sizes) out += (out.empty() ? "" : ", ") + name;
      return out.empty() ? std::string("none") : out;
    };
    for (const auto& [name, bounds] : ranges) {
      const auto it = sizes.find(name);
      const std::string range = std::to_string(bounds.first) + ".." + std::to_string(bounds.second);
      if (it == sizes.end()) {
        if (sizes_known) problem("contract: shape range '" + name + "' names no size (sizes: " + known_sizes() + ")");
      } else if (it->second < bounds.first || it->second > bounds.second) {
        problem("contract: size " + name + "=" + std::to_string(it->second) + " is outside its range " + range);
      }
    }
    for (const auto& [name, size] : spec().second_sizes()) {
      if (sizes_known && !sizes.count(name)) {
        problem("contract: second size '" + name + "' names no size (sizes: " + known_sizes() + ")");
        continue;
      }
      const auto range = ranges.find(name);
      if (range != ranges.end() && (size < range->second.first || size > range->second.second)) {
        problem("contract: second size " + name + "=" + std::to_string(size) + " is outside its range " +
                std::to_string(range->second.first) + ".." + std::to_string(range->second.second));
      }
    }
    const std::vector<KernelArg> args = spec().args();
    auto role_of = [&](const std::string& name) -> std::optional<ArgRole> {
      for (const KernelArg& arg : args) {
        if (arg.name == name) return arg.role;
      }
      return std::nullopt;
    };
    if (cuda) {
      for (const std::string& name : spec().inplace()) {
        if (role_of(name) != ArgRole::Input) {
          problem("contract: inplace names '" + name + "', which is not an input argument");
        }
      }
    }
    if (const Clause* compared = spec().find("interface.outputs_compared")) {
      const Clause* count = spec().find("interface.outputs");
      for (const json& output : compared->value) {
        if (cuda) {
          const auto role = output.is_string() ? role_of(output.get<std::string>()) : std::nullopt;
          if (!role || (*role != ArgRole::Output && *role != ArgRole::InOut)) {
            problem("contract: outputs names " + output.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + ", which is not an output argument");
          }
        } else if (!output.is_number_integer()) {
          problem("contract: outputs of a PyTorch module are output indices, got " + output.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        } else if (count && output.get<std::int64_t>() >= count->value.get<std::int64_t>()) {
          problem("contract: outputs names output " + output.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " but forward returns " +
                  count->value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + " output(s)");
        }
      }
    }
    if (reference_nan_inf_ && spec().nan_inf() == "forbid") {
      problem("contract: nan_inf is forbid but the reference itself produces NaN/Inf");
    }
  }

  const SpecInputs& inputs_;
  SpecBuildResult result_;
  bool reference_nan_inf_ = false;
};

}  // namespace

SpecBuildResult build_spec(const SpecInputs& inputs) { return Builder(inputs).build(); }

}  // namespace hiera::engine::spec
