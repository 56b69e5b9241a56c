'use strict';
// Unit tests of src/trust.ts and the commands' trust checks against the STUBBED
// `vscode` module (test/support/vscode-stub.js): in an untrusted workspace no
// job start reaches the server, from the commands or from a clicked lens, and
// the user is told why; everything else still passes.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const stub = require('../support/vscode-stub').__stub.install();
const { COMMANDS, createCommands } = require('../../out/commands');
const { JobTracker } = require('../../out/status');
const { JOB_COMMANDS, MANAGE_TRUST, refusal, trustMiddleware } = require('../../out/trust');

const manifest = require(path.join(__dirname, '..', '..', 'package.json'));
const URI = 'file:///w/kernels/add.cu';
const optimizeAction = {
  title: 'Optimize add (CUDA kernel)',
  kind: 'refactor.rewrite',
  command: { title: 'Optimize add', command: 'hiera.optimizeSymbol', arguments: [{ uri: URI, symbol: 'add' }] },
};
const specAction = {
  title: 'Show task spec for add',
  kind: 'source',
  command: { title: 'Show task spec', command: 'hiera.showSpec', arguments: [{ uri: URI, symbol: 'add' }] },
};

function setup(trusted, answers) {
  stub.reset();
  const requests = [];
  const logs = [];
  const client = {
    async sendRequest(method, params) {
      requests.push({ method, params });
      return answers[method](params);
    },
  };
  const deps = {
    client: () => client,
    restart: async () => {},
    tracker: new JobTracker(() => {}),
    patterns: () => ({ optimize: /^Optimize/i, profile: /^Profile/i }),
    log: (line) => logs.push(line),
    trusted: () => trusted,
  };
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp', line: 2 });
  return { requests, logs, commands: createCommands(deps) };
}

const warnings = () => stub.calls.filter((c) => c.method === 'window.showWarningMessage').map((c) => c.args);
const settle = () => new Promise((resolve) => setImmediate(resolve));

test('the manifest declares limited support and restricts the settings that run or send code', () => {
  const trust = manifest.capabilities.untrustedWorkspaces;
  assert.equal(trust.supported, 'limited');
  assert.match(trust.description, /runs no optimize or profile job/);
  assert.deepEqual(trust.restrictedConfigurations, [
    'hiera.server.path',
    'hiera.server.args',
    'hiera.worker.command',
    'hiera.llm.endpoint',
    'hiera.llm.apiKeyEnv',
    'hiera.runsDir',
  ]);
  for (const key of trust.restrictedConfigurations) assert.ok(manifest.contributes.configuration.properties[key], `${key} is a setting`);
});

test('untrusted: Optimize and Profile ask the server nothing and say why, with the trust button', async () => {
  const t = setup(false, {});
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  assert.equal(await t.commands[COMMANDS.profile](), undefined);
  assert.deepEqual(t.requests, []);
  assert.deepEqual(warnings(), [
    [refusal('Optimize'), MANAGE_TRUST],
    [refusal('Profile'), MANAGE_TRUST],
  ]);
  assert.equal(
    refusal('Optimize'),
    "hiera: Optimize is off in an untrusted workspace: a job builds and runs this workspace's code. Trust the workspace to run it; hints, hovers and the outline work without.",
  );
  assert.deepEqual(t.logs, [refusal('Optimize'), refusal('Profile')]);
});

test('untrusted: the task spec still opens (it runs nothing)', async () => {
  const t = setup(false, {
    'textDocument/codeAction': () => [specAction],
    'workspace/executeCommand': () => ({ path: '/w/.hiera/specs/add.md', markdown: '# add' }),
  });
  const done = await t.commands[COMMANDS.showTaskSpec]();
  assert.equal(done.title, specAction.title);
  assert.deepEqual(t.requests.map((r) => r.method), ['textDocument/codeAction', 'workspace/executeCommand']);
  assert.deepEqual(warnings(), []);
});

test('trusted: Optimize reaches the server and starts the job', async () => {
  const t = setup(true, {
    'textDocument/codeAction': () => [optimizeAction],
    'workspace/executeCommand': () => ({ jobId: 'hiera-job-1' }),
  });
  assert.equal((await t.commands[COMMANDS.optimize]()).jobId, 'hiera-job-1');
  assert.deepEqual(t.requests[1].params, { command: 'hiera.optimizeSymbol', arguments: [{ uri: URI, symbol: 'add' }] });
  assert.deepEqual(warnings(), []);
});

test('middleware: a clicked job lens in an untrusted workspace never reaches the server; other commands pass', async () => {
  let trusted = false;
  const logs = [];
  const passed = [];
  const next = (command, args) => {
    passed.push([command, args]);
    return { jobId: 'j' };
  };
  stub.reset();
  const middleware = trustMiddleware(() => trusted, (line) => logs.push(line));
  assert.deepEqual([...JOB_COMMANDS], ['hiera.optimizeSymbol', 'hiera.profileSymbol']);
  assert.equal(middleware.executeCommand('hiera.profileSymbol', [{ symbol: 'add' }], next), undefined);
  assert.equal(middleware.executeCommand('hiera.optimizeSymbol', [], next), undefined);
  assert.deepEqual(middleware.executeCommand('hiera.showSpec', [1], next), { jobId: 'j' });
  assert.deepEqual(middleware.executeCommand('hiera.cancelJob', [], next), { jobId: 'j' });
  assert.deepEqual(passed, [['hiera.showSpec', [1]], ['hiera.cancelJob', []]]);
  assert.deepEqual(logs, [refusal('Profile'), refusal('Optimize')]);
  trusted = true;
  assert.deepEqual(middleware.executeCommand('hiera.optimizeSymbol', [2], next), { jobId: 'j' });
  assert.deepEqual(passed.at(-1), ['hiera.optimizeSymbol', [2]]);
});

test("the refusal's button opens VS Code's trust editor", async () => {
  const t = setup(false, {});
  const opened = [];
  stub.vscode.commands.registerCommand('workbench.trust.manage', () => opened.push(true));
  stub.state.messageAnswer = () => MANAGE_TRUST;
  await t.commands[COMMANDS.optimize]();
  await settle();
  assert.deepEqual(opened, [true]);
});
