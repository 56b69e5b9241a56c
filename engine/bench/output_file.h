#pragma once
// Writes a bench output file whole or not at all: the text goes to a
// temporary file beside it, which is then renamed over the target, so a run
// interrupted mid-write never leaves a truncated JSON that a later run would
// trust or choke on.
#include <filesystem>
#include <string_view>

namespace hiera::engine::bench {

// Creates the parent directories. Throws std::runtime_error naming the file.
void write_file_atomically(const std::filesystem::path& file, std::string_view text);

}  // namespace hiera::engine::bench
