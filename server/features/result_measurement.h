#pragma once
// What an optimizer run measured about the reference, as the server keeps it
// for hover and code lenses (server/state/measurement_store.h): the facade's
// run_measurement (engine/facade/run_measurement.h) with the document's URI,
// the symbol and the time it was taken.
#include <string>

#include "engine/optimize/optimize_result.h"
#include "server/state/measurement_store.h"

namespace hiera::server {

// Reference fields only (`with_optimization` false), or also verified_speedup,
// optimized_median_ms and report_path (only for a result that improved()).
Measurement measurement_of(const engine::optimize::OptimizeResult& result, const std::string& uri,
                           const std::string& symbol, bool with_optimization);

}  // namespace hiera::server
