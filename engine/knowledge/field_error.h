#pragma once
// The one thing wrong with a knowledge file, as found while reading it: the
// field (a JSON path such as "shape.min_elements" or "patterns[2]") and why.
#include <stdexcept>
#include <string>
#include <utility>

namespace hiera::engine::knowledge {

class FieldError : public std::runtime_error {
 public:
  FieldError(std::string field, const std::string& message) : std::runtime_error(message), field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

}  // namespace hiera::engine::knowledge
