#pragma once
// What a task spec is about: a CUDA kernel with its launch, or a PyTorch
// module's forward. Some clauses (a kernel's arguments, its launch) exist for
// one kind only.
#include <optional>
#include <string_view>

namespace hiera::engine::spec {

enum class TargetKind { Cuda, Pytorch };

const char* to_string(TargetKind kind);  // "cuda", "pytorch" (the job protocol's task kinds)
std::optional<TargetKind> parse_target_kind(std::string_view text);

}  // namespace hiera::engine::spec
