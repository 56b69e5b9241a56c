#pragma once
// The PyTorch hint rules (hint_rules.h has their ids, explanations and
// recipes), read from a module's forward ops and their data flow: elementwise
// chains after a convolution or linear layer, hand-written softmax, attention
// and layer norm, host synchronisation, Python loops over tensors, and
// .contiguous() copies.
#include <string_view>
#include <vector>

#include "engine/analysis/hint.h"
#include "engine/analysis/python_evaluator.h"
#include "engine/analysis/torch_findings.h"

namespace hiera::engine::analysis {

// In source order.
std::vector<Hint> torch_hints(std::string_view source, const TorchModule& module, const ForwardTrace& trace);

}  // namespace hiera::engine::analysis
