#pragma once
// How the engine writes quantities (times, bytes, flops, rates, percentages,
// speedups, three significant figures), re-exported from engine/plan/units.h
// so that a front end shows an estimate in the words the planner's reasons
// use, and includes only the facade.
#include "engine/plan/units.h"
