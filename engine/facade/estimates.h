#pragma once
// What the front ends estimate costs with before anything is measured: a
// GPU's roofline and the speed-of-light time of a piece of work on it
// (engine/analysis/roofline_time.h, re-exported so that front ends include only
// the facade).
#include "engine/analysis/roofline_time.h"
