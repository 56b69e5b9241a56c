#include "engine/bench/output_file.h"

#include <fstream>
#include <stdexcept>
#include <string>

#include <unistd.h>

namespace hiera::engine::bench {

void write_file_atomically(const std::filesystem::path& file, std::string_view text) {
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  if (ec) throw std::runtime_error("cannot create " + file.parent_path().string() + ": " + ec.message());
  // Unique per process: concurrent problems never share a temporary.
  std::filesystem::path temporary = file;
  temporary += ".tmp-" + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      std::filesystem::remove(temporary, ec);
      throw std::runtime_error("cannot write " + file.string());
    }
  }
  std::filesystem::rename(temporary, file, ec);
  if (ec) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw std::runtime_error("cannot write " + file.string() + ": " + ec.message());
  }
}

}  // namespace hiera::engine::bench
