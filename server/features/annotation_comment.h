#pragma once
// The evidence comment an optimized kernel or module is delivered with, under
// the names the server's jobs use; it is editor-neutral and lives in the
// engine facade (engine/facade/evidence_comment.h).
#include "engine/facade/evidence_comment.h"

namespace hiera::server {

using engine::facade::annotation_comment;
using engine::facade::Evidence;
using engine::facade::evidence_of;

}  // namespace hiera::server
