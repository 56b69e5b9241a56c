#pragma once
// file:// URIs for paths the server links to (knowledge recipes, reports):
// RFC 3986 percent-encoding of everything but unreserved characters and '/'.
#include <filesystem>
#include <string>

namespace hiera::server {

std::string file_uri(const std::filesystem::path& absolute_path);

}  // namespace hiera::server
