#pragma once
// Evaluates Python statements and expressions over abstract values
// (python_value.h): module constants, KernelBench's get_inputs and
// get_init_inputs, an nn.Module's __init__ (which layers and parameters it
// builds) and its forward (which ops it calls, in order, with shapes and work
// when the inputs' shapes are known). Both branches of an `if` run; a loop
// body runs once, its ops marked in_loop. Nothing is ever executed for real.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/python_syntax.h"
#include "engine/analysis/python_value.h"
#include "engine/analysis/torch_findings.h"
#include "engine/analysis/torch_shape_rules.h"

namespace hiera::engine::analysis {

// Import aliases: local name -> dotted path ("F" -> "torch.nn.functional").
using ImportAliases = std::map<std::string, std::string, std::less<>>;

// What `self.` holds inside a module: layers, parameters, buffers, plain attributes.
struct ModuleState {
  std::map<std::string, PyValue, std::less<>> attributes;
  std::vector<TorchLayer> layers;  // as __init__ assigned them, in order
};

// A host synchronisation in forward: .item(), .cpu(), print of a tensor, ...
struct SyncCall {
  std::string what;                // "item", "cpu", "tolist", "numpy", "print", "float", "synchronize"
  Span span;                       // the call
  std::optional<Span> statement;   // the statement, when the call is all of it
};

// A Python loop of forward: a for statement or a comprehension.
struct PythonLoop {
  Span span;            // the for statement's header, or the whole comprehension
  bool over_tensor = false;  // it iterates a tensor, its unbind/split, or range(len / .shape / .size())
  bool body_has_matmul = false;
};

// What evaluating a forward records.
struct ForwardTrace {
  std::vector<ForwardOp> ops;
  std::vector<SyncCall> syncs;
  std::vector<PythonLoop> loops;
};

class PythonEvaluator {
 public:
  PythonEvaluator(std::string_view source, const PythonSyntax& syntax, const ImportAliases& aliases,
                  const std::map<std::string, PyValue, std::less<>>& globals, const std::vector<std::string>& module_classes);

  std::map<std::string, PyValue, std::less<>>& locals() { return locals_; }
  // `self` for method bodies; __init__ writes into it (set `building` true), forward reads it.
  void set_self(ModuleState* self, bool building) {
    self_ = self;
    building_ = building;
  }
  // Record forward ops, syncs and loops into `trace` (null: record nothing).
  void set_trace(ForwardTrace* trace, std::string work_source) {
    trace_ = trace;
    work_source_ = std::move(work_source);
  }

  PyValue evaluate(PyRange range);
  PyValue evaluate(const PyExprTree& tree, int node);
  // Runs statements; a `return` stops them and its value is returned().
  void run(const std::vector<PyStmt>& body);
  void run(const PyStmt& statement) { statement_(statement); }
  const std::optional<PyValue>& returned() const { return returned_; }
  // The dotted path an expression names after aliases ("F.relu" -> "torch.nn.functional.relu"), "" if none.
  std::string dotted_path(const PyExprTree& tree, int node) const;

 private:
  void statement_(const PyStmt& s);
  // Binds `value` to the target expression; `value_tree`/`value_node` is the
  // expression it came from (-1 when none), so __init__ can tell a layer's constructor.
  void assign(const PyExprTree& tree, int target, const PyValue& value, const PyExprTree& value_tree, int value_node,
              Span statement_span);
  PyValue element_of(const PyValue& iterable) const;
  PyValue eval(const PyExprTree& tree, int node);
  PyValue eval_node(const PyExprTree& tree, int node);
  PyValue call(const PyExprTree& tree, int node);
  void register_tensor(const OpCall& args, std::string type, const PyExprTree& tree, int node);
  PyValue attribute(const PyExprTree& tree, int node);
  PyValue subscript(const PyExprTree& tree, int node);
  PyValue binary(const PyExprTree& tree, int node);
  PyValue comprehension(const PyExprTree& tree, int node);
  std::optional<std::int64_t> range_length(const PyExprTree& tree, const PyExpr& comprehension);
  PyValue builtin(std::string_view name, const OpCall& args, const PyExprTree& tree, int node);
  PyValue creation(std::string_view name, const OpCall& args, std::string call_text, Span span);
  PyValue tensor_method(std::string_view name, const PyValue& self, OpCall args, const PyExprTree& tree, int node);
  PyValue pieces(std::string_view name, const PyValue& self, const OpCall& args) const;
  PyValue layer_call(const PyValue& layer, const OpCall& args, std::string call_text, Span span);
  PyValue record(const OpInfo& op, std::string call_text, Span span, const OpCall& args, OpOutcome outcome);
  void sync(std::string what, const PyExprTree& tree, int node);
  OpCall arguments(const PyExprTree& tree, int node);
  std::string_view text(Span span) const { return source_.substr(span.begin, span.end - span.begin); }

  std::string_view source_;
  const PythonSyntax& syntax_;
  const ImportAliases& aliases_;
  const std::map<std::string, PyValue, std::less<>>& globals_;
  const std::vector<std::string>& module_classes_;
  std::map<std::string, PyValue, std::less<>> locals_;
  ModuleState* self_ = nullptr;
  bool building_ = false;
  ForwardTrace* trace_ = nullptr;
  std::string work_source_;
  int loop_depth_ = 0;
  int eval_depth_ = 0;
  int branch_depth_ = 0;   // inside an if / loop / with / try body: a return there does not end the function
  bool stopped_ = false;   // a return at the function's own level ran
  std::optional<PyValue> returned_;
  const PyStmt* current_statement_ = nullptr;
  const PyExprTree* current_tree_ = nullptr;
};

}  // namespace hiera::engine::analysis
