# The VS Code extension (editors/vscode): included from tests/e2e/CMakeLists.txt.
#   hiera_vscode_unit (label unit): tsc --noEmit, and node --test unit tests of the
#     settings mapping, commands and status bar against a stubbed `vscode` module.
#   hiera_vscode_e2e (label e2e): esbuild bundle; protocol tests with a
#     vscode-languageserver-protocol client against hiera lsp and hiera-test-lsp;
#     the commands against hiera lsp with hiera-fake-worker (report, task spec);
#     the bundled extension activated against hiera-test-lsp; vsce package →
#     editors/vscode/hiera.vsix, its contents checked.
# Both skip (exit 77) when node, npm or editors/vscode/node_modules is missing;
# scripts/setup installs them (npm ci in editors/vscode). They write dist/, out/
# and hiera.vsix in editors/vscode (ignored by git), hence the resource lock.
get_filename_component(HIERA_VSCODE_DIR "${CMAKE_CURRENT_LIST_DIR}/../../editors/vscode" ABSOLUTE)

add_test(NAME hiera_vscode_unit COMMAND sh "${HIERA_VSCODE_DIR}/run-tests.sh" unit)
add_test(NAME hiera_vscode_e2e COMMAND sh "${HIERA_VSCODE_DIR}/run-tests.sh" e2e)
set_tests_properties(hiera_vscode_unit PROPERTIES LABELS unit)
set_tests_properties(hiera_vscode_e2e PROPERTIES
  LABELS e2e
  ENVIRONMENT "HIERA_TEST_LSP=$<TARGET_FILE:hiera-test-lsp>;HIERA_BIN=$<TARGET_FILE:hiera>;HIERA_FAKE_WORKER=$<TARGET_FILE:hiera-fake-worker>")
set_tests_properties(hiera_vscode_unit hiera_vscode_e2e PROPERTIES
  SKIP_RETURN_CODE 77
  TIMEOUT 180
  RESOURCE_LOCK hiera_vscode_tree)

# hiera_vscode_real (label e2e): the packaged .vsix in a real VS Code, code-server
# in headless Chromium driven by playwright-core (tests/e2e/vscode_real/run.sh):
# the .cu's hints in Problems, the kernel's hover, the Outline, and an Optimize
# job on the CPU worker to its end, each asserted; then, with Workspace Trust on,
# the hint in Restricted Mode and Optimize refused. Skips (77) without chromium or
# the extension's node_modules; its tools come from install.sh's cache, which
# scripts/setup fills (a cold install inside the test takes ~2 minutes).
add_test(NAME hiera_vscode_real COMMAND bash "${CMAKE_CURRENT_LIST_DIR}/vscode_real/run.sh")
set_tests_properties(hiera_vscode_real PROPERTIES
  LABELS e2e
  ENVIRONMENT "HIERA_BIN=$<TARGET_FILE:hiera>"
  SKIP_RETURN_CODE 77
  TIMEOUT 600
  RESOURCE_LOCK hiera_vscode_tree)
