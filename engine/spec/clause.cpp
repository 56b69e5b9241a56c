#include "engine/spec/clause.h"

namespace hiera::engine::spec {

const char* to_string(Family family) {
  switch (family) {
    case Family::Interface: return "interface";
    case Family::Numerics: return "numerics";
    case Family::Invariants: return "invariants";
    case Family::Performance: return "performance";
    case Family::Environment: return "environment";
  }
  return "?";
}

const char* to_string(Source source) {
  switch (source) {
    case Source::Default: return "default";
    case Source::Configuration: return "configuration";
    case Source::Probe: return "probe";
    case Source::Annotation: return "annotation";
  }
  return "?";
}

std::optional<Family> parse_family(std::string_view text) {
  for (Family family : {Family::Interface, Family::Numerics, Family::Invariants, Family::Performance,
                        Family::Environment}) {
    if (text == to_string(family)) return family;
  }
  return std::nullopt;
}

std::optional<Source> parse_source(std::string_view text) {
  for (Source source : {Source::Default, Source::Configuration, Source::Probe, Source::Annotation}) {
    if (text == to_string(source)) return source;
  }
  return std::nullopt;
}

}  // namespace hiera::engine::spec
