#include "server/features/job_commands.h"

namespace hiera::server {

using nlohmann::json;

std::vector<std::string> JobCommands::commands() const { return {"hiera.cancelJob", "hiera.jobs"}; }

json JobCommands::execute_command(const std::string& command, const json& arguments, const FeatureContext& context) {
  if (command == "hiera.jobs") {
    json jobs = json::array();
    for (const auto& job : context.jobs.jobs()) {
      json entry = {{"id", job.id}, {"title", job.title}, {"state", to_string(job.state)}, {"message", job.message}};
      if (job.percentage) entry["percentage"] = *job.percentage;
      if (!job.report_path.empty()) entry["reportPath"] = job.report_path;
      jobs.push_back(entry);
    }
    return jobs;
  }
  // hiera.cancelJob
  if (!arguments.is_array() || arguments.empty() || arguments[0].is_null()) {
    return {{"cancelled", context.jobs.cancel_all()}};
  }
  if (!arguments[0].is_string()) {
    throw protocol::RpcError(protocol::ErrorCode::InvalidParams, "hiera.cancelJob: the argument must be a job id string");
  }
  const auto id = arguments[0].get<std::string>();
  if (!context.jobs.cancel(id)) {
    throw protocol::RpcError(protocol::ErrorCode::InvalidParams, "hiera.cancelJob: no running job " + id);
  }
  return {{"cancelled", 1}};
}

}  // namespace hiera::server
