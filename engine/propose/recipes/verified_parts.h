#pragma once
// Composition from verified parts: every knowledge candidate lists the
// replacements it is made of (Candidate::parts, by part_key), so the run's
// verdicts say which rewrite of which region passed, alone or with others,
// how fast it was alone, and which one broke a candidate. From that the
// proposer stitches the best verified rewrite of every region into one
// module (verified again as a whole like any candidate) and stops offering
// rewrites that failed. Identical regions (a block repeated N times) share a
// part_shape: what one instance showed counts for all of them.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/graph/op_graph.h"
#include "engine/propose/candidate.h"
#include "engine/propose/recipes/replacement.h"

namespace hiera::engine::propose::recipes {

// One replacement of one graph: its recipe, the nodes it covers and a digest
// of what it emits. Two rewrites of the same nodes in different ways differ.
std::string part_key(const Replacement& r);

// The replacement with the graph's node names, its kernels' names and module
// indices (`self.blocks[3]`) made positional: the same rewrite of another
// instance of a repeated block has the same shape.
std::string part_shape(const Replacement& r, const graph::OpGraph& graph);
// part_shape of every replacement of `pool` (the graph's names read once).
std::vector<std::string> part_shapes(const std::vector<Replacement>& pool, const graph::OpGraph& graph);

// What the run's attempts say about one part.
struct PartEvidence {
  bool passed = false;                   // in a candidate that passed verification
  std::optional<double> alone;           // best speedup of a passing candidate made of this part only
  std::optional<double> best_with;       // best speedup of any passing candidate holding it
  std::optional<std::string> twin;       // a part of the same shape whose evidence this one borrows
  bool blamed = false;                   // a candidate of it alone failed, or it was the one unverified part of one
  std::string blame;                     // why, for the proposer's note
};

// Evidence for every part of `pool` (keys[i] is pool[i]'s part_key, shapes[i]
// its part_shape) from the attempts of the run. A failed candidate blames its
// part when it had one, or the only part not seen in a passing candidate; a
// failure before anything ran (a rejected or lost candidate) blames nothing.
// A part with no evidence of its own borrows that of a twin of the same shape.
std::vector<PartEvidence> part_evidence(const std::vector<std::string>& keys, const std::vector<std::string>& shapes,
                                        const std::vector<Attempt>& history);

// The composition: indices into the pool (sorted, non-conflicting) of every
// part verified faster (alone, or in a candidate faster than the reference
// when never tried alone), best first where two rewrite the same region.
// Empty when fewer than two parts qualify (one alone was already tried).
std::vector<std::size_t> compose_verified(const std::vector<Replacement>& pool,
                                          const std::vector<PartEvidence>& evidence);

// Finding the rewrite that broke a failed candidate without trying each alone:
// the most recent failed candidate with two or more parts not yet judged
// (neither passed nor blamed) is bisected. The set is the stitched parts (those
// compose_verified takes) with part of those unjudged: the ones not `risky`
// where both kinds are left (a risky rewrite is the likelier culprit), else
// the first half. When it passes, those are verified; when it fails, the
// search narrows to them; a failure down to one unjudged part blames that part
// (part_evidence). One bad rewrite among N is found in about log2(N)
// candidates instead of N.
struct Bisection {
  std::vector<std::size_t> set;  // indices into the pool, sorted, non-conflicting
  std::string failed;            // the failed candidate's id
  std::size_t tried = 0;         // how many of its unjudged parts the set holds
  std::size_t unjudged = 0;      // how many it has
};
std::optional<Bisection> bisect_failure(const std::vector<Replacement>& pool, const std::vector<std::string>& keys,
                                        const std::vector<PartEvidence>& evidence, const std::vector<Attempt>& history);

// "(1.42x alone)", "(passed in a 1.10x candidate)", "(as 'relu_3', 1.30x alone)": the evidence in a note.
std::string evidence_text(const PartEvidence& e);

}  // namespace hiera::engine::propose::recipes
