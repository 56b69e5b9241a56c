'use strict';
// The optimize command end to end against hiera-test-lsp (HIERA_TEST_LSP), with
// the extension's own src/commands.ts and src/status.ts. Only the editor is
// fake: `vscode` is the STUB of test/support/vscode-stub.js (the real VS Code
// is not available in CI), and a thin adapter (test/support/lsp.js) stands in
// for vscode-languageclient: sendRequest over a vscode-languageserver-protocol
// connection, progress tokens created and routed through status.ts's
// middleware, applyEdit applied to the client's copy of the document.
//
// hiera-test-lsp offers the code action "hiera-test: run test job" (a job with
// $/progress that ends in a versioned workspace/applyEdit); the extension's
// configurable title pattern (hiera.actions.optimizePattern) selects it.
const test = require('node:test');
const assert = require('node:assert/strict');
const stub = require('../support/vscode-stub').__stub.install();
const { binary, withClient } = require('../support/lsp');
const settings = require('../../out/settings');
const { COMMANDS, createCommands } = require('../../out/commands');
const { JobTracker, JobStatusBar, progressMiddleware } = require('../../out/status');

const testServer = binary('HIERA_TEST_LSP');
const skip = testServer ? false : 'HIERA_TEST_LSP is not set (ctest sets it to the built hiera-test-lsp)';

const URI = 'file:///tmp/hiera-vscode/vector_add.cu';
const TEXT = '__global__ void add(const float* a, float* b, int n) {\n  int i = threadIdx.x;\n  if (i < n) b[i] += a[i];\n}\n';
const USER = settings.configurationFrom({ 'actions.optimizePattern': '^hiera-test: run test job$', gpu: 'H200' });

function extensionLike() {
  stub.reset();
  const logs = [];
  const tracker = new JobTracker((line) => logs.push(line));
  const bar = new JobStatusBar(tracker);
  const item = stub.state.statusBarItems.at(-1);
  const texts = [];
  tracker.onDidChange(() => texts.push(item.text));
  return { tracker, bar, item, texts, logs, middleware: progressMiddleware(tracker) };
}

function start(ext, body) {
  return withClient(
    {
      bin: testServer,
      args: [],
      middleware: ext.middleware,
      answerConfiguration: (items) => settings.configurationAnswer(items, () => USER),
    },
    async (client) => {
      await client.initialize(settings.toServerSettings(USER));
      await client.open(URI, 'cuda-cpp', TEXT);
      const client2 = settings.toClientSettings(USER);
      const commands = createCommands({
        client: () => client,
        restart: async () => {},
        tracker: ext.tracker,
        patterns: () => ({ optimize: client2.optimizePattern, profile: client2.profilePattern }),
        log: (line) => ext.logs.push(line),
      });
      stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp', line: 1, character: 6 });
      return body(client, commands);
    },
  );
}

