#pragma once
// The hint vocabulary the front ends show and configure: a Hint with its
// severity and fix (engine/analysis/hint.h), and the catalog of hint rules
// with each rule's id, default severity, explanation and recipe
// (engine/analysis/hint_rules.h). Re-exported here so that front ends include
// only the facade; the rules themselves run inside analyze_source.
#include "engine/analysis/hint.h"
#include "engine/analysis/hint_rules.h"
