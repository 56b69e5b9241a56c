#pragma once
// The edits that put a verified optimization into an open document, as the
// server's jobs apply them (ByteEdit); what they are is the engine facade's
// source splicing (engine/facade/source_splice.h), which this converts.
#include <string>
#include <vector>

#include "engine/facade/source_splice.h"
#include "server/jobs/job.h"

namespace hiera::server {

using OptimizedEditError = engine::facade::SourceSpliceError;

// engine::facade::kernel_replacement as ByteEdits; throws OptimizedEditError as it does.
std::vector<ByteEdit> kernel_replacement(const std::string& document, const std::string& kernel,
                                         const std::string& delivered, const std::string& delivered_kernel,
                                         const std::string& annotation);

// engine::facade::module_insertion as ByteEdits; throws OptimizedEditError as it does.
std::vector<ByteEdit> module_insertion(const std::string& document, const std::string& module,
                                       const std::string& delivered, const std::string& annotation);

}  // namespace hiera::server
