#pragma once
// The abstract value of a Python expression as the evaluator tracks it: a
// number, a string, a dtype, a tensor (its shape when known, its dtype, the
// forward op that produced it), a sequence, a layer, or unknown. Enough to
// carry KernelBench sizes into shapes; anything else is unknown.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/analysis/work.h"

namespace hiera::engine::analysis {

struct LayerSpec;  // torch_shape_rules.h

struct PyValue {
  enum class Kind { Unknown, None, Bool, Int, Float, String, Dtype, Tensor, Sequence, Layer, Slice, Ellipsis };
  Kind kind = Kind::Unknown;
  std::int64_t integer = 0;            // Int, Bool
  double real = 0.0;                   // Float
  std::string text;                    // String: its text; Dtype: "float16"; Layer: the attribute name
  std::optional<Shape> shape;          // Tensor
  std::string dtype = "float32";       // Tensor
  std::vector<PyValue> items;          // Sequence; Slice: start, stop, step
  std::shared_ptr<const LayerSpec> layer;  // Layer: how it was constructed
  int producer = -1;                   // Tensor: the forward op that made it (-1: an input or parameter)
  bool from_tensor = false;            // Int / Sequence read off a tensor (x.shape[0], x.unbind())
  bool of_tensors = false;             // Sequence: its items (counted or not) are tensors (x.unbind())

  static PyValue unknown() { return {}; }
  static PyValue of_kind(Kind kind) {
    PyValue p;
    p.kind = kind;
    return p;
  }
  static PyValue of_int(std::int64_t v) {
    PyValue p;
    p.kind = Kind::Int;
    p.integer = v;
    return p;
  }
  static PyValue of_float(double v) {
    PyValue p;
    p.kind = Kind::Float;
    p.real = v;
    return p;
  }
  static PyValue tensor(std::optional<Shape> shape, std::string dtype, int producer = -1) {
    PyValue p;
    p.kind = Kind::Tensor;
    p.shape = std::move(shape);
    p.dtype = std::move(dtype);
    p.producer = producer;
    return p;
  }
  static PyValue sequence(std::vector<PyValue> items) {
    PyValue p;
    p.kind = Kind::Sequence;
    p.items = std::move(items);
    return p;
  }

  bool is_tensor() const { return kind == Kind::Tensor; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  std::optional<std::int64_t> as_int() const {
    if (kind == Kind::Int || kind == Kind::Bool) return integer;
    return std::nullopt;
  }
  std::optional<double> as_double() const {
    if (kind == Kind::Int || kind == Kind::Bool) return static_cast<double>(integer);
    if (kind == Kind::Float) return real;
    return std::nullopt;
  }
  // A shape argument: an Int, or a sequence of Ints (a tuple, a list, x.shape).
  std::optional<Shape> as_shape() const {
    if (auto v = as_int()) return Shape{*v};
    if (kind != Kind::Sequence) return std::nullopt;
    Shape out;
    for (const auto& item : items) {
      const auto v = item.as_int();
      if (!v) return std::nullopt;
      out.push_back(*v);
    }
    return out;
  }
};

}  // namespace hiera::engine::analysis
