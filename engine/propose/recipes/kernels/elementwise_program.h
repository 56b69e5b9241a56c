#pragma once
// The per-element code of a fused group of nodes: for an element i of a
// contiguous row-major index space (the group's output shape), the value of
// every member node as a named float, computed with the expression builder's
// formulas, and the loads of the values that come from outside the group
// (leaves) with their broadcast index math:
//   same shape as the index space     in[i]
//   one element                       in[0]
//   otherwise, per run [a, b) of dimensions the leaf does not broadcast:
//                                     ((i / inner) % size) * stride
//     inner = elements of the index space after b, size = those of [a, b),
//     stride = the leaf's elements after b;
// e.g. a per-channel vector [C, 1, 1] against [N, C, H, W]: (i / (H*W)) % C.
// With 32-bit indices a division by a size is a multiply-high, an add and a
// shift (hiera_div, with the multiplier the launch computes: _divider), not
// the twenty-odd instructions of an integer division per operand and element,
// which made broadcast-heavy epilogues instruction-bound. Leaves broadcast
// alike share their sizes, so the compiler computes their index once.
// The sizes are kernel arguments that the Python statements compute from the
// tensors at run time, so one kernel serves every shape with the same
// broadcast pattern. With a memory order (channels_last), element i is the
// i-th in that order and the runs are taken over the dimensions in it: a
// per-channel vector against channels_last [N, C, H, W] (memory order N, H,
// W, C) is read at i % C.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/recipes/kernels/elementwise_expression.h"

namespace hiera::engine::propose::recipes::kernels {

// A kernel parameter and the Python launch argument that feeds it.
struct KernelParameter {
  std::string declaration;  // "const float* __restrict__ a0", "int a1_inner"
  std::string python;       // "conv", "_add_1_shape[2:].numel()", "nvrtc_runtime.int64(...)"
  std::string leaf;         // a tensor parameter: its leaf's pointer name ("a0"); empty for sizes
};

// A tensor the group reads from outside.
struct Leaf {
  std::string python;                // its Python expression: a node's name or "self.bn.running_mean"
  std::string dtype;
  std::vector<std::int64_t> shape;   // as it lines up against the index space (right-aligned)
  bool is_node = true;               // a node's value (its shape may change with the inputs) or a module tensor
  std::string pointer;               // the kernel's name for it: "a0"
  bool full_size = false;            // same shape as the index space: read at i
  bool gathered = false;             // read at an index the code computes (a rotation): always a pointer
  // Read at i % size over the innermost memory dimensions: with lane packs on,
  // the vector kernel loads it as one pack per VEC consecutive lanes.
  std::string lane_size;             // that size's parameter name; empty when the leaf is not read so
};

struct ProgramOptions {
  std::vector<std::int64_t> shape;  // the index space: the captured shape of the group's output
  std::string shape_python;         // a Python variable that holds its run-time torch.Size
  std::string prefix = "a";         // names of this program's kernel parameters: a0, a1_inner0, ...
  bool index64 = false;             // 64-bit index math (more than 2^31 - 1 elements)
  // Full-size leaves enter the element function as values (the caller loads
  // them, possibly as 16-byte vectors) rather than as pointers.
  bool full_size_by_value = false;
  // The order in which the index space lies in memory, outermost dimension
  // first; empty: as written (row-major). channels_last [N, C, H, W] is
  // {0, 2, 3, 1}. Then shape_python holds the shape in that order, full-size
  // leaves must lie in it too (the caller converts them), and a broadcast
  // leaf must keep its own dimensions' order in it (a [C, H, W] leaf against
  // channels_last does not: Unsupported).
  std::vector<std::size_t> memory_order;
  // Read a rotation of slices (rotate_half) in place: see absorbed(). Only for
  // callers that cover what it absorbs and run its checks().
  bool rotations = false;
  // The vector kernel's pack width, or 0. Broadcast leaves read at i % size
  // (a bias over the last dimension, a per-channel vector against
  // channels_last) then enter the element function as values, like full-size
  // leaves: consecutive lanes read consecutive elements, so vector_loads()
  // loads them as one pack instead of VEC scalar loads and index computations.
  // The launch must check size % VEC == 0 and the leaf's alignment (lane_packed()).
  int lane_packs = 0;
  // The index of dimension 1 (the channel of [N, C, ...]) at element i, when
  // the kernel knows it under this name: a leaf that varies along dimension 1
  // alone (a per-channel [C, 1, 1] operand) is then read at it, without index
  // math. Empty: such leaves are indexed from i like the others.
  std::string channel_index;
  // Round every half/bfloat16 intermediate as eager stores it (true), or keep
  // intermediates in float and round only what is stored, as torch.compile's
  // kernels do: fewer instructions, and values within the dtype's rounding of
  // eager's rather than equal to them.
  bool round_intermediates = true;
};

class ElementwiseProgram {
 public:
  // `members` are the nodes the program computes; every other node it meets is a leaf.
  ElementwiseProgram(const graph::OpGraph& graph, std::set<std::string> members, ProgramOptions options);

