#pragma once
// The knowledge a front end loads and reads itself: the knowledge base with
// its GPU specs (hovers, estimates, occupancy) and where the installed
// knowledge directory is, re-exported from engine/knowledge so that front
// ends include only the facade.
#include "engine/knowledge/gpu_spec.h"
#include "engine/knowledge/knowledge_base.h"
#include "engine/knowledge/knowledge_dir.h"
