# The Neovim plugin (editors/nvim) driven end to end in headless Neovim
# against hiera-test-lsp. Included from tests/e2e/CMakeLists.txt; skips
# (exit 77) when nvim is missing.
add_test(NAME hiera_e2e_nvim_plugin COMMAND sh ${CMAKE_CURRENT_LIST_DIR}/nvim_plugin/run.sh)
set_tests_properties(hiera_e2e_nvim_plugin PROPERTIES
  LABELS e2e
  ENVIRONMENT "HIERA_TEST_LSP=$<TARGET_FILE:hiera-test-lsp>;HIERA_BIN=$<TARGET_FILE:hiera>;HIERA_FAKE_WORKER=$<TARGET_FILE:hiera-fake-worker>;HIERA_E2E_FIXTURES=${CMAKE_CURRENT_LIST_DIR}/fixtures"
  SKIP_RETURN_CODE 77
  TIMEOUT 120)
