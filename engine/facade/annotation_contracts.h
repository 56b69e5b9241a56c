#pragma once
// What the front ends check and suggest about a source's `hiera:` contract
// annotations: the problems of the annotations written, worded as `hiera
// optimize` words them (engine/spec/annotation_problems.h), and the launch
// contract inferred for a kernel that has none, as the lines to insert
// (engine/spec/launch_contract_inference.h). Re-exported so that front ends
// include only the facade.
#include "engine/spec/annotation_problems.h"
#include "engine/spec/launch_contract_inference.h"
