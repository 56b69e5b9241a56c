#pragma once
// The per-problem results of a bench output directory, and when one may be
// reused instead of running the problem again (resuming an interrupted or
// extended run): only when it was measured by the same hiera commit on the
// same GPU, from the same problem source, with the same options. Anything
// else (another commit, GPU, source or option; a file that does not parse)
// means the problem runs again, and the reason is said.
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/bench/problem.h"
#include "engine/bench/problem_result.h"

namespace hiera::engine::bench {

// What a stored result must share with this run to be reused.
struct Provenance {
  std::string gpu;
  std::string commit;
  std::string source_sha256;
  nlohmann::json options = nlohmann::json::object();  // everything that shapes a result (the CLI's fingerprint)
};

struct StoredResult {
  std::optional<ProblemResult> reusable;  // set when it may stand for this run
  std::string reason;                     // otherwise why not: "no earlier result", "another commit (abc123)", ...
};

// Compares what a stored result records with this run's provenance.
StoredResult reuse_decision(const ProblemResult& stored, const Problem& problem, const Provenance& current);

class ResultStore {
 public:
  explicit ResultStore(std::filesystem::path out_dir) : out_dir_(std::move(out_dir)) {}

  std::filesystem::path path(const Problem& problem) const { return out_dir_ / result_path(problem); }
  // The stored result of the problem, when one exists and matches `current`.
  StoredResult load(const Problem& problem, const Provenance& current) const;
  // Writes the result whole (output_file.h). Throws std::runtime_error.
  void save(const ProblemResult& result) const;

 private:
  std::filesystem::path out_dir_;
};

}  // namespace hiera::engine::bench
