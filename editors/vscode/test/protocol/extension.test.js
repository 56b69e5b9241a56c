'use strict';
// The bundled extension (dist/extension.js, built by `npm run build`) activated
// against a STUBBED `vscode` module (test/support/vscode-stub.js: the real VS
// Code is not available in CI) and the real vscode-languageclient 9 inside the
// bundle, starting hiera-test-lsp (HIERA_TEST_LSP) through
// test/support/tee-server.js, which writes down every message. Checks what the
// stub cannot fake: the server command line from hiera.server.path/args, the
// initializationOptions and the workspace/configuration answer on the wire, the
// server's own commands registered beside ours without a clash, progress reaching
// both the status bar and vscode-languageclient's progress UI (window.withProgress),
// the job's edit applied through workspace.applyEdit, a settings change sent to
// the server, a restart, and a clean stop.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const stub = require('../support/vscode-stub').__stub.install();
const { binary, withTimeout } = require('../support/lsp');
const settings = require('../../out/settings');

const testServer = binary('HIERA_TEST_LSP');
const bundle = path.join(__dirname, '..', '..', 'dist', 'extension.js');
const skip = !testServer
  ? 'HIERA_TEST_LSP is not set (ctest sets it to the built hiera-test-lsp)'
  : !fs.existsSync(bundle)
    ? 'dist/extension.js is missing (npm run build)'
    : false;

const URI = 'file:///tmp/hiera-vscode/vector_add.cu';
const TEXT = '__global__ void add(const float* a, float* b, int n) {\n  int i = threadIdx.x;\n  if (i < n) b[i] += a[i];\n}\n';

