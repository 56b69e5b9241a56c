#pragma once
// What `hiera analyze` prints an analysis with: its JSON form with 0-based
// LSP ranges (engine/analysis/analysis_json.h) and the line and UTF-16
// column of a byte offset (engine/analysis/line_index.h). Re-exported so that
// the CLI includes only the facade.
#include "engine/analysis/analysis_json.h"
#include "engine/analysis/line_index.h"
