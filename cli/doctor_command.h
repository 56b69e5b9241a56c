#pragma once
// `hiera doctor`: what a first run needs, checked from a terminal, one line
// per check ("ok   ", "warn ", "fail " then the check's name and what it
// found; a warning or failure ends with "; " and how to fix it): hiera
// itself, the configuration file, the knowledge directory, the worker (its
// version, through the job protocol's hello), python with torch, and a GPU
// visible to the worker. Exit code 0 when nothing failed, 1 otherwise.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace hiera::cli {

struct DoctorArgs {
  std::string worker;     // a worker command line or spec; default: worker.command, else `hiera worker`
  std::string config;     // --config; default: $HIERA_CONFIG, else .hiera/config.json here or above
  std::string knowledge;  // --knowledge; default: the installed one
  double handshake_timeout_s = 60;
};

inline constexpr int kDoctorOk = 0;
inline constexpr int kDoctorFailed = 1;

CLI::App* add_doctor_command(CLI::App& app, DoctorArgs& args);
int run_doctor(const DoctorArgs& args, const char* argv0);

}  // namespace hiera::cli