  // A member whose value is not its elementwise formula (a norm reading its
  // row statistics, a reduction's result): the function returns its value as
  // an expression and may call value()/load() for its inputs.
  using Custom = std::function<std::string(ElementwiseProgram&, const graph::Node&)>;
  void set_custom(const std::string& node, Custom custom);

  // The value of `node` at element i: a member's formula, or a leaf's load.
  // Emits the code on first use and returns the name that holds it.
  // Throws Unsupported for what the program cannot compute.
  std::string value(const std::string& node);
  // A leaf by Python expression (module tensors, a node seen with another shape).
  std::string load(const std::string& python, const std::string& dtype, const std::vector<std::int64_t>& shape,
                   bool is_node);
  // `node`'s value is already in scope under `expression` (the element's
  // input value x of a row kernel's output function).
  void bind(const std::string& node, const std::string& expression);
  // A named float computed from an expression (for custom members).
  std::string define(const std::string& expression, bool boolean = false);

  // What the code needs, once value() has been called for the root.
  const std::vector<std::string>& body() const { return body_; }  // one statement per line
  const std::vector<Leaf>& leaves() const { return leaves_; }
  std::vector<std::string> helpers() const { return {helpers_.begin(), helpers_.end()}; }
  std::vector<std::string> dtypes() const;  // of every leaf and cast
  const ProgramOptions& options() const { return options_; }
  // With round_intermediates off: how many computed values stayed in float
  // that eager rounds. The stored result is rounded anyway, so the kernel
  // differs from the rounding one only when this is 2 or more.
  int unrounded() const { return unrounded_; }
  std::string index_type() const { return options_.index64 ? "long long" : "int"; }

  // The element function's parameters after `index_t i` (each starting with ", "),
  // the kernel's matching parameters with their Python arguments, and the
  // arguments the kernel passes to the element function.
  std::string element_parameters() const;
  std::vector<KernelParameter> kernel_parameters() const;
  std::string element_arguments(const std::string& index) const;        // full-size leaves read at [index]
  std::string lane_arguments(const std::string& lane) const;            // full-size leaves from their packs: a0_pack.v[lane]
  std::string vector_loads(const std::string& vector_index) const;      // one 16-byte (or narrower) pack per full-size leaf
  // The broadcast leaves vector_loads() reads as packs, with the Python of their size.
  std::vector<std::pair<const Leaf*, std::string>> lane_packed() const;
  // Python: the node leaves' shapes, for _broadcast_shapes (torch.broadcast_shapes, cached).
  std::vector<std::string> node_leaf_shapes() const;

  // Nodes outside the members that the program computes itself instead of
  // reading them: a cat along the last dimension of slices of one tensor
  // (rotate_half's cat((-x[..., h:], x[..., :h]), -1)), its slices and their
  // negations, read from that tensor at a rotated index. The caller covers
  // them when nothing else reads them, and runs `checks()` first: the row
  // length the rotation was generated for.
  const std::set<std::string>& absorbed() const { return absorbed_; }
  const std::vector<std::string>& checks() const { return checks_; }

 private:
  struct SizeParameter {
    std::string name;
    std::string python;   // its value at launch, unwrapped (an int)
    bool divisor = false;  // divides the index: with 32-bit indices the kernel also takes its multiplier (name_div)
  };
  std::string offset(Leaf& leaf);
  // The kernel's name for a size computed by `python`: one parameter per
  // distinct expression, so leaves broadcast alike share their index math.
  std::string size_parameter(const std::string& name, const std::string& python, bool divisor);
  // i / d and i % d in the index math: multiply-high and shift with 32-bit indices.
  std::string divide(const std::string& term, const std::string& size);
  std::string remainder(const std::string& term, const std::string& size);
  std::string remainder_text(const std::string& term, const std::string& size) const;  // without noting the helpers
  std::string size_parameters(bool declarations) const;  // the element function's, after its leaves
  bool by_value(const Leaf& leaf) const;  // enters the element function as a value, not a pointer
  // The rotation a cat node computes, as a value at element i; nothing when it is not one.
  std::optional<std::string> rotation(const graph::Node& cat);
  std::string size_argument(const std::string& python) const;

  const graph::OpGraph& graph_;
  std::set<std::string> members_;
  ProgramOptions options_;
  std::map<std::string, Custom> custom_;
  std::map<std::string, std::string> values_;     // node -> name
  std::map<std::string, std::string> loaded_;     // leaf key -> name
  std::set<std::string> computing_;               // recursion guard
  std::vector<std::string> body_;
  std::vector<Leaf> leaves_;
  std::vector<SizeParameter> sizes_;              // in order of first use; parameters after every leaf
  std::set<std::string> helpers_;
  int unrounded_ = 0;
  std::set<std::string> cast_dtypes_;
  std::set<std::string> absorbed_;
  std::vector<std::string> checks_;
  int temporaries_ = 0;
};

}  // namespace hiera::engine::propose::recipes::kernels
