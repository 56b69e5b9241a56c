#pragma once
// torch.compile as a candidate: the built-in, offline proposer whose S1
// candidates are the reference's forward compiled by torch.compile (its
// default mode; "max-autotune-no-cudagraphs" once the default mode passed and
// leads a run of kMaxAutotuneMinBudget candidates or more, since autotuning
// costs about a minute), verified and timed like
// any other candidate, so what hiera delivers is never slower than what the
// user gets from torch.compile where that passes the contract. Once hiera has
// a verified faster module of its own (ProposalRequest::current_best_source),
// it also proposes that module's ModelNew compiled the same way: hiera's
// rewrites, with inductor for the rest (in any space's step). Where torch.compile
// of the reference leads the run, the module compiled is hiera's fastest verified
// one that torch.compile can take (no torch.compile of its own, no NVRTC launch):
// an S1 rewrite inductor does not make (SDPA for a hand-written attention) or a
// cuDNN setting, then inductor's fusions around it.
//
// Each candidate is the source it starts from, verbatim, followed by a
// `ModelNew` subclass whose forward calls the compiled forward of its base
// (compiled on the first call, per instance). A torch without torch.compile
// (before 2.0) fails the candidate at construction, saying so. Deterministic;
// a source already in the run's history is not proposed again, so each one
// is proposed once per run. Nothing for CUDA-kernel targets or for a source
// with no `class Model`.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/propose/proposer.h"

namespace hiera::engine::propose {

inline constexpr const char* kCompileProposerName = "torch.compile";
inline constexpr const char* kCompileModeDefault = "default";
// max-autotune without CUDA graphs: a graph replay hands back the same output
// memory on every call, which no caller that keeps two calls' outputs can use.
inline constexpr const char* kCompileModeMaxAutotune = "max-autotune-no-cudagraphs";
// The smallest run budget that gets a max-autotune candidate: its autotuning
// costs 30 s to minutes, more than a small run's whole time (issue 20: budget 6
// in 60 s).
inline constexpr int kMaxAutotuneMinBudget = 12;

// The module `source` with a ModelNew whose forward is torch.compile(mode) of
// `base`'s forward ("Model" for the reference; a candidate's ModelNew is
// renamed first and subclassed). `mode` "default" passes no mode.
std::string compiled_module(const std::string& source, const std::string& base, const std::string& mode);

// Whether the Python source defines a top-level class of that name.
bool defines_class(std::string_view source, std::string_view name);

// The mode of the first torch.compile call in Python source outside comments
// and strings: the string given as mode=, "default" when none is given, the
// argument's text when it is not a string literal; nullopt when the source
// calls no torch.compile.
std::optional<std::string> torch_compile_mode(std::string_view source);

// The decorator line of an opaque kernel region (the knowledge proposer's
// EmitOptions::opaque_kernel_regions): torch.compiler.disable, so a module
// holding it launches its kernels where torch.compile does not trace.
inline constexpr const char* kEagerRegionDecorator = "@_hiera_eager";

// Whether the module launches the knowledge proposer's NVRTC kernels (its
// `_KERNEL_COMPILERS` table): torch.compile traces into the launch (ctypes, raw
// pointers) and fails, "Can't get __cuda_array_interface__ on Variable that
// requires grad" (a conv + ReLU + bias and a ResNet block on the H200,
// 2026-12-02), so such a module is not proposed compiled. A module whose
// kernel regions carry kEagerRegionDecorator runs them outside the trace: false.
bool launches_nvrtc_kernels(std::string_view source);

// Whether a torch of that version has torch.compile (2.0 and later); true when
// the version is empty or does not start with a number (verification then says).
bool has_torch_compile(std::string_view torch_version);

class CompileProposer final : public Proposer {
 public:
  std::string name() const override { return kCompileProposerName; }
  std::vector<Candidate> propose(const ProposalRequest& request, const CancellationToken& cancel) override;
};

}  // namespace hiera::engine::propose
