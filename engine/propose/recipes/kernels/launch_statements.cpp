#include "engine/propose/recipes/kernels/launch_statements.h"

#include <algorithm>
#include <set>

#include "engine/propose/recipes/kernels/kernel_dtypes.h"
#include "engine/propose/recipes/kernels/unsupported.h"

namespace hiera::engine::propose::recipes::kernels {

std::string dtype_check(const std::vector<const ElementwiseProgram*>& programs, const std::string& kernel) {
  std::vector<const Leaf*> leaves;
  std::set<std::string> seen;
  for (const auto* program : programs)
    for (const auto& leaf : program->leaves())
      if (seen.insert(leaf.python).second) leaves.push_back(&leaf);
  if (leaves.empty()) return "";
  std::string condition, expected;
  for (std::size_t i = 0; i < leaves.size(); ++i) {
    condition += (i ? " and " : "") + leaves[i]->python + ".dtype == " + kernel_dtype(leaves[i]->dtype)->torch_name;
    expected += (i ? ", " : "") + leaves[i]->dtype + " " + leaves[i]->python;
  }
  return "assert " + condition + ", \"kernel " + kernel + " expects " + expected + "\"";
}

std::string output_dtype(const std::vector<const ElementwiseProgram*>& programs, const std::string& dtype,
                         const std::vector<std::string>& allowed_precisions) {
  for (const auto* program : programs)
    for (const auto& leaf : program->leaves())
      if (leaf.dtype == dtype) return leaf.python + ".dtype";
  const KernelDtype* type = kernel_dtype(dtype);
  if (!type) throw Unsupported("an output of dtype " + dtype);
  const std::string allowance = dtype == "float16" ? "fp16" : dtype == "bfloat16" ? "bf16" : "";
  if (!allowance.empty() &&
      std::find(allowed_precisions.begin(), allowed_precisions.end(), allowance) == allowed_precisions.end() &&
      std::find(allowed_precisions.begin(), allowed_precisions.end(), dtype) == allowed_precisions.end())
    throw Unsupported("the output is " + dtype + ", which no input carries and the contract does not allow (" +
                      allowance + ")");
  return type->torch_name;
}

std::string output_device(const std::vector<const ElementwiseProgram*>& programs) {
  for (const auto* program : programs)
    for (const auto& leaf : program->leaves())
      if (leaf.is_node) return leaf.python + ".device";
  for (const auto* program : programs)
    if (!program->leaves().empty()) return program->leaves().front().python + ".device";
  throw Unsupported("a kernel that reads no tensor");
}

std::string broadcast_shape(const ElementwiseProgram& program, const std::vector<std::int64_t>& captured) {
  std::vector<std::string> shapes;
  for (const auto& shape : program.node_leaf_shapes())
    if (std::find(shapes.begin(), shapes.end(), shape) == shapes.end()) shapes.push_back(shape);
  if (shapes.size() == 1) return shapes.front();
  if (!shapes.empty()) return "_broadcast_shapes(" + join_arguments(shapes) + ")";
  std::vector<std::string> dims;
  for (auto d : captured) dims.push_back(std::to_string(d));
  return "torch.Size([" + join_arguments(dims) + "])";
}

std::string launch_arguments(const ElementwiseProgram& program, const std::map<std::string, std::string>& prepared) {
  std::vector<std::string> parts;
  for (const auto& parameter : program.kernel_parameters()) {
    if (parameter.leaf.empty()) {
      parts.push_back(parameter.python);
    } else if (const auto it = prepared.find(parameter.leaf); it != prepared.end()) {
      parts.push_back(it->second);
    } else {
      parts.push_back(parameter.python + ".contiguous()");
    }
  }
  return join_arguments(parts);
}

std::string join_arguments(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& part : parts) {
    if (part.empty()) continue;
    if (!out.empty()) out += ", ";
    out += part;
  }
  return out;
}

}  // namespace hiera::engine::propose::recipes::kernels
