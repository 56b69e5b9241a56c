#include "engine/analysis/analysis_json.h"

#include <cmath>

#include "engine/analysis/line_index.h"

namespace hiera::engine::analysis {

namespace {

using nlohmann::json;

class JsonWriter {
 public:
  JsonWriter(std::string_view text, const GpuCeilings* roofline) : lines_(text), roofline_(roofline) {}

  json range(const Span& span) const {
    const Position start = lines_.position(span.begin), end = lines_.position(span.end);
    return {{"start", {{"line", start.line}, {"character", start.character}}},
            {"end", {{"line", end.line}, {"character", end.character}}}};
  }
  json optional_range(const std::optional<Span>& span) const { return span ? range(*span) : json(nullptr); }

  static json number(double v) {
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 9e15) return static_cast<std::int64_t>(v);
    return v;
  }

  json work(const Work& w) const {
    json out = {{"flops", number(w.flops)}, {"bytes", number(w.bytes)}, {"dtype", w.dtype}, {"source", w.source}};
    if (roofline_) {
      if (const auto t = roofline_time(w, *roofline_)) {
        // The speed of light itself; a launch's floor is the estimates' (engine/facade) business.
        out["time_us"] = t->speed_of_light_seconds * 1e6;
        out["bound"] = t->memory_bound ? "memory" : "compute";
      }
    }
    return out;
  }
  json optional_work(const std::optional<Work>& w) const { return w ? work(*w) : json(nullptr); }

  json function(const CudaFunction& f) const {
    json parameters = json::array();
    for (const auto& p : f.parameters) {
      parameters.push_back({{"name", p.name}, {"type", p.type}, {"range", range(p.span)}, {"pointer", p.pointer},
                            {"const", p.is_const}, {"restrict", p.restrict}});
    }
    return {{"name", f.name},
            {"kind", to_string(f.kind)},
            {"range", range(f.span)},
            {"name_range", range(f.name_span)},
            {"body_range", optional_range(f.body)},
            {"complete", f.complete},
            {"template_parameters", f.template_parameters},
            {"launch_bounds", f.launch_bounds ? json(*f.launch_bounds) : json(nullptr)},
            {"parameters", parameters},
            {"work", optional_work(f.work)}};
  }

  json launch(const LaunchSite& l) const {
    json sizing = json::array();
    for (const auto& s : l.sizing) sizing.push_back({{"name", s.name}, {"expression", s.expression}, {"range", range(s.span)}});
    return {{"kernel", l.kernel},
            {"form", to_string(l.form)},
            {"range", range(l.span)},
            {"kernel_range", range(l.kernel_span)},
            {"grid", l.grid},
            {"block", l.block},
            {"shared_bytes", l.shared_bytes},
            {"stream", l.stream},
            {"arguments", l.arguments},
            {"caller", l.caller},
            {"in_loop", l.in_loop},
            {"block_threads", l.block_threads ? json(*l.block_threads) : json(nullptr)},
            {"sizing", sizing}};
  }

  json module(const TorchModule& m) const {
    json layers = json::array();
    for (const auto& l : m.layers) {
      layers.push_back({{"name", l.name}, {"type", l.type}, {"arguments", l.arguments}, {"range", range(l.span)}});
    }
    json ops = json::array();
    Work total;
    bool any_work = false;
    for (const auto& o : m.ops) {
      ops.push_back({{"op", o.op},
                     {"call", o.call},
                     {"range", range(o.span)},
                     {"inputs", o.inputs},
                     {"in_loop", o.in_loop},
                     {"shape", o.shape ? json(*o.shape) : json(nullptr)},
                     {"dtype", o.dtype},
                     {"work", optional_work(o.work)}});
      if (o.work) {
        any_work = true;
        total.flops += o.work->flops;
        total.bytes += o.work->bytes;
        total.dtype = o.work->dtype;
        total.source = o.work->source;
      }
    }
    json out = {{"name", m.name},
                {"range", range(m.span)},
                {"name_range", range(m.name_span)},
                {"bases", m.bases},
                {"init", optional_range(m.init)},
                {"init_parameters", m.init_parameters},
                {"forward", optional_range(m.forward)},
                {"forward_parameters", m.forward_parameters},
                {"layers", layers},
                {"ops", ops},
                {"work", nullptr}};
    if (any_work) {
      // The sum over ops whose work is known; each op's time is its own roofline.
      json w = {{"flops", number(total.flops)}, {"bytes", number(total.bytes)}, {"source", total.source}};
      if (roofline_) {
        double seconds = 0;
        for (const auto& o : m.ops) {
          if (!o.work) continue;
          if (const auto t = roofline_time(*o.work, *roofline_)) seconds += t->speed_of_light_seconds;
        }
        w["time_us"] = seconds * 1e6;
      }
      out["work"] = w;
    }
    return out;
  }

  json inputs(const std::vector<ModelInput>& list) const {
    json out = json::array();
    for (const auto& i : list) {
      out.push_back({{"expression", i.expression},
                     {"range", range(i.span)},
                     {"shape", i.shape ? json(*i.shape) : json(nullptr)},
                     {"dtype", i.dtype},
                     {"value", i.value ? number(*i.value) : json(nullptr)}});
      if (!i.tensors.empty()) out.back()["tensors"] = inputs(i.tensors);  // only for a list of tensors
      if (i.values) {
        json items = json::array();
        for (const double v : *i.values) items.push_back(number(v));
        out.back()["value"] = items;
      }
    }
    return out;
  }

  json hint(const Hint& h) const {
    json fix = json::array();
    for (const auto& e : h.fix) fix.push_back({{"range", range(e.span)}, {"new_text", e.new_text}});
    return {{"rule", h.rule},
            {"severity", to_string(h.severity)},
            {"range", range(h.span)},
            {"message", h.message},
            {"explanation", h.explanation},
            {"recipe", h.recipe.empty() ? json(nullptr) : json(h.recipe)},
            {"fix", fix}};
  }

 private:
  LineIndex lines_;
  const GpuCeilings* roofline_;
};

}  // namespace

nlohmann::json to_json(const Analysis& analysis, std::string_view text, const GpuCeilings* roofline) {
  const JsonWriter w(text, roofline);
  json out = {{"language", to_string(analysis.language)}, {"position_encoding", "utf-16"}};
  out["gpu"] = roofline ? json(roofline->source) : json(nullptr);
  out["kernels"] = json::array();
  for (const auto& f : analysis.functions) out["kernels"].push_back(w.function(f));
  out["launches"] = json::array();
  for (const auto& l : analysis.launches) out["launches"].push_back(w.launch(l));
  out["modules"] = json::array();
  for (const auto& m : analysis.modules) out["modules"].push_back(w.module(m));
  out["kernelbench"] = nullptr;
  if (const auto& kb = analysis.kernelbench) {
    out["kernelbench"] = {{"model", kb->model},
                          {"get_inputs", w.optional_range(kb->get_inputs)},
                          {"get_init_inputs", w.optional_range(kb->get_init_inputs)},
                          {"inputs", w.inputs(kb->inputs)},
                          {"init_inputs", w.inputs(kb->init_inputs)}};
  }
  out["hints"] = json::array();
  for (const auto& h : analysis.hints) out["hints"].push_back(w.hint(h));
  out["problems"] = json::array();
  for (const auto& p : analysis.problems) out["problems"].push_back({{"range", w.range(p.span)}, {"message", p.message}});
  return out;
}

}  // namespace hiera::engine::analysis
