#pragma once
// The one error type of engine/spec: a clause that is not a contract (unknown,
// or nothing checks it), a value a clause cannot take, a malformed spec JSON.
// The message names the clause or field.
#include <stdexcept>

namespace hiera::engine::spec {

class SpecError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace hiera::engine::spec
