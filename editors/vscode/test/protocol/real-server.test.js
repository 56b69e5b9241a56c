'use strict';
// The extension's commands against the real `hiera lsp` (HIERA_BIN) on a
// PyTorch sample: code actions as the server titles them ("Profile
// Model.forward", "Show task spec for Model"), a profile job run by
// hiera-fake-worker (HIERA_FAKE_WORKER: a canned worker, since CI has no GPU)
// whose report file hiera.jobs names and "Show Last Report" opens, and the
// task spec the server writes and asks the editor to show. `vscode` is the
// STUB of test/support/vscode-stub.js, as in optimize-flow.test.js.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const stub = require('../support/vscode-stub').__stub.install();
const { binary, withClient } = require('../support/lsp');
const settings = require('../../out/settings');
const { COMMANDS, createCommands } = require('../../out/commands');
const { JobTracker, JobStatusBar, progressMiddleware } = require('../../out/status');

const hiera = binary('HIERA_BIN');
const fakeWorker = binary('HIERA_FAKE_WORKER');
const skip = hiera && fakeWorker ? false : 'HIERA_BIN or HIERA_FAKE_WORKER is not set (ctest sets both)';

const SAMPLE = path.join(__dirname, '..', '..', '..', '..', 'samples', 'fusion', '07_elementwise_chain.py');

test('real hiera lsp: Profile at Cursor → job with a report → Show Last Report opens it; Show Task Spec', { skip, timeout: 60000 }, async () => {
  stub.reset();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hiera-vscode-real-'));
  const file = path.join(dir, '07_elementwise_chain.py');
  const text = fs.readFileSync(SAMPLE, 'utf8');
  fs.writeFileSync(file, text);
  const uri = `file://${file}`;
  const runs = path.join(dir, 'runs');
  const user = settings.configurationFrom({ 'worker.command': [fakeWorker], runsDir: runs });
  const logs = [];
  const tracker = new JobTracker((line) => logs.push(line));
  const bar = new JobStatusBar(tracker);
  const item = stub.state.statusBarItems.at(-1);
  try {
    await withClient(
      { bin: hiera, args: ['lsp'], middleware: progressMiddleware(tracker), answerConfiguration: (items) => settings.configurationAnswer(items, () => user) },
      async (client) => {
        await client.initialize(settings.toServerSettings(user));
        await client.open(uri, 'python', text);
        const commands = createCommands({
          client: () => client,
          restart: async () => {},
          tracker,
          patterns: () => ({ optimize: /^Optimize/i, profile: /^Profile/i }),
          log: (line) => logs.push(line),
        });
        // The cursor in forward (line 17, "x = x * 2.0").
        stub.state.activeTextEditor = stub.editor({ uri, languageId: 'python', line: 16, character: 8 });

        const started = await commands[COMMANDS.profile]();
        assert.deepEqual(started, { jobId: 'hiera-job-1', title: 'Profile Model.forward', result: { jobId: 'hiera-job-1' } });
        const job = await tracker.whenEnded('hiera-job-1');
        assert.equal(job.outcome, 'finished');
        assert.equal(job.title, 'Profile Model');
        assert.equal(job.endMessage, 'Model: 0.1 ms (p10-p90 0.095-0.11 ms) on Fake GPU');
        assert.equal(item.text, '$(check) hiera: Model: 0.1 ms (p10-p90 0.095-0.11 ms) on Fake GPU');
        assert.equal(item.command, 'hiera.showReport');

        const [entry] = await client.sendRequest('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] });
        assert.match(entry.reportPath, new RegExp(`^${runs}/\\d{8}-\\d{6}-07_elementwise_chain-Model/report\\.md$`));
        const shown = await commands[COMMANDS.showReport]();
        assert.deepEqual(shown, { path: entry.reportPath });
        assert.equal(stub.state.documents.at(-1).uri.fsPath, entry.reportPath);
        assert.equal(stub.state.documents.at(-1).getText(), fs.readFileSync(entry.reportPath, 'utf8'));

        const spec = await commands[COMMANDS.showTaskSpec]();
        assert.equal(spec.title, 'Show task spec for Model');
        const specFile = path.join(runs, 'specs', '07_elementwise_chain.py.Model.md');
        assert.equal(spec.result.path, specFile);
        assert.match(spec.result.markdown, /^# Task spec: 07_elementwise_chain\.py::Model\n/);
        assert.equal(fs.readFileSync(specFile, 'utf8'), spec.result.markdown);
        await client.waitFor((e) => e.kind === 'request' && e.method === 'window/showDocument', 'window/showDocument');
        assert.deepEqual(client.of('request', 'window/showDocument'), [{ uri: `file://${specFile}`, takeFocus: true }]);
        assert.deepEqual(await client.shutdownAndExit(), { code: 0, signal: null });
      },
    );
  } finally {
    bar.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
