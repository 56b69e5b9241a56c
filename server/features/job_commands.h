#pragma once
// Commands every hiera server has: hiera.cancelJob [jobId] (no argument:
// every running job) and hiera.jobs (the status of each job: id, title,
// state, message, percentage while running, reportPath when it wrote one).
#include "server/features/feature.h"

namespace hiera::server {

class JobCommands final : public Feature {
 public:
  std::vector<std::string> commands() const override;
  nlohmann::json execute_command(const std::string& command, const nlohmann::json& arguments,
                                 const FeatureContext& context) override;
};

}  // namespace hiera::server
