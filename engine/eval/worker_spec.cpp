#include "engine/eval/worker_spec.h"

#include <charconv>
#include <stdexcept>

namespace hiera::engine::eval {

namespace {

constexpr std::string_view kSsh = "ssh://";

[[noreturn]] void bad(std::string_view spec, const std::string& why) {
  throw std::invalid_argument("--worker " + std::string(spec) + ": " + why);
}

// A whole decimal number in [low, high], else nullopt.
std::optional<int> number(std::string_view text, int low, int high) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < low || value > high) return std::nullopt;
  return value;
}

bool blank_or_space(std::string_view text) {
  return text.empty() || text.find_first_of(" \t\r\n") != std::string_view::npos;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (;;) {
    const auto at = text.find(separator);
    parts.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return parts;
    text.remove_prefix(at + 1);
  }
}

}  // namespace

WorkerSpecKind worker_spec_kind(std::string_view text) {
  if (text.substr(0, kSsh.size()) == kSsh) return WorkerSpecKind::Ssh;
  if (text == "slurm" || text.substr(0, 6) == "slurm:" || text.substr(0, 6) == "slurm,") return WorkerSpecKind::Slurm;
  return WorkerSpecKind::Command;
}

std::string shell_quote(std::string_view word) {
  const bool safe = !word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                            "0123456789_./-=:,+@%") == std::string_view::npos;
  if (safe) return std::string(word);
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

SshWorkerSpec parse_ssh_worker(std::string_view text) {
  if (worker_spec_kind(text) != WorkerSpecKind::Ssh) bad(text, "not an ssh:// worker");
  SshWorkerSpec spec;
  std::string_view rest = text.substr(kSsh.size());
  if (const auto query = rest.find('?'); query != std::string_view::npos) {
    for (const auto item : split(rest.substr(query + 1), '&')) {
      const auto eq = item.find('=');
      const std::string_view key = item.substr(0, eq);
      if (key != "gpus" || eq == std::string_view::npos) bad(text, "unknown option '" + std::string(item) + "' (known: gpus=N)");
      const auto gpus = number(item.substr(eq + 1), 1, 64);
      if (!gpus) bad(text, "gpus must be a whole number from 1 to 64");
      spec.gpus = *gpus;
    }
    rest = rest.substr(0, query);
  }
  std::string_view authority = rest;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    spec.hiera = std::string(rest.substr(slash));
    if (spec.hiera.size() < 2 || spec.hiera.back() == '/') bad(text, "the path after the host must name the remote hiera executable");
  }
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    spec.user = std::string(authority.substr(0, at));
    if (blank_or_space(spec.user)) bad(text, "the user before '@' is empty or has spaces");
    authority.remove_prefix(at + 1);
  }
  std::string_view host = authority;
  std::string_view port;
  if (!authority.empty() && authority.front() == '[') {  // [::1]:2222
    const auto close = authority.find(']');
    if (close == std::string_view::npos) bad(text, "an IPv6 address needs its closing ']'");
    host = authority.substr(1, close - 1);
    const std::string_view after = authority.substr(close + 1);
    if (!after.empty() && after.front() != ':') bad(text, "only ':PORT' may follow ']'");
    if (!after.empty()) port = after.substr(1);
    if (!after.empty() && port.empty()) bad(text, "the port after ':' is empty");
  } else if (const auto colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
    if (port.empty()) bad(text, "the port after ':' is empty");
  }
  if (blank_or_space(host)) bad(text, "no host (expected ssh://[user@]host[:port][/path/to/hiera])");
  if (host.front() == '-') bad(text, "a host cannot start with '-'");
  spec.host = std::string(host);
  if (!port.empty()) {
    const auto value = number(port, 1, 65535);
    if (!value) bad(text, "the port must be a number from 1 to 65535");
    spec.port = *value;
  }
  return spec;
}

