#include "engine/propose/recipes/module_emitter.h"

#include <cctype>

#include <algorithm>
#include <map>
#include <set>

#include "engine/propose/recipes/graph_queries.h"
#include "engine/propose/recipes/python_text.h"

namespace hiera::engine::propose::recipes {

namespace {

// One statement group of forward: a node's own `name = code`, or the
// statements of the replacement that produces it.
struct Item {
  std::string defines;
  std::vector<std::string> lines;
  std::set<std::string> reads;  // node names
  bool side_effect = false;     // writes in place: kept even when its value is unused
  const Replacement* replacement = nullptr;
  std::size_t position = 0;  // index in graph.nodes
  bool live = false;
};

std::string describe(const Replacement& r) { return "'" + r.description + "' (" + r.recipe + ")"; }

// A forward parameter as the signature writes it, and the placeholder it becomes.
struct Param {
  std::string declaration;  // "x", "mask=None", "*args"
  std::string pass;         // how forward hands it on: "x", "*args"
};

std::vector<Param> forward_params(const graph::OpGraph& graph) {
  std::vector<Param> out;
  for (const auto& node : graph.nodes) {
    if (node.op != "placeholder") continue;
    const std::string target = node.target.empty() ? node.name : node.target;
    Param p{target, target};
    if (!node.args.empty() && target[0] != '*') p.declaration += "=" + python_arg(node.args[0]);
    out.push_back(p);
  }
  if (!graph.captured()) {
    for (const auto& name : graph.forward_params) out.push_back({name, name});
    if (out.empty()) out.push_back({"*inputs", "*inputs"});
  }
  return out;
}

std::string bare(const std::string& target) {
  std::size_t i = 0;
  while (i < target.size() && target[i] == '*') ++i;
  return target.substr(i);
}

std::string join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? separator : "") + parts[i];
  return out;
}

// A kernel name as part of a Python identifier (extern "C" names already are).
std::string python_identifier(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return out;
}

const char* const kKernelHelpers = R"(_KERNELS = {}
_SM_COUNT = {}


def _kernel(name):
    """The kernel `name`, compiled with NVRTC on first use on each device and cached."""
    key = (name, torch.cuda.current_device())
    if key not in _KERNELS:
        _KERNELS[key] = _KERNEL_COMPILERS[name]()
    return _KERNELS[key]


def _grid(n, block, blocks_per_sm=4):
    """Blocks for a grid-stride kernel over n items: enough to fill every SM
    blocks_per_sm times, never more than the items need."""
    device = torch.cuda.current_device()
    if device not in _SM_COUNT:
        _SM_COUNT[device] = torch.cuda.get_device_properties(device).multi_processor_count
    return max(1, min((n + block - 1) // block, _SM_COUNT[device] * blocks_per_sm)))";

// Emitted when a launch divides its index by a size (elementwise_program.h).
const char* const kDividerHelper = R"py(


_DIVIDERS = {}


def _divider(d):
    """(shift << 32) | multiplier for the kernels' hiera_div, which computes
    n // d for 0 <= n < 2**31 as (umulhi(n, multiplier) + n) >> shift instead
    of an integer division (PyTorch's IntDivider). A zero size (an empty
    tensor: no element is computed) gives 0."""
    if d not in _DIVIDERS:
        if not 0 <= d < 2**31:
            raise ValueError("a kernel's index is divided by %d, outside [0, 2**31)" % d)
        shift = (d - 1).bit_length() if d else 0
        _DIVIDERS[d] = (shift << 32) | (((1 << 32) * ((1 << shift) - d)) // d + 1) if d else 0
    return _DIVIDERS[d])py";

// Emitted when a launch broadcasts its inputs' shapes (launch_statements.h).
const char* const kBroadcastHelper = R"py(


_BROADCASTS = {}


def _broadcast_shapes(*shapes):
    """torch.broadcast_shapes(*shapes), computed once per combination of shapes:
    torch's goes through its symbolic-shape code, tens of microseconds of CPU a
    call, which a kernel of a fraction of a millisecond no longer hides."""
    if shapes not in _BROADCASTS:
        _BROADCASTS[shapes] = torch.broadcast_shapes(*shapes)
    return _BROADCASTS[shapes])py";

const char* const kCudaGraphHelpers = R"(def _hiera_graph_key(module, inputs):
    """What a captured graph depends on: every input's shape, dtype, stride and
    device, the module's mode, and where its parameters and buffers live."""
    described = tuple((tuple(t.shape), t.dtype, t.stride(), t.device) if isinstance(t, torch.Tensor) else repr(t)
                      for t in inputs)
    storage = tuple(t.data_ptr() for t in list(module.parameters()) + list(module.buffers()))
    return described, module.training, storage


def _hiera_clone_output(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_hiera_clone_output(v) for v in value)
    return value


def _hiera_cuda_graph_call(module, compute, inputs):
    """compute(*inputs) captured once per input signature in a CUDA graph and
    replayed: inputs are copied into the graph's static buffers and the output
    is cloned out of its pool, because the next replay overwrites it."""
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    if not tensors or not all(t.is_cuda for t in tensors):
        return compute(*inputs)  # graphs are CUDA-only: the same computation on other devices
    state = module.__dict__.setdefault("_hiera_cuda_graph", {})
    key = _hiera_graph_key(module, inputs)
    if state.get("key") != key:
        static_inputs = [t.clone() if isinstance(t, torch.Tensor) else t for t in inputs]
        with torch.no_grad():
            for _ in range(2):  # warm-up outside the capture: lazy initialisation, cuBLAS handles, autotuning
                compute(*static_inputs)
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                static_output = compute(*static_inputs)
        state.update(key=key, graph=graph, inputs=static_inputs, output=static_output)
    for static, value in zip(state["inputs"], inputs):
        if isinstance(static, torch.Tensor):
            static.copy_(value)
    state["graph"].replay()
    return _hiera_clone_output(state["output"]))";

