#pragma once
// The secrets taken out of a JSON value a worker sent: every string in it,
// object keys included, as SecretRedactor::redact leaves it. A worker's
// results quote candidate text (exceptions, stderr, sources) anywhere.
#include <nlohmann/json.hpp>

#include "engine/common/secret_redactor.h"

namespace hiera::engine::eval {

void redact_strings(nlohmann::json& value, const SecretRedactor& secrets);

}  // namespace hiera::engine::eval
