#include "engine/bench/result_store.h"

#include <fstream>

#include "engine/bench/output_file.h"

namespace hiera::engine::bench {

StoredResult reuse_decision(const ProblemResult& stored, const Problem& problem, const Provenance& current) {
  if (stored.name != problem.name || stored.group != problem.group) {
    return {std::nullopt, "it records another problem (" + stored.id() + ")"};
  }
  if (stored.outcome == "cancelled") return {std::nullopt, "it was cancelled"};
  if (stored.commit != current.commit) return {std::nullopt, "another hiera commit (" + stored.commit + ")"};
  if (stored.gpu != current.gpu) return {std::nullopt, "measured on another GPU (" + stored.gpu + ")"};
  if (stored.source_sha256 != current.source_sha256) return {std::nullopt, "the problem's source changed"};
  if (stored.options != current.options) return {std::nullopt, "other options"};
  return {stored, "same commit, GPU, source and options"};
}

StoredResult ResultStore::load(const Problem& problem, const Provenance& current) const {
  const std::filesystem::path file = path(problem);
  std::ifstream in(file);
  if (!in) return {std::nullopt, "no earlier result"};
  try {
    return reuse_decision(problem_result_from_json(nlohmann::json::parse(in)), problem, current);
  } catch (const std::exception& e) {
    return {std::nullopt, "the earlier result " + file.string() + " is not readable (" + e.what() + ")"};
  }
}

void ResultStore::save(const ProblemResult& result) const {
  write_file_atomically(path(Problem{result.name, result.group, result.file}), to_json(result).dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

}  // namespace hiera::engine::bench