// Defined before the opaque kernel regions (EmitOptions::opaque_kernel_regions) it decorates.
const char* const kEagerRegionHelper = R"(def _hiera_eager(function):
    """function, run as it is under torch.compile (a graph break): dynamo cannot trace a
    kernel's ctypes launch, so inductor compiles the code between the kernel regions."""
    disable = getattr(getattr(torch, "compiler", None), "disable", None)
    return disable(function) if disable is not None else function)";

class Emitter {
 public:
  Emitter(const graph::OpGraph& graph, const std::string& reference, const std::vector<Replacement>& replacements,
          const EmitOptions& options)
      : graph_(graph), reference_(reference), replacements_(replacements), options_(options) {}

  EmittedModule run() {
    if (const std::string error = validate(); !error.empty()) return {{}, error};
    if (graph_.captured()) {
      if (const std::string error = build_items(); !error.empty()) return {{}, error};
      mark_live();
      if (const std::string error = check_reads(); !error.empty()) return {{}, error};
      for (auto& item : items_) {
        if (item.live && item.replacement && !item.replacement->kernels.empty() && options_.opaque_kernel_regions)
          item.lines = {region_call(item)};
      }
    }
    return {render(), {}};
  }

 private:
  std::string validate() {
    if (!graph_.captured() && replacements_.empty()) {
      return "no graph was captured (" + (graph_.fallback.empty() ? std::string("no reason given") : graph_.fallback) +
             ") and no whole-forward rewrite was given: nothing to emit";
    }
    for (const auto& r : replacements_) {
      if (r.whole_forward()) {
        if (!r.statements.empty() || !r.produces.empty()) {
          return "replacement " + describe(r) + " has statements but covers no node";
        }
        for (const auto& [flag, value] : r.settings) {
          const auto [it, inserted] = settings_.emplace(flag, value);
          if (!inserted && it->second != value) {
            return "replacements set " + flag + " to both " + it->second + " and " + value;
          }
          if (inserted) setting_order_.push_back(flag);
        }
        cuda_graph_ = cuda_graph_ || r.cuda_graph;
      } else {
        if (!graph_.captured()) {
          return "replacement " + describe(r) + " covers nodes, but no graph was captured (" + graph_.fallback + ")";
        }
        if (!r.covered.count(r.produces)) {
          return "replacement " + describe(r) + " produces '" + r.produces + "', which it does not cover";
        }
        if (r.statements.empty()) return "replacement " + describe(r) + " has no statements";
        for (const auto& name : r.covered) {
          const graph::Node* node = graph_.find(name);
          if (!node) return "replacement " + describe(r) + " covers '" + name + "', which is not a node of the graph";
          if (node->op == "placeholder" || node->op == "output") {
            return "replacement " + describe(r) + " covers the " + node->op + " node '" + name + "'";
          }
          const auto [it, inserted] = owner_.emplace(name, &r);
          if (!inserted) {
            return "replacements overlap: node '" + name + "' is covered by " + describe(*it->second) + " and " +
                   describe(r);
          }
        }
        std::set<std::string> assigned;
        for (const auto& s : r.statements) {
          if (s.empty() || s.find('\n') != std::string::npos || s[0] == ' ' || s[0] == '\t') {
            return "replacement " + describe(r) + " has a statement that is not one unindented line: \"" + s + "\"";
          }
          for (const auto& name : assigned_names(s)) assigned.insert(name);
        }
        if (!assigned.count(r.produces)) {
          return "replacement " + describe(r) + " never assigns '" + r.produces + "'";
        }
      }
      if (r.cuda_graph) {
        for (const auto& p : forward_params(graph_)) {
          if (p.declaration.rfind("**", 0) == 0) {
            return "replacement " + describe(r) +
                   " captures forward in a CUDA graph, which needs positional inputs, "
                   "but forward takes " +
                   p.declaration;
          }
        }
      }
      for (const auto& k : r.kernels) {
        if (k.source.find("\"\"\"") != std::string::npos) {
          return "kernel " + k.name + " of " + describe(r) + " contains three double quotes in a row";
        }
        const auto [it, inserted] = kernels_.emplace(k.name, &k);
        if (!inserted && (it->second->source != k.source || it->second->options != k.options)) {
          return "two different kernels are named " + k.name;
        }
        if (inserted) kernel_order_.push_back(k.name);
      }
    }
    return {};
  }

