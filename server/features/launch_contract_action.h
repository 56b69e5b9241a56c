#pragma once
// "Add launch contract": for a CUDA kernel without `hiera: arg` and `launch`
// annotations (so Profile and Optimize cannot run it), the code action that
// writes the contract engine/spec infers from the file's launch site and host
// code above the kernel. Its title says when some values are written `?` and
// must be filled in; the annotation diagnostics then point at each of them.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/facade/document_analysis.h"
#include "protocol/lsp_types.h"
#include "server/documents/text_document.h"

namespace hiera::server {

// The `action` of its data ({"feature":"analysis", "action":"contract", "uri", "version", "symbol"}).
inline constexpr const char* kLaunchContractAction = "contract";

// The action listed (data only) for `kernel`, or nullopt when it needs none or is not a kernel.
// `base` is the data every action of the document carries.
std::optional<protocol::lsp::CodeAction> launch_contract_action(const TextDocument& document,
                                                                const engine::analysis::Analysis& analysis,
                                                                const std::string& kernel, nlohmann::json base);

// Adds the edit for the version the action was listed for. Throws RpcError(InvalidParams)
// when the kernel has a contract now or is gone.
protocol::lsp::CodeAction resolve_launch_contract(protocol::lsp::CodeAction action, const TextDocument& document,
                                                  const engine::analysis::Analysis& analysis, PositionEncoding encoding,
                                                  bool document_changes);

}  // namespace hiera::server
