#pragma once
// Where the source tree and the built programs are, for the unit tests. They
// come from one source file that CMake generates (build_paths.cpp.in) rather
// than from compile definitions on every test file: then no other file's
// compile command names the checkout, and ccache serves any clone's build.
#include <string>

namespace hiera::testing {

const std::string& source_dir();       // the checkout: knowledge/, tests/fixtures/, scripts/
const std::string& hiera_bin();        // the hiera executable of this build
const std::string& fake_worker_bin();  // tests/support/fake_worker's executable
const std::string& worker_bin();       // hiera-worker; empty where the build has none (no CUDA toolkit)

}  // namespace hiera::testing