test('hiera.optimize: codeAction → executeCommand → progress in the status bar and the built-in UI → applyEdit → report', { skip, timeout: 30000 }, () => {
  const ext = extensionLike();
  return start(ext, async (client, commands) => {
    const started = await commands[COMMANDS.optimize]();
    assert.deepEqual(started, { jobId: 'hiera-job-1', title: 'hiera-test: run test job', result: { jobId: 'hiera-job-1' } });
    const job = await ext.tracker.whenEnded('hiera-job-1');
    assert.equal(job.outcome, 'finished');
    assert.equal(job.endMessage, 'done');
    assert.equal(job.title, 'hiera test job', 'the title from the progress begin');

    // The requests the command made, in order.
    const sent = client.of('request', 'window/workDoneProgress/create');
    assert.deepEqual(sent, [{ token: 'hiera-job-1' }]);
    // Every begin/report/end went through the middleware to the built-in progress UI.
    assert.deepEqual(
      client.builtinProgress.map((p) => [p.token, p.value.kind, p.value.percentage ?? null, p.value.message]),
      [
        ['hiera-job-1', 'begin', 0, 'started'],
        ['hiera-job-1', 'report', 20, 'step 1/5'],
        ['hiera-job-1', 'report', 40, 'step 2/5'],
        ['hiera-job-1', 'report', 60, 'step 3/5'],
        ['hiera-job-1', 'report', 80, 'step 4/5'],
        ['hiera-job-1', 'report', 100, 'step 5/5'],
        ['hiera-job-1', 'end', null, 'done'],
      ],
    );
    assert.deepEqual(client.of('notification', '$/progress (unhandled)'), []);
    // The status bar followed the job (the executeCommand answer and the begin may come in either order).
    const running = ext.texts.filter((t) => t.startsWith('$(sync~spin)'));
    assert.ok(running.includes('$(sync~spin) hiera: hiera test job 40%'), JSON.stringify(ext.texts));
    assert.ok(running.includes('$(sync~spin) hiera: hiera test job 100%'), JSON.stringify(ext.texts));
    assert.equal(ext.texts.at(-1), '$(check) hiera: done');
    assert.equal(ext.item.command, 'hiera.showReport');

    // The edit arrived versioned and was applied to the editor's copy.
    const [applyEdit] = client.of('request', 'workspace/applyEdit');
    assert.deepEqual(applyEdit.edit.documentChanges[0].textDocument, { uri: URI, version: 1 });
    assert.equal(client.text(URI), `// hiera-test: job done\n${TEXT}`);

    const { text: report } = await commands[COMMANDS.showReport]();
    assert.match(report, /- job: hiera-job-1\n- title: hiera test job\n- outcome: finished\n- message: done\n/);
    // "done": a job with no optimizer verdict (the server called it "succeeded" before the states were split).
    assert.match(report, /\| hiera-job-1 \| hiera test job \| (done|succeeded) \| 100% \| done \|/);
    assert.equal(stub.state.documents.at(-1).getText(), report);
    assert.deepEqual(await client.shutdownAndExit(), { code: 0, signal: null });
  });
});

test('hiera.cancel cancels the running job through hiera.cancelJob; the status bar shows it', { skip, timeout: 30000 }, () => {
  const ext = extensionLike();
  return start(ext, async (client, commands) => {
    // A long job (50 steps): started the way the optimize command records it.
    const { jobId } = await client.sendRequest('workspace/executeCommand', {
      command: 'hiera.test.slowJob',
      arguments: [{ uri: URI, version: 1, steps: 50, stepMs: 100 }],
    });
    ext.tracker.started(jobId, 'long test job');
    await client.waitFor((e) => e.kind === 'progress' && e.method === jobId && e.params.kind === 'report', 'a progress report');
    assert.equal(ext.item.command, 'hiera.cancel');
    assert.deepEqual(await commands[COMMANDS.cancel](), { cancelled: 1 });
    const job = await ext.tracker.whenEnded(jobId);
    assert.equal(job.outcome, 'cancelled');
    assert.equal(ext.item.text, '$(circle-slash) hiera: cancelled');
    assert.deepEqual(client.of('request', 'workspace/applyEdit'), []);
    assert.equal(client.text(URI), TEXT);
    // Nothing runs now: the command cancels "all" and says so.
    assert.deepEqual(await commands[COMMANDS.cancel](), { cancelled: 0 });
    assert.equal(stub.calls.filter((c) => c.method === 'window.showInformationMessage').at(-1).args[0], 'hiera: no job is running');
    assert.deepEqual(await client.shutdownAndExit(), { code: 0, signal: null });
  });
});

test('the document changed while the job ran: the server does not apply the edit, the status bar says so', { skip, timeout: 30000 }, () => {
  const ext = extensionLike();
  return start(ext, async (client, commands) => {
    const { jobId } = await commands[COMMANDS.optimize]();
    // The user types right after starting it; the server checks the version when the job ends.
    await client.change(URI, `// typing\n${TEXT}`);
    const job = await ext.tracker.whenEnded(jobId);
    assert.equal(job.outcome, 'not applied');
    assert.match(ext.item.text, /^\$\(warning\) hiera: not applied: /);
    assert.deepEqual(client.of('request', 'workspace/applyEdit'), []);
    assert.equal(client.text(URI), `// typing\n${TEXT}`);
    assert.deepEqual(await client.shutdownAndExit(), { code: 0, signal: null });
  });
});
