#include "engine/optimize/target.h"

#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "engine/common/byte_size.h"

namespace hiera::engine::optimize {

namespace {

std::vector<std::string> all_matches(const std::string& source, const std::regex& pattern) {
  std::vector<std::string> names;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), pattern); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[1].str());
  }
  return names;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& n : names) text += (text.empty() ? "" : ", ") + n;
  return text.empty() ? "none" : text;
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void check_size(const std::filesystem::path& file, std::uintmax_t bytes) {
  if (bytes <= kMaxSourceBytes) return;
  throw TargetError(file.string() + ": " + describe_bytes(bytes) + " is over the limit of " +
                    std::to_string(kMaxSourceBytes >> 20) + " MiB on a source to optimize (a job carries it twice, "
                    "as reference and candidate, in one job-protocol frame of at most 64 MiB)");
}

}  // namespace

Target make_target(const std::filesystem::path& file, std::string symbol, std::string source) {
  check_size(file, source.size());
  Target target{file, std::move(symbol), spec::TargetKind::Pytorch, std::move(source)};
  const std::string ext = file.extension().string();
  if (ext == ".py") {
    static const std::regex module_class(R"((?:^|\n)class\s+([A-Za-z_]\w*)\s*\([^)]*Module[^)]*\)\s*:)");
    const auto modules = all_matches(target.source, module_class);
    if (target.symbol.empty()) {
      if (contains(modules, "Model")) target.symbol = "Model";
      else if (modules.size() == 1) target.symbol = modules.front();
      else throw TargetError(file.string() + ": name the module to optimize (FILE::CLASS); nn.Module classes here: " + joined(modules));
    } else if (!contains(modules, target.symbol)) {
      throw TargetError(file.string() + ": no nn.Module class '" + target.symbol + "' (classes here: " + joined(modules) + ")");
    }
    for (const char* function : {"get_inputs", "get_init_inputs"}) {
      if (!std::regex_search(target.source, std::regex(std::string(R"((?:^|\n)def\s+)") + function + R"(\s*\()"))) {
        throw TargetError(file.string() + ": no " + function + "() function: hiera runs PyTorch modules in KernelBench "
                          "format (the module, get_inputs() and get_init_inputs())");
      }
    }
  } else if (ext == ".cu" || ext == ".cuh") {
    target.kind = spec::TargetKind::Cuda;
    static const std::regex kernel(R"(__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)\s*\()");
    const auto kernels = all_matches(target.source, kernel);
    if (target.symbol.empty()) {
      if (kernels.size() != 1) throw TargetError(file.string() + ": name the kernel to optimize (FILE::KERNEL); kernels here: " + joined(kernels));
      target.symbol = kernels.front();
    } else if (!contains(kernels, target.symbol)) {
      throw TargetError(file.string() + ": no __global__ kernel '" + target.symbol + "' (kernels here: " + joined(kernels) + ")");
    }
  } else {
    throw TargetError(file.string() + ": hiera optimizes PyTorch modules (.py) and CUDA kernels (.cu, .cuh), not '" + ext + "' files");
  }
  return target;
}

Target load_target(std::string_view spec) {
  std::string file(spec), symbol;
  if (const auto at = spec.rfind("::"); at != std::string_view::npos) {
    file = std::string(spec.substr(0, at));
    symbol = std::string(spec.substr(at + 2));
    if (symbol.empty()) throw TargetError("'" + std::string(spec) + "': the symbol after '::' is empty");
  }
  std::ifstream in(file, std::ios::binary);
  if (!in) throw TargetError(file + ": cannot read the file");
  std::error_code ec;
  if (const auto bytes = std::filesystem::file_size(file, ec); !ec) check_size(file, bytes);  // before reading it
  std::ostringstream text;
  text << in.rdbuf();
  return make_target(file, symbol, text.str());
}

std::string Target::reference_source() const {
  if (kind != spec::TargetKind::Pytorch || symbol == "Model") return source;
  return source + "\n\nModel = " + symbol + "  # added by hiera: the runner's entry point\n";
}

std::string Target::reference_as_candidate() const {
  if (kind != spec::TargetKind::Pytorch) return source;
  static const std::regex model(R"(\bModel\b)");
  const std::string renamed = symbol == "Model" ? std::regex_replace(source, model, "ModelNew")
                                                : source + "\n\nModelNew = " + symbol + "\n";
  return renamed;
}

}  // namespace hiera::engine::optimize
