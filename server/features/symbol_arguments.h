#pragma once
// The argument the symbol commands (hiera.optimizeSymbol, hiera.profileSymbol,
// hiera.showSpec) take: [{"uri", "version", "symbol", "kind": "kernel"|"module"}],
// checked against the open document: a stale version is ContentModified, a
// bad or unknown anything is InvalidParams with a message that says which.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/optimize/target.h"
#include "server/documents/document_store.h"

namespace hiera::server {

struct SymbolArguments {
  DocumentStore::Snapshot document;  // the version the command named
  std::string symbol;
  std::string kind;                  // "kernel" | "module"
  std::filesystem::path path;        // the file the uri names
  engine::optimize::Target target;   // made from the document's text, not the file on disk
};

// Throws protocol::RpcError: InvalidParams (no object, a missing or mistyped
// field, an unknown kind, a document not open, not a file: uri, a symbol that
// is no kernel or module there, a kind that does not fit the file),
// ContentModified (the document is at another version).
SymbolArguments parse_symbol_arguments(const std::string& command, const nlohmann::json& arguments,
                                       const DocumentStore& documents);

// "file:///a%20b/x.cu" -> "/a b/x.cu". Throws std::invalid_argument for
// another scheme, a remote host or a bad %-escape.
std::filesystem::path path_of_file_uri(const std::string& uri);

}  // namespace hiera::server
