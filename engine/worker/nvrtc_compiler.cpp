#include "engine/worker/nvrtc_compiler.h"

#include <chrono>
#include <filesystem>
#include <memory>
#include <regex>

#include <nvrtc.h>

namespace hiera::engine::worker {

namespace {

std::string nvrtc_error(nvrtcResult result) { return nvrtcGetErrorString(result); }

struct ProgramDeleter {
  void operator()(nvrtcProgram* program) const {
    nvrtcDestroyProgram(program);
    delete program;
  }
};

}  // namespace

NvrtcCompiler::NvrtcCompiler(std::optional<std::filesystem::path> cache_dir) {
  if (cache_dir) cache_.emplace(std::move(*cache_dir));
}

std::string NvrtcCompiler::version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<std::string> NvrtcCompiler::toolkit_include_dir() {
#ifdef HIERA_CUDA_INCLUDE_DIR
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(HIERA_CUDA_INCLUDE_DIR) / "cuda_fp16.h", ec)) return HIERA_CUDA_INCLUDE_DIR;
#endif
  return std::nullopt;
}

CompileResult NvrtcCompiler::compile(const CompileRequest& request) const {
  static const std::regex kArch(R"(^sm_\d+[af]?$)");
  if (!std::regex_match(request.arch, kArch)) {
    throw CompileError("arch '" + request.arch + "' is not a real GPU architecture such as sm_90 (a cubin needs one)");
  }
  const auto started = std::chrono::steady_clock::now();
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count();
  };
  CompileResult result;
  const std::string nvrtc_version = version();
  result.key = cubin_cache_key({request.source, request.options, request.arch, nvrtc_version, request.name_expressions});

  if (cache_) {
    if (auto cached = cache_->load(result.key)) {
      bool complete = true;
      for (const auto& name : request.name_expressions) complete = complete && cached->lowered_names.count(name) > 0;
      if (complete) {
        result.ok = true;
        result.cache_hit = true;
        result.cubin = std::move(cached->cubin);
        result.lowered_names = std::move(cached->lowered_names);
        result.compile_ms = elapsed_ms();
        return result;
      }
    }
  }

  std::unique_ptr<nvrtcProgram, ProgramDeleter> program(new nvrtcProgram{});
  if (auto rc = nvrtcCreateProgram(program.get(), request.source.c_str(), request.file_name.c_str(), 0, nullptr, nullptr);
      rc != NVRTC_SUCCESS) {
    delete program.release();
    throw CompileError("nvrtcCreateProgram failed: " + nvrtc_error(rc));
  }
  for (const auto& name : request.name_expressions) {
    if (auto rc = nvrtcAddNameExpression(*program, name.c_str()); rc != NVRTC_SUCCESS) {
      throw CompileError("nvrtcAddNameExpression('" + name + "') failed: " + nvrtc_error(rc));
    }
  }
  std::vector<std::string> options = request.options;
  options.push_back("--gpu-architecture=" + request.arch);
  if (auto include = toolkit_include_dir()) options.push_back("--include-path=" + *include);
  std::vector<const char*> option_ptrs;
  for (const auto& option : options) option_ptrs.push_back(option.c_str());

  const nvrtcResult compiled = nvrtcCompileProgram(*program, static_cast<int>(option_ptrs.size()), option_ptrs.data());
  std::size_t log_size = 0;
  if (nvrtcGetProgramLogSize(*program, &log_size) == NVRTC_SUCCESS && log_size > 1) {
    result.log.resize(log_size);
    nvrtcGetProgramLog(*program, result.log.data());
    result.log.resize(log_size - 1);  // the terminating NUL
  }
  result.diagnostics = parse_nvrtc_log(result.log, request.source, request.line_offset);
  if (compiled != NVRTC_SUCCESS) {
    if (result.log.empty()) result.log = nvrtc_error(compiled);
    result.compile_ms = elapsed_ms();
    return result;
  }

  std::size_t cubin_size = 0;
  if (auto rc = nvrtcGetCUBINSize(*program, &cubin_size); rc != NVRTC_SUCCESS || cubin_size == 0) {
    throw CompileError("NVRTC produced no cubin for " + request.arch + ": " + nvrtc_error(rc));
  }
  result.cubin.resize(cubin_size);
  if (auto rc = nvrtcGetCUBIN(*program, result.cubin.data()); rc != NVRTC_SUCCESS) {
    throw CompileError("nvrtcGetCUBIN failed: " + nvrtc_error(rc));
  }
  for (const auto& name : request.name_expressions) {
    const char* lowered = nullptr;
    if (nvrtcGetLoweredName(*program, name.c_str(), &lowered) != NVRTC_SUCCESS || lowered == nullptr) {
      throw CompileError("NVRTC has no lowered name for '" + name + "'");
    }
    result.lowered_names[name] = lowered;
  }
  result.ok = true;
  result.compile_ms = elapsed_ms();
  if (cache_) cache_->store(result.key, CachedCubin{result.cubin, result.lowered_names});
  return result;
}

}  // namespace hiera::engine::worker
