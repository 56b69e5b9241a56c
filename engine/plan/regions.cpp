// Grouping a profile into regions (regions.h).
#include "engine/plan/regions.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "engine/plan/kernel_families.h"
#include "engine/plan/units.h"

namespace hiera::engine::plan {
namespace {

struct Group {
  std::string name;
  std::string pattern;
  std::optional<std::size_t> op;  // the op that claimed it
  std::vector<std::string> kernels;
  std::int64_t total_ns = 0;
  std::int64_t calls = 0;
};

void add_kernel(Group& group, const ProfiledKernel& kernel) {
  if (std::find(group.kernels.begin(), group.kernels.end(), kernel.name) == group.kernels.end()) {
    group.kernels.push_back(kernel.name);
  }
  group.total_ns += kernel.total_ns;
  group.calls += kernel.calls;
}

int launches_per_call(std::int64_t calls, int runs) {
  return static_cast<int>(std::llround(static_cast<double>(calls) / runs));
}

std::optional<std::size_t> claiming_op(const std::vector<OpWork>& ops, const std::string& family) {
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const auto& families = ops[i].families;
    if (families.empty() ? ops[i].pattern == family
                         : std::find(families.begin(), families.end(), family) != families.end()) {
      return i;
    }
  }
  return std::nullopt;
}

Region whole_module(const KernelProfile& profile, const TaskWork& work, double kernel_ms, double module_ms,
                    std::int64_t calls) {
  Region region;
  region.name = "whole module";
  region.pattern = "whole_module";
  for (const ProfiledKernel& kernel : profile.kernels) {
    if (std::find(region.kernels.begin(), region.kernels.end(), kernel.name) == region.kernels.end()) {
      region.kernels.push_back(kernel.name);
    }
  }
  region.measured_ms = module_ms;
  region.launches = launches_per_call(calls, work.runs);
  region.flops = work.flops;
  region.bytes = work.bytes;
  if (region.flops == 0.0 && region.bytes == 0.0) {
    for (const OpWork& op : work.ops) {
      region.flops += op.flops;
      region.bytes += op.bytes;
    }
  }
  region.dtype = work.dtype;
  region.elements = work.elements;
  region.last_dim = work.last_dim;
  region.note = "one region for the whole module: its launches cost at least half its time";
  if (module_ms > kernel_ms) {
    region.note += " (kernels busy " + format_time_ms(kernel_ms) + " of " + format_time_ms(module_ms) + " per call)";
  }
  return region;
}

}  // namespace

std::vector<Region> regions_from_profile(const KernelProfile& profile, const TaskWork& work, const GpuCeilings& ceilings) {
  if (work.runs < 1) throw std::invalid_argument("the profile must cover at least one run of the reference");
  std::int64_t total_ns = 0, calls = 0;
  for (const ProfiledKernel& kernel : profile.kernels) {
    total_ns += kernel.total_ns;
    calls += kernel.calls;
  }
  if (total_ns == 0) return {};
  const double kernel_ms = static_cast<double>(total_ns) / work.runs / 1e6;
  const double module_ms = std::max(kernel_ms, work.module_ms.value_or(0.0));
  const double launches = static_cast<double>(calls) / work.runs;
  if (launches >= 2.0 && launches * ceilings.launch_overhead_us / 1e3 >= 0.5 * module_ms) {
    return {whole_module(profile, work, kernel_ms, module_ms, calls)};
  }

  // Group: an op's claim first, then the kernel's own family, then the task's pattern.
  std::map<std::string, Group> groups;
  std::vector<std::string> order;  // keys in first-seen order, for stable names
  for (const ProfiledKernel& kernel : profile.kernels) {
    if (kernel.total_ns == 0) continue;
    const auto named_family = kernel_family(kernel.name);
    const std::optional<std::string> family =
        named_family ? named_family : (work.pattern.empty() ? std::nullopt : std::optional(work.pattern));
    const auto op = family ? claiming_op(work.ops, *family) : std::nullopt;
    std::string key = op       ? "op:" + std::to_string(*op)
                      : family ? (named_family ? "family:" : "task:") + *family
                               : "none";
    auto [it, inserted] = groups.try_emplace(key);
    Group& group = it->second;
    if (inserted) {
      order.push_back(key);
      group.op = op;
      if (op) {
        group.name = work.ops[*op].name;
        group.pattern = work.ops[*op].pattern;
      } else {
        group.name = named_family ? *named_family : family ? *family : "other kernels";
        group.pattern = family ? *family : "whole_module";
      }
    }
    add_kernel(group, kernel);
  }
  // A group of kernels no family names is called after its kernel, when it is one.
  for (auto& [key, group] : groups) {
    if ((key.rfind("task:", 0) == 0 || key == "none") && group.kernels.size() == 1) group.name = group.kernels.front();
  }

  double op_flops = 0.0, op_bytes = 0.0;
  for (const OpWork& op : work.ops) {
    op_flops += op.flops;
    op_bytes += op.bytes;
  }
  const double rest_flops = std::max(0.0, work.flops - op_flops);
  const double rest_bytes = std::max(0.0, work.bytes - op_bytes);
  std::int64_t unclaimed_ns = 0;
  int unclaimed = 0;
  for (const auto& [key, group] : groups) {
    if (!group.op) {
      unclaimed_ns += group.total_ns;
      ++unclaimed;
    }
  }

  std::vector<Region> regions;
  for (const std::string& key : order) {
    const Group& group = groups.at(key);
    Region region;
    region.name = group.name;
    region.pattern = group.pattern;
    region.kernels = group.kernels;
    region.measured_ms = static_cast<double>(group.total_ns) / work.runs / 1e6;
    region.launches = launches_per_call(group.calls, work.runs);
    region.dtype = work.dtype;
    region.elements = work.elements;
    region.last_dim = work.last_dim;
    if (group.op) {
      const OpWork& op = work.ops[*group.op];
      region.flops = op.flops;
      region.bytes = op.bytes;
      if (!op.dtype.empty()) region.dtype = op.dtype;
      if (op.elements >= 0) region.elements = op.elements;
      if (op.last_dim) region.last_dim = op.last_dim;
    } else if (rest_flops > 0.0 || rest_bytes > 0.0) {
      if (unclaimed == 1) {
        region.flops = rest_flops;
        region.bytes = rest_bytes;
        if (!work.ops.empty()) region.note = "work: the module's counted totals less the counted ops";
      } else {
        const double share = static_cast<double>(group.total_ns) / static_cast<double>(unclaimed_ns);
        region.flops = rest_flops * share;
        region.bytes = rest_bytes * share;
        const char* of_what = work.ops.empty() ? " of the module's kernel time"
                                               : " of the kernel time outside the counted ops";
        region.note = "flops and bytes apportioned by time (" + format_percent(share) + of_what +
                      "): only the module's totals are counted";
      }
    }
    regions.push_back(std::move(region));
  }
  std::stable_sort(regions.begin(), regions.end(), [](const Region& a, const Region& b) {
    return a.measured_ms != b.measured_ms ? a.measured_ms > b.measured_ms : a.name < b.name;
  });
  return regions;
}

}  // namespace hiera::engine::plan