function readLog(file) {
  if (!fs.existsSync(file)) return [];
  return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

function messages(file, dir) {
  return readLog(file).filter((e) => e.dir === dir).map((e) => e.message);
}

async function until(check, what, ms = 15000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

test('dist/extension.js: activate, settings on the wire, optimize with progress and edit, settings change, restart, deactivate', { skip, timeout: 60000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hiera-vscode-'));
  const log = path.join(dir, 'wire.jsonl');
  stub.reset();
  stub.state.configuration = {
    'server.path': process.execPath,
    'server.args': [path.join(__dirname, '..', 'support', 'tee-server.js'), log, testServer],
    'actions.optimizePattern': '^hiera-test: run test job$',
    gpu: 'H200',
    'llm.apiKeyEnv': 'HIERA_TEST_KEY',
    'hints.disabled': ['test.todo'],
  };
  const user = settings.configurationFrom(stub.state.configuration);
  const document = stub.textDocument(URI, 'cuda-cpp', TEXT);
  stub.state.textDocuments = [document];
  stub.state.activeTextEditor = stub.editor({ document, line: 1, character: 6 });
  const messages = (kind) => readLog(log).filter((e) => e.dir === kind).map((e) => e.message);
  const extension = require(bundle);
  const context = { subscriptions: [], extensionPath: path.join(__dirname, '..', '..') };
  try {
    await withTimeout(extension.activate(context), 20000, 'activate');
    const output = stub.state.outputChannels.find((c) => c.name === 'hiera');
    const problems = () => [
      ...stub.calls.filter((c) => c.method === 'window.showErrorMessage' || c.method === 'window.showWarningMessage').map((c) => c.args[0]),
      ...output.lines.filter((l) => /\[Error|\[Warn/.test(l)),
    ];
    assert.deepEqual(problems(), [], 'activation reported a problem');

    // The command line: hiera.server.path with hiera.server.args as given, nothing appended.
    assert.deepEqual(readLog(log)[0], { argv: [] }, 'the server got no arguments (no --stdio appended)');
    const initialize = messages('to-server').find((m) => m.method === 'initialize');
    assert.deepEqual(initialize.params.initializationOptions, settings.toServerSettings(user));
    assert.equal(initialize.params.initializationOptions.llm.apiKeyEnv, 'HIERA_TEST_KEY');
    assert.equal(initialize.params.capabilities.window.workDoneProgress, true);

    // The server's configuration pull, answered by the extension's middleware with settings.ts's object.
    const pull = await until(() => messages('from-server').find((m) => m.method === 'workspace/configuration'), 'the configuration pull');
    assert.deepEqual(pull.params, { items: [{ section: 'hiera' }] });
    const answer = await until(() => messages('to-server').find((m) => m.id === pull.id && !m.method), 'the configuration answer');
    assert.deepEqual(answer.result, [settings.toServerSettings(user)]);

    // Our commands and the server's (registered by vscode-languageclient) live side by side.
    const ids = [...stub.state.commands.keys()].sort();
    for (const id of ['hiera.optimize', 'hiera.profile', 'hiera.cancel', 'hiera.showReport', 'hiera.showTaskSpec', 'hiera.restartServer', 'hiera.cancelJob', 'hiera.jobs', 'hiera.test.slowJob']) {
      assert.ok(ids.includes(id), `${id} in ${JSON.stringify(ids)}`);
    }
    await until(() => messages('to-server').find((m) => m.method === 'textDocument/didOpen'), 'didOpen of the open .cu file');

    // hiera: Optimize at Cursor.
    const started = await stub.vscode.commands.executeCommand('hiera.optimize');
    assert.equal(started.jobId, 'hiera-job-1');
    const bar = stub.state.statusBarItems[0];
    await until(() => bar.text === '$(check) hiera: done', `the status bar to say done (it says ${JSON.stringify(bar.text)})`);
    assert.equal(bar.command, 'hiera.showReport');
    const codeAction = messages('to-server').find((m) => m.method === 'textDocument/codeAction');
    assert.deepEqual(codeAction.params.range, { start: { line: 1, character: 6 }, end: { line: 1, character: 6 } });
    assert.equal(codeAction.params.textDocument.uri, URI);
    // vscode-languageclient's own progress UI saw the job too (the middleware called next()).
    assert.equal(stub.state.progress.length, 1);
    assert.equal(stub.state.progress[0].options.title, 'hiera test job');
    assert.equal(stub.state.progress[0].options.cancellable, true);
    assert.deepEqual(stub.state.progress[0].reports.map((r) => r.message), ['started', 'step 1/5', 'step 2/5', 'step 3/5', 'step 4/5', 'step 5/5']);
    await until(() => stub.state.progress[0].done, 'the progress UI to close');
    // The job's edit went through the client's applyEdit into the editor.
    const applied = stub.calls.filter((c) => c.method === 'workspace.applyEdit').map((c) => c.args[0]);
    assert.equal(applied.length, 1);
    assert.deepEqual(
      applied[0].changes.map((c) => [c.uri, c.edit.newText, c.metadata && c.metadata.label]),
      [[URI, '// hiera-test: job done\n', 'hiera test job']],
    );
    const applyReply = messages('to-server').find((m) => m.id === messages('from-server').find((r) => r.method === 'workspace/applyEdit').id);
    assert.deepEqual(applyReply.result, { applied: true });

    assert.deepEqual(problems(), [], 'the optimize flow reported a problem');
    const report = (await stub.vscode.commands.executeCommand('hiera.showReport')).text;
    // "done": a job with no optimizer verdict (the server called it "succeeded" before the states were split).
    assert.match(report, /\| hiera-job-1 \| hiera test job \| (done|succeeded) \| 100% \| done \|/);

    // A settings change reaches the running server as the mapped object.
    stub.state.configuration.gpu = 'A100';
    await stub.vscode.workspace.fireConfigurationChange(['gpu']);
    const change = await until(() => messages('to-server').find((m) => m.method === 'workspace/didChangeConfiguration'), 'didChangeConfiguration');
    assert.deepEqual(change.params, { settings: { hiera: settings.toServerSettings(settings.configurationFrom(stub.state.configuration)) } });
    assert.equal(change.params.settings.hiera.gpu, 'A100');

    // hiera: Restart Server: the old process shuts down cleanly, a new one initializes.
    await withTimeout(stub.vscode.commands.executeCommand('hiera.restartServer'), 20000, 'the restart');
    await until(() => readLog(log).filter((e) => e.argv).length === 2, 'a second server process');
    await until(() => messages('to-server').filter((m) => m.method === 'initialize').length === 2, 'a second initialize');
    assert.deepEqual(readLog(log).find((e) => 'exit' in e), { exit: 0, signal: null });
    assert.ok(output.lines.some((l) => l.includes('[job hiera-job-1] hiera test job: done')), 'the job is logged in the output channel');
    // Trusting the workspace (Workspace Trust) restarts the server, so the workspace's restricted settings apply.
    const granted = stub.calls.find((c) => c.method === 'workspace.onDidGrantWorkspaceTrust');
    assert.ok(granted, 'the extension listens for the workspace being trusted');
    granted.args[0]();
    await until(() => readLog(log).filter((e) => e.argv).length === 3, 'a third server process after trust was granted');
    await until(() => messages('to-server').filter((m) => m.method === 'initialize').length === 3, 'a third initialize');
    assert.ok(output.lines.some((l) => l.endsWith('workspace trusted: restarting the server with the workspace settings')));
    assert.deepEqual(problems().filter((p) => !/Server process exited|Connection to server got closed/.test(p)), []);
    if (process.env.HIERA_VSCODE_VERBOSE) console.log(output.lines.join('\n'));
  } finally {
    await withTimeout(extension.deactivate(), 20000, 'deactivate').catch(() => {});
    for (const d of context.subscriptions) d.dispose();
  }
  await until(() => readLog(log).filter((e) => 'exit' in e).length === 3, 'the third server to exit');
  assert.deepEqual(readLog(log).filter((e) => 'exit' in e), [{ exit: 0, signal: null }, { exit: 0, signal: null }, { exit: 0, signal: null }]);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('dist/extension.js: a server path that does not exist is reported; fixing it and restarting recovers', { skip, timeout: 60000 }, async () => {
  stub.reset();
  const missing = '/nonexistent/hiera-for-the-test';
  stub.state.configuration = { 'server.path': missing };
  stub.state.messageAnswer = (text, items) => (items.includes('Restart Server') ? 'Restart Server' : undefined);
  const extension = require(bundle);
  const context = { subscriptions: [] };
  try {
    await withTimeout(extension.activate(context), 20000, 'activate');
    const errors = () => stub.calls.filter((c) => c.method === 'window.showErrorMessage').map((c) => c.args[0]);
    assert.ok(errors().some((m) => m.includes(`could not start "${missing}"`) && m.includes('hiera.server.path')), JSON.stringify(errors()));
    // With no server, the commands say so instead of failing.
    stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp' });
    assert.equal(await stub.vscode.commands.executeCommand('hiera.optimize'), undefined);
    assert.ok(stub.calls.some((c) => c.method === 'window.showWarningMessage' && /the server is not running/.test(c.args[0])));

    // The user fixes hiera.server.path; the extension offers a restart, which starts the new command.
    stub.state.configuration['server.path'] = testServer;
    stub.state.configuration['server.args'] = [];
    await stub.vscode.workspace.fireConfigurationChange(['server.path']);
    assert.ok(stub.calls.some((c) => c.method === 'window.showInformationMessage' && c.args[0] === 'hiera: the server command changed.'));
    const report = (await stub.vscode.commands.executeCommand('hiera.showReport')).text;
    assert.match(report, /## Jobs on the server \(hiera\.jobs\)\n\nNone\./, 'the new server answers hiera.jobs');
  } finally {
    await withTimeout(extension.deactivate(), 20000, 'deactivate').catch(() => {});
    for (const d of context.subscriptions) d.dispose();
  }
});

test('dist/extension.js: deactivate while the server is still starting stops it once it has started', { skip, timeout: 60000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hiera-vscode-'));
  const log = path.join(dir, 'wire.jsonl');
  stub.reset();
  // The server starts 1.5 s late, so the client is still "starting" when VS Code deactivates the extension.
  stub.state.configuration = {
    'server.path': process.execPath,
    'server.args': [path.join(__dirname, '..', 'support', 'tee-server.js'), '--delay-ms', '1500', log, testServer],
  };
  const extension = require(bundle);
  const context = { subscriptions: [] };
  const activating = extension.activate(context);
  const { pid } = await until(() => readLog(log).find((e) => 'pid' in e), 'the server process to start');
  try {
    await withTimeout(extension.deactivate(), 20000, 'deactivate');
    await withTimeout(activating, 20000, 'activate');
    await until(() => readLog(log).find((e) => 'exit' in e), 'the late server to exit');
    assert.deepEqual(readLog(log).filter((e) => 'exit' in e), [{ exit: 0, signal: null }]);
    assert.equal(messages(log, 'to-server').filter((m) => m.method === 'initialize').length, 1);
    // A clean LSP stop: shutdown, then exit, last.
    const methods = messages(log, 'to-server').map((m) => m.method).filter(Boolean);
    assert.deepEqual(methods.slice(methods.indexOf('shutdown')), ['shutdown', 'exit']);
  } finally {
    for (const d of context.subscriptions) d.dispose();
    // A server its client lost would keep this test process alive: end it.
    if (!readLog(log).some((e) => 'exit' in e)) {
      try { process.kill(pid); } catch { /* already gone */ }
    }
  }
  fs.rmSync(dir, { recursive: true, force: true });
});