std::vector<std::vector<std::string>> ssh_worker_commands(const SshWorkerSpec& spec,
                                                          const std::vector<std::string>& ssh_command) {
  std::vector<std::string> base = ssh_command.empty() ? std::vector<std::string>{"ssh"} : ssh_command;
  // BatchMode: never a password prompt on a terminal nobody watches. The
  // keep-alives turn a dropped connection into an exit (then a requeue) within
  // 45 s instead of a job timeout; -e none: the stream is binary frames.
  for (const char* option : {"BatchMode=yes", "ServerAliveInterval=15", "ServerAliveCountMax=3"}) {
    base.push_back("-o");
    base.push_back(option);
  }
  base.insert(base.end(), {"-e", "none", "-T"});
  if (spec.port) base.insert(base.end(), {"-p", std::to_string(*spec.port)});
  base.push_back("--");
  base.push_back(spec.user.empty() ? spec.host : spec.user + "@" + spec.host);
  // One string: ssh hands the remote shell its arguments joined by spaces anyway.
  const std::string remote = "exec " + shell_quote(spec.hiera) + " worker";
  std::vector<std::vector<std::string>> commands;
  if (spec.gpus == 0) {
    commands.push_back(base);
    commands.back().push_back(remote);
  }
  for (int i = 0; i < spec.gpus; ++i) {
    commands.push_back(base);
    commands.back().push_back(remote + " --device " + std::to_string(i));
  }
  return commands;
}

SlurmWorkerSpec parse_slurm_worker(std::string_view text) {
  if (worker_spec_kind(text) != WorkerSpecKind::Slurm) bad(text, "not a slurm worker");
  SlurmWorkerSpec spec;
  std::optional<int> workers;
  std::string_view rest = text.substr(5);
  const bool partition_allowed = !rest.empty() && rest.front() == ':';
  if (!rest.empty()) rest.remove_prefix(1);
  bool first = true;
  for (const auto item : rest.empty() ? std::vector<std::string_view>{} : split(rest, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) {
      if (!(first && partition_allowed) || blank_or_space(item)) {
        bad(text, "'" + std::string(item) + "' is not KEY=VALUE (a partition comes first, after 'slurm:')");
      }
      spec.partition = std::string(item);
      first = false;
      continue;
    }
    first = false;
    const std::string_view key = item.substr(0, eq);
    const std::string_view value = item.substr(eq + 1);
    if (blank_or_space(value)) bad(text, std::string(key) + " needs a value without spaces");
    if (key == "partition") {
      spec.partition = std::string(value);
    } else if (key == "gres") {
      // gpu:N or gpu:TYPE:N; the count is what sets the number of workers.
      const auto parts = split(value, ':');
      const auto count = parts.size() >= 2 ? number(parts.back(), 1, 64) : std::nullopt;
      if (parts.front() != "gpu" || parts.size() > 3 || !count) bad(text, "gres must be gpu:N or gpu:TYPE:N (N from 1 to 64)");
      spec.gres = std::string(value);
      spec.gpus_per_node = *count;
    } else if (key == "nodes") {
      const auto n = number(value, 1, 1024);
      if (!n) bad(text, "nodes must be a whole number from 1 to 1024");
      spec.nodes = *n;
    } else if (key == "workers") {
      workers = number(value, 1, 1024);
      if (!workers) bad(text, "workers must be a whole number from 1 to 1024");
    } else if (key == "cpus") {
      const auto n = number(value, 1, 1024);
      if (!n) bad(text, "cpus must be a whole number from 1 to 1024");
      spec.cpus_per_worker = *n;
    } else if (key == "mem") {
      // Slurm's own size syntax: whole units, megabytes unless a suffix says.
      const std::size_t digits = value.find_first_not_of("0123456789");
      const bool suffix_ok = digits == std::string_view::npos ||
                             (digits + 1 == value.size() && std::string_view("KMGTkmgt").find(value[digits]) != std::string_view::npos);
      if (digits == 0 || !suffix_ok) {
        bad(text, "mem must be a size: digits with an optional K, M, G or T suffix (megabytes without), not '" +
                      std::string(value) + "'");
      }
      spec.memory = std::string(value);
    } else if (key == "time") {
      spec.time_limit = std::string(value);
    } else if (key == "jobid") {
      if (!number(value, 1, 2147483647)) bad(text, "jobid must be a Slurm job id (a number)");
      spec.job_id = std::string(value);
    } else if (key == "hiera") {
      spec.hiera = std::string(value);
    } else {
      bad(text, "unknown option '" + std::string(key) + "' (known: partition, gres, nodes, workers, cpus, mem, time, jobid, hiera)");
    }
  }
  spec.workers = workers ? *workers : spec.gpus_per_node > 0 ? spec.gpus_per_node * spec.nodes : spec.nodes;
  return spec;
}

}  // namespace hiera::engine::eval