  std::string build_items() {
    for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
      const graph::Node& node = graph_.nodes[i];
      if (node.op == "output") continue;
      if (node.op == "placeholder") {
        // fx renames a placeholder that clashes with a Python name; the signature keeps the argument's.
        const std::string target = bare(node.target.empty() ? node.name : node.target);
        if (target != node.name) items_.push_back({node.name, {node.name + " = " + target}, {}, false, nullptr, i});
        continue;
      }
      const auto owned = owner_.find(node.name);
      if (owned != owner_.end()) {
        const Replacement& r = *owned->second;
        if (r.produces != node.name) continue;
        Item item{node.name, r.statements, {}, false, &r, i};
        std::set<std::string> assigned;
        for (const auto& s : r.statements) {
          for (const auto& name : read_names(s)) {
            if (!assigned.count(name) && graph_.find(name)) item.reads.insert(name);
          }
          for (const auto& name : assigned_names(s)) assigned.insert(name);
        }
        items_.push_back(std::move(item));
        continue;
      }
      if (node.code.empty()) return "node '" + node.name + "' has no code to emit";
      Item item{node.name, {node.name + " = " + node.code}, node_reads(node), mutates(graph_, node), nullptr, i};
      items_.push_back(std::move(item));
    }
    return {};
  }

  // The region as a function of `self` and the values it reads, defined once
  // at module level (region_functions_), and the forward's line that calls it.
  std::string region_call(const Item& item) {
    const std::string function = "_hiera_region_" + item.defines;
    std::vector<std::string> params{"self"};
    params.insert(params.end(), item.reads.begin(), item.reads.end());
    std::string text = std::string(kEagerRegionDecorator) + "\ndef " + function + "(" + join(params, ", ") + "):\n";
    for (const auto& line : item.lines) text += "    " + line + "\n";
    text += "    return " + item.defines;
    region_functions_.push_back({item.lines, std::move(text)});
    return item.defines + " = " + function + "(" + join(params, ", ") + ")";
  }

  static std::set<std::string> node_reads(const graph::Node& node) {
    std::set<std::string> out;
    std::vector<const graph::Arg*> stack;
    for (const auto& a : node.args) stack.push_back(&a);
    for (const auto& [key, a] : node.kwargs) stack.push_back(&a);
    while (!stack.empty()) {
      const graph::Arg* a = stack.back();
      stack.pop_back();
      if (a->is_node()) out.insert(a->node);
      for (const auto& item : a->items) stack.push_back(&item);
    }
    return out;
  }

  void mark_live() {
    std::set<std::string> needed = node_reads(graph_.nodes.back());
    for (auto it = items_.rbegin(); it != items_.rend(); ++it) {
      it->live = it->side_effect || needed.count(it->defines);
      if (it->live) needed.insert(it->reads.begin(), it->reads.end());
    }
  }

  std::string covered_without_producing(const std::string& reader, const std::string& name,
                                        const Replacement* self) const {
    const auto owned = owner_.find(name);
    // Its own covered nodes (`produces` included) exist only once its statements assign them.
    if (owned != owner_.end() && owned->second == self)
      return reader + " reads '" + name + "', which it covers, before assigning it";
    if (owned == owner_.end() || owned->second->produces == name) return {};
    return reader + " still reads '" + name + "', which " + describe(*owned->second) + " covers without producing it";
  }

  std::string check_reads() const {
    std::map<std::string, std::size_t> position;
    for (std::size_t i = 0; i < graph_.nodes.size(); ++i) position[graph_.nodes[i].name] = i;
    for (const auto& name : node_reads(graph_.nodes.back())) {
      if (auto error = covered_without_producing("the output", name, nullptr); !error.empty()) return error;
    }
    for (const auto& item : items_) {
      if (!item.live) continue;
      const std::string reader =
          item.replacement ? "replacement " + describe(*item.replacement) : "node '" + item.defines + "'";
      for (const auto& name : item.reads) {
        if (auto error = covered_without_producing(reader, name, item.replacement); !error.empty()) return error;
        if (item.replacement && !item.replacement->covered.count(name) && position.at(name) > item.position) {
          return reader + " reads '" + name + "', which is computed after '" + item.defines + "'";
        }
      }
    }
    return {};
  }

  std::vector<std::string> body_lines() const {
    std::vector<std::string> lines;
    if (!graph_.captured()) {
      std::vector<std::string> pass;
      for (const auto& p : forward_params(graph_)) pass.push_back(p.pass);
      lines.push_back("return super().forward(" + join(pass, ", ") + ")");
      return lines;
    }
    for (const auto& item : items_) {
      if (item.live) lines.insert(lines.end(), item.lines.begin(), item.lines.end());
    }
    const graph::Node& output = graph_.nodes.back();
    std::string returned = output.code;
    if (returned.empty()) {
      std::vector<std::string> values;
      for (const auto& a : output.args) values.push_back(python_arg(a));
      returned = values.size() == 1 ? values[0] : "(" + join(values, ", ") + ")";
    }
    lines.push_back("return " + returned);
    return lines;
  }

  std::string render() const {
    const std::vector<Param> params = forward_params(graph_);
    std::vector<std::string> declaration{"self"}, pass;
    for (const auto& p : params) {
      declaration.push_back(p.declaration);
      pass.push_back(p.pass);
    }
    const std::string signature = "(" + join(declaration, ", ") + "):";
    const std::vector<std::string> body = body_lines();
    const bool wrapped = cuda_graph_ || !settings_.empty();
    // Every line the generated code runs: forward's and the opaque regions'.
    std::vector<std::string> code = body;
    for (const auto& region : region_functions_) code.insert(code.end(), region.lines.begin(), region.lines.end());

    std::vector<std::string> definitions;
    std::vector<std::string> extra_imports;
    for (const auto& r : replacements_) {
      for (const auto& d : r.definitions) {
        if (std::find(definitions.begin(), definitions.end(), d) == definitions.end()) definitions.push_back(d);
      }
      for (const auto& i : r.imports) {
        if (std::find(extra_imports.begin(), extra_imports.end(), i) == extra_imports.end()) extra_imports.push_back(i);
      }
    }

    // Standard modules the generated code names (node code may spell operator.* or math.*).
    std::set<std::string> names;
    for (const auto& line : code) {
      for (const auto& n : read_names(line)) names.insert(n);
    }
    for (const auto& d : definitions) {
      for (const auto& n : read_names(d)) names.insert(n);
    }
    std::vector<std::string> imports{"import torch"};
    for (const char* module : {"math", "operator"}) {
      const std::string line = std::string("import ") + module;
      if (names.count(module) && std::find(extra_imports.begin(), extra_imports.end(), line) == extra_imports.end()) {
        imports.push_back(line);
      }
    }
    for (const auto& i : extra_imports) {
      if (std::find(imports.begin(), imports.end(), i) == imports.end()) imports.push_back(i);
    }
    if (!kernels_.empty()) imports.push_back("from hiera_runner import nvrtc_runtime");

    std::vector<std::string> blocks;
    blocks.push_back(std::string(kGeneratedMarker) + "\n" + join(imports, "\n"));
    for (const auto& d : definitions) blocks.push_back(d);
    if (!kernels_.empty()) {
      // One module-level constant per source and one literal rt.compile call per
      // kernel: what the delivered form (deliver.py) resolves before the module runs.
      std::string sources;
      std::string compilers = "_KERNEL_COMPILERS = {\n";
      for (const auto& name : kernel_order_) {
        const KernelSource& k = *kernels_.at(name);
        std::string text = k.source;
        if (!text.empty() && text.back() != '\n') text += "\n";
        const std::string constant = "_KERNEL_SOURCE_" + python_identifier(name);
        sources += constant + " = r\"\"\"\n" + text + "\"\"\"\n";
        std::vector<std::string> quoted;
        for (const auto& o : k.options) quoted.push_back(python_string(o));
        compilers += "    " + python_string(name) + ": lambda: nvrtc_runtime.compile(" + constant + ", " +
                     python_string(name) + ", options=[" + join(quoted, ", ") + "]),\n";
      }
      const auto uses = [&code](const char* helper) {
        return std::any_of(code.begin(), code.end(),
                           [helper](const std::string& line) { return line.find(helper) != std::string::npos; });
      };
      blocks.push_back(sources + compilers + "}\n" + kKernelHelpers + (uses("_divider(") ? kDividerHelper : "") +
                       (uses("_broadcast_shapes(") ? kBroadcastHelper : ""));
    }
    if (!region_functions_.empty()) {
      blocks.push_back(kEagerRegionHelper);
      for (const auto& region : region_functions_) blocks.push_back(region.text);
    }
    if (cuda_graph_) blocks.push_back(kCudaGraphHelpers);

    std::string cls = "class ModelNew(" + graph_.class_name + "):\n";
    if (!wrapped) {
      cls += "    def forward" + signature + "\n";
      for (const auto& line : body) cls += "        " + line + "\n";
    } else {
      cls += "    def forward" + signature + "\n";
      const std::string call = cuda_graph_ ? "_hiera_cuda_graph_call(self, self._hiera_forward, (" + join(pass, ", ") +
                                                 (pass.size() == 1 ? ",))" : "))")
                                           : "self._hiera_forward(" + join(pass, ", ") + ")";
      if (settings_.empty()) {
        cls += "        return " + call + "\n";
      } else {
        // Process-wide flags: set for this call only, so the reference timed in the same process is unaffected.
        std::vector<std::string> saved;
        for (const auto& flag : setting_order_) saved.push_back(flag);
        cls += "        _hiera_saved = (" + join(saved, ", ") + (saved.size() == 1 ? ",)\n" : ")\n");
        for (const auto& flag : setting_order_) cls += "        " + flag + " = " + settings_.at(flag) + "\n";
        cls += "        try:\n";
        cls += "            return " + call + "\n";
        cls += "        finally:\n";
        for (std::size_t i = 0; i < setting_order_.size(); ++i) {
          cls += "            " + setting_order_[i] + " = _hiera_saved[" + std::to_string(i) + "]\n";
        }
      }
      cls += "\n    def _hiera_forward" + signature + "\n";
      for (const auto& line : body) cls += "        " + line + "\n";
    }
    blocks.push_back(cls);

    std::string out = reference_;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    out += "\n\n\n";
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      std::string block = blocks[i];
      while (!block.empty() && block.back() == '\n') block.pop_back();
      out += block + (i + 1 < blocks.size() ? "\n\n\n" : "\n");
    }
    return out;
  }

  // An opaque kernel region: its statements (for the scans of names and helpers) and its definition.
  struct RegionFunction {
    std::vector<std::string> lines;
    std::string text;
  };

  const graph::OpGraph& graph_;
  const std::string& reference_;
  const std::vector<Replacement>& replacements_;
  EmitOptions options_;
  std::vector<RegionFunction> region_functions_;
  std::map<std::string, const Replacement*> owner_;
  std::map<std::string, std::string> settings_;
  std::vector<std::string> setting_order_;
  std::map<std::string, const KernelSource*> kernels_;
  std::vector<std::string> kernel_order_;
  bool cuda_graph_ = false;
  std::vector<Item> items_;
};

}  // namespace

EmittedModule emit_module(const graph::OpGraph& graph, const std::string& reference_source,
                          const std::vector<Replacement>& replacements, const EmitOptions& options) {
  return Emitter(graph, reference_source, replacements, options).run();
}

std::string divider_helper() { return kDividerHelper; }

std::string broadcast_helper() { return kBroadcastHelper; }

}  // namespace hiera::engine::propose::recipes
