#pragma once
// The PyTorch findings of a Python file (torch_findings.h), read from its
// statements (python_syntax.h) with the evaluator (python_evaluator.h): import
// aliases, module-level constants, nn.Module classes with their __init__
// layers and forward ops, and KernelBench's get_inputs / get_init_inputs.
// When get_inputs' sizes evaluate, the model's forward gets shapes and work.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/analysis/python_evaluator.h"
#include "engine/analysis/python_syntax.h"
#include "engine/analysis/torch_findings.h"
#include "engine/common/size_expression.h"

namespace hiera::engine::analysis {

// Whether torch runs float32 convolutions and matmuls on TF32 tensor cores:
// cuDNN's allow_tf32 defaults to True, matmul's to False; a file's
// `torch.backends.cudnn.allow_tf32 = ...`, `torch.backends.cuda.matmul.allow_tf32
// = ...` and `torch.set_float32_matmul_precision(...)` change them.
struct Float32Precision {
  bool tf32_convolutions = true;
  bool tf32_matmuls = false;
};
Float32Precision float32_precision(std::string_view source);

struct TorchScan {
  std::vector<TorchModule> modules;
  std::vector<ForwardTrace> traces;  // parallel to modules: forward's syncs and loops (its ops are the module's)
  std::optional<KernelBenchEntry> kernelbench;
};

// The file-level facts each module's analysis depends on: import aliases,
// module-level values, the module classes, KernelBench's inputs.
class TorchFile {
 public:
  TorchFile(std::string_view source, const PythonSyntax& syntax, const SizeMap& sizes);
  TorchFile(const TorchFile&) = delete;
  TorchFile& operator=(const TorchFile&) = delete;

  const std::vector<const PyStmt*>& module_classes() const { return classes_; }
  const std::optional<KernelBenchEntry>& kernelbench() const { return kernelbench_; }
  // Those facts as text: a module whose own text and context are unchanged
  // has unchanged findings (analysis.cpp reuses them).
  const std::string& context() const { return context_; }
  // The same for one module: the file's context, plus, when it inherits
  // __init__ or forward from a module class of this file, that class's text
  // and where both are (its findings then point into the other's text).
  std::string context(const PyStmt& module_class) const;

  struct ModuleScan {
    TorchModule module;
    ForwardTrace trace;
  };
  ModuleScan scan_module(const PyStmt& module_class) const;

 private:
  void import(const PyStmt& s);
  std::string base_path(PyRange base) const;
  void find_module_classes();
  void constants(const SizeMap& sizes);
  void find_kernelbench();
  void describe_context();
  std::vector<ModelInput> returned_inputs(const PyStmt& def) const;
  const PyStmt* top_level_def(std::string_view name) const;
  const PyStmt* method(const PyStmt& c, std::string_view name) const;
  const PyStmt* own_method(const PyStmt& c, std::string_view name) const;
  const PyStmt* base_class(const PyStmt& c) const;
  void bind(PythonEvaluator& e, const PyStmt& def, const std::vector<ModelInput>* values, const PyValue& fallback,
            std::vector<std::string>& names) const;
  PythonEvaluator evaluator() const;
  std::string_view text(std::uint32_t k) const;
  void hold_against_tensor_float32(std::vector<ForwardOp>& ops) const;

  std::string_view source_;
  const PythonSyntax& syntax_;
  ImportAliases aliases_;
  std::map<std::string, PyValue, std::less<>> globals_;
  std::vector<const PyStmt*> classes_;
  std::vector<std::string> module_names_;
  std::optional<KernelBenchEntry> kernelbench_;
  Float32Precision precision_;
  std::string context_;
};

// `sizes` replaces module-level integer constants of the same name (from
// `hiera: size` annotations), before get_inputs reads them.
TorchScan scan_torch(std::string_view source, const PythonSyntax& syntax, const SizeMap& sizes = {});

}  // namespace hiera::engine::analysis
