#include "server/features/symbol_arguments.h"

#include <cctype>
#include <stdexcept>

#include "protocol/error_codes.h"
#include "protocol/message.h"

namespace hiera::server {

using nlohmann::json;
using protocol::ErrorCode;
using protocol::RpcError;

std::filesystem::path path_of_file_uri(const std::string& uri) {
  const std::string scheme = "file://";
  if (uri.compare(0, scheme.size(), scheme) != 0) throw std::invalid_argument("not a file: URI: " + uri);
  std::string rest = uri.substr(scheme.size());
  // file:///path (empty host) or file://localhost/path; any other host is remote.
  if (rest.compare(0, 9, "localhost") == 0) rest = rest.substr(9);
  if (rest.empty() || rest.front() != '/') throw std::invalid_argument("not a local file URI: " + uri);
  std::string path;
  for (std::size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '?' || rest[i] == '#') break;
    if (rest[i] != '%') {
      path += rest[i];
      continue;
    }
    if (i + 2 >= rest.size() || !std::isxdigit(static_cast<unsigned char>(rest[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(rest[i + 2]))) {
      throw std::invalid_argument("bad %-escape in URI: " + uri);
    }
    path += static_cast<char>(std::stoi(rest.substr(i + 1, 2), nullptr, 16));
    i += 2;
  }
  return path;
}

SymbolArguments parse_symbol_arguments(const std::string& command, const json& arguments, const DocumentStore& documents) {
  auto invalid = [&](const std::string& message) { return RpcError(ErrorCode::InvalidParams, command + ": " + message); };
  if (!arguments.is_array() || arguments.size() != 1 || !arguments[0].is_object()) {
    throw invalid(R"(the arguments must be [{"uri", "version", "symbol", "kind"}])");
  }
  const json& a = arguments[0];
  for (const char* field : {"uri", "symbol", "kind"}) {
    if (!a.contains(field) || !a[field].is_string()) throw invalid(std::string(field) + " must be a string");
  }
  if (!a.contains("version") || !a["version"].is_number_integer()) throw invalid("version must be an integer");
  SymbolArguments out;
  const auto uri = a["uri"].get<std::string>();
  out.symbol = a["symbol"].get<std::string>();
  out.kind = a["kind"].get<std::string>();
  if (out.kind != "kernel" && out.kind != "module") throw invalid("kind must be \"kernel\" or \"module\", not \"" + out.kind + "\"");
  if (out.symbol.empty()) throw invalid("symbol is empty");
  out.document = documents.get(uri);
  if (!out.document) throw invalid("document not open: " + uri);
  const auto version = a["version"].get<std::int64_t>();
  if (out.document->version() != version) {
    throw RpcError(ErrorCode::ContentModified, command + ": " + uri + " is at version " +
                                                   std::to_string(out.document->version()) + ", not " +
                                                   std::to_string(version) + " (the document changed)");
  }
  try {
    out.path = path_of_file_uri(uri);
  } catch (const std::invalid_argument& e) {
    throw invalid(e.what());
  }
  try {
    out.target = engine::optimize::make_target(out.path, out.symbol, out.document->text());
  } catch (const engine::optimize::TargetError& e) {
    throw invalid(e.what());
  }
  const bool cuda = out.target.kind == engine::spec::TargetKind::Cuda;
  if (cuda != (out.kind == "kernel")) {
    throw invalid(out.symbol + " is a " + (cuda ? "CUDA kernel" : "PyTorch module") + ", not a " + out.kind);
  }
  return out;
}

}  // namespace hiera::server
