'use strict';
// Unit tests of src/commands.ts and src/status.ts against a STUBBED `vscode`
// module (test/support/vscode-stub.js): the real VS Code API exists only inside
// a running VS Code, which CI does not have, so a minimal fake stands in for
// window/workspace/commands, and a fake language client answers sendRequest.
// The same commands run against a real server in test/protocol/.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const stub = require('../support/vscode-stub').__stub.install();
const { COMMANDS, SERVER_COMMANDS, createCommands, registerCommands, formatReport } = require('../../out/commands');
const { JobTracker, JobStatusBar, progressMiddleware, statusText } = require('../../out/status');

const manifest = require(path.join(__dirname, '..', '..', 'package.json'));
const URI = 'file:///w/kernels/add.cu';

// A language client as commands.ts sees it: sendRequest(method, params), answered
// by `answers[method](params)`; every request is recorded.
function fakeClient(answers = {}) {
  const requests = [];
  return {
    requests,
    async sendRequest(method, params) {
      requests.push({ method, params });
      const answer = answers[method];
      if (!answer) throw new Error(`unexpected request ${method}`);
      return answer(params);
    },
  };
}

function setup({ client = fakeClient(), running = true, restart = async () => {} } = {}) {
  stub.reset();
  const logs = [];
  const tracker = new JobTracker((line) => logs.push(line));
  const bar = new JobStatusBar(tracker);
  const restarts = [];
  const deps = {
    client: () => (running ? client : undefined),
    restart: async () => {
      restarts.push(true);
      await restart();
    },
    tracker,
    patterns: () => ({ optimize: /^Optimize/i, profile: /^Profile/i }),
    log: (line) => logs.push(line),
  };
  return { client, tracker, bar, deps, logs, restarts, commands: createCommands(deps), item: stub.state.statusBarItems.at(-1) };
}

const messages = (severity) => stub.calls.filter((c) => c.method === `window.show${severity}Message`).map((c) => c.args[0]);

const optimizeAction = {
  title: 'Optimize add (CUDA kernel)',
  kind: 'refactor.rewrite',
  command: { title: 'Optimize add', command: 'hiera.optimize.start', arguments: [{ uri: URI, version: 3, symbol: 'add' }] },
};
const profileAction = {
  title: 'Profile add',
  kind: 'source',
  command: { title: 'Profile add', command: 'hiera.profile.start', arguments: [{ uri: URI, version: 3 }] },
};

test('optimize at the cursor: codeAction at the selection → the matching action → workspace/executeCommand → job tracked', async () => {
  const client = fakeClient({
    'textDocument/codeAction': () => [profileAction, { title: 'hiera-test: unrelated', kind: 'source' }, optimizeAction],
    'workspace/executeCommand': () => ({ jobId: 'hiera-job-7' }),
  });
  const t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp', version: 3, line: 4, character: 2, endLine: 6, endCharacter: 1 });
  const started = await t.commands[COMMANDS.optimize]();
  assert.deepEqual(started, { jobId: 'hiera-job-7', title: optimizeAction.title, result: { jobId: 'hiera-job-7' } });
  assert.deepEqual(client.requests, [
    {
      method: 'textDocument/codeAction',
      params: {
        textDocument: { uri: URI },
        range: { start: { line: 4, character: 2 }, end: { line: 6, character: 1 } },
        context: { diagnostics: [], triggerKind: 1 },
      },
    },
    { method: 'workspace/executeCommand', params: { command: 'hiera.optimize.start', arguments: [{ uri: URI, version: 3, symbol: 'add' }] } },
  ]);
  assert.deepEqual(t.tracker.running().map((j) => [j.token, j.title, j.outcome]), [['hiera-job-7', optimizeAction.title, 'running']]);
  assert.equal(t.item.text, '$(sync~spin) hiera: Optimize add (CUDA kernel)');
  assert.equal(t.item.command, 'hiera.cancel');
  assert.equal(t.item.visible, true);
  assert.deepEqual(messages('Error'), []);
  assert.ok(t.logs.includes('optimize: started job hiera-job-7 (Optimize add (CUDA kernel))'));
});

test('profile uses the profile pattern; a Python file works the same', async () => {
  const client = fakeClient({
    'textDocument/codeAction': () => [optimizeAction, profileAction],
    'workspace/executeCommand': (p) => ({ jobId: `job-for-${p.command}` }),
  });
  const t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: 'file:///w/model.py', languageId: 'python', line: 3 });
  const started = await t.commands[COMMANDS.profile]();
  assert.equal(started.jobId, 'job-for-hiera.profile.start');
  assert.equal(client.requests[0].params.textDocument.uri, 'file:///w/model.py');
});

test('several matching actions: the user picks one; Esc picks none', async () => {
  const second = { ...optimizeAction, title: 'Optimize forward (PyTorch module)', command: { ...optimizeAction.command, command: 'second' } };
  const client = fakeClient({
    'textDocument/codeAction': () => [optimizeAction, second],
    'workspace/executeCommand': (p) => ({ jobId: p.command }),
  });
  const t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp' });
  stub.state.quickPick = (items) => items[1];
  assert.equal((await t.commands[COMMANDS.optimize]()).jobId, 'second');
  const pick = stub.calls.find((c) => c.method === 'window.showQuickPick');
  assert.deepEqual(pick.args[0], [optimizeAction.title, second.title]);
  stub.state.quickPick = () => undefined;
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  assert.equal(client.requests.filter((r) => r.method === 'workspace/executeCommand').length, 1);
});

test('nothing to optimize, no editor, another language, server stopped: a message and no command', async () => {
  const client = fakeClient({ 'textDocument/codeAction': () => [profileAction] });
  let t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp' });
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  assert.deepEqual(messages('Information'), ['hiera: nothing to optimize at the cursor']);

  t = setup({ client });
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  stub.state.activeTextEditor = stub.editor({ uri: 'file:///w/notes.md', languageId: 'markdown' });
  assert.equal(await t.commands[COMMANDS.profile](), undefined);
  assert.deepEqual(messages('Warning'), [
    'hiera: open a CUDA or Python file and put the cursor in the kernel or module to optimize',
    'hiera: open a CUDA or Python file and put the cursor in the kernel or module to profile',
  ]);

  t = setup({ client, running: false });
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp' });
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  assert.match(messages('Warning')[0], /the server is not running/);
  assert.equal(client.requests.length, 1, 'only the first case asked the server');
});

test('an action to resolve: codeAction/resolve, its edit converted and applied, then its command', async () => {
  const edit = { documentChanges: [{ textDocument: { uri: URI, version: 1 }, edits: [] }] };
  const unresolved = { title: 'Optimize with a header', kind: 'refactor.rewrite', data: { feature: 0, payload: 1 } };
  const client = fakeClient({
    'textDocument/codeAction': () => [unresolved],
    'codeAction/resolve': (action) => ({ ...action, edit, command: { title: 'x', command: 'hiera.after' } }),
    'workspace/executeCommand': () => null,
  });
  client.protocol2CodeConverter = { asWorkspaceEdit: async (e) => ({ converted: e }) };
  client.code2ProtocolConverter = { asUri: (uri) => `converted:${uri.toString()}` };
  const t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp' });
  const result = await t.commands[COMMANDS.optimize]();
  assert.deepEqual(result, { title: 'Optimize with a header', result: null });
  assert.deepEqual(client.requests.map((r) => r.method), ['textDocument/codeAction', 'codeAction/resolve', 'workspace/executeCommand']);
  assert.equal(client.requests[0].params.textDocument.uri, `converted:${URI}`);
  assert.deepEqual(client.requests[1].params, unresolved);
  assert.deepEqual(client.requests[2].params, { command: 'hiera.after', arguments: [] });
  assert.deepEqual(stub.calls.filter((c) => c.method === 'workspace.applyEdit').map((c) => c.args[0]), [{ converted: edit }]);
  assert.equal(t.tracker.running().length, 0, 'no jobId, no job');

  // The editor refuses the edit: the command is not run.
  stub.state.applyEdit = () => false;
  stub.calls.length = 0;
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  assert.deepEqual(messages('Warning'), ['hiera: Optimize with a header: the edit was not applied']);
  assert.equal(client.requests.filter((r) => r.method === 'workspace/executeCommand').length, 1);
});

test('a bare Command (older server form) and a disabled action', async () => {
  const client = fakeClient({
    'textDocument/codeAction': () => [{ title: 'Optimize it', command: 'hiera.bare', arguments: [1] }, { title: 'Optimize not', disabled: { reason: 'no GPU' } }],
    'workspace/executeCommand': (p) => ({ jobId: 42, echo: p }),
  });
  const t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp' });
  assert.equal((await t.commands[COMMANDS.optimize]()).jobId, 42);
  assert.deepEqual(client.requests[1].params, { command: 'hiera.bare', arguments: [1] });
  stub.state.quickPick = (items) => items[1];
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  assert.deepEqual(messages('Information'), ['hiera: Optimize not: no GPU']);
});

test('server errors: ContentModified asks to run again; others are shown', async () => {
  const failing = (code, message) => () => {
    throw Object.assign(new Error(message), { code });
  };
  let client = fakeClient({ 'textDocument/codeAction': () => [optimizeAction], 'workspace/executeCommand': failing(-32801, 'the document changed since the action was offered') });
  let t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp' });
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  assert.deepEqual(messages('Warning'), ['hiera: the file changed while the action was prepared; run "optimize" again']);
  client = fakeClient({ 'textDocument/codeAction': failing(-32602, 'document not open: file:///w/kernels/add.cu') });
  t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: URI, languageId: 'cuda-cpp' });
  assert.equal(await t.commands[COMMANDS.optimize](), undefined);
  assert.deepEqual(messages('Error'), ['hiera: optimize failed: document not open: file:///w/kernels/add.cu']);
});

test('cancel: no known job → hiera.cancelJob with no argument; one → its id; several → the user picks', async () => {
  const client = fakeClient({ 'workspace/executeCommand': (p) => ({ cancelled: p.arguments.length === 0 ? 0 : 1 }) });
  const t = setup({ client });
  assert.deepEqual(await t.commands[COMMANDS.cancel](), { cancelled: 0 });
  assert.deepEqual(client.requests.at(-1).params, { command: SERVER_COMMANDS.cancelJob, arguments: [] });
  assert.deepEqual(messages('Information'), ['hiera: no job is running']);

  t.tracker.started('hiera-job-1', 'Optimize add');
  await t.commands[COMMANDS.cancel]();
  assert.deepEqual(client.requests.at(-1).params, { command: 'hiera.cancelJob', arguments: ['hiera-job-1'] });
  assert.equal(messages('Information').at(-1), 'hiera: cancelled 1 job');

  t.tracker.started('hiera-job-2', 'Profile forward');
  stub.state.quickPick = (items) => items.find((i) => i.startsWith('hiera-job-2'));
  await t.commands[COMMANDS.cancel]();
  assert.deepEqual(client.requests.at(-1).params, { command: 'hiera.cancelJob', arguments: ['hiera-job-2'] });
  assert.deepEqual(stub.calls.findLast((c) => c.method === 'window.showQuickPick').args[0], [
    'All running jobs',
    'hiera-job-1: Optimize add',
    'hiera-job-2: Profile forward',
  ]);
  stub.state.quickPick = (items) => items[0];
  await t.commands[COMMANDS.cancel]();
  assert.deepEqual(client.requests.at(-1).params, { command: 'hiera.cancelJob', arguments: [] });

  const gone = fakeClient({
    'workspace/executeCommand': () => {
      throw Object.assign(new Error('hiera.cancelJob: no running job hiera-job-1'), { code: -32602 });
    },
  });
  const t2 = setup({ client: gone });
  t2.tracker.started('hiera-job-1', 'Optimize add');
  assert.equal(await t2.commands[COMMANDS.cancel](), undefined);
  assert.deepEqual(messages('Information'), ['hiera: hiera.cancelJob: no running job hiera-job-1']);
});

test('progress through the client middleware feeds the status bar and still reaches the built-in UI; showReport', async () => {
  const jobs = [{ id: 'hiera-job-3', title: 'hiera optimize', state: 'succeeded', message: 'add: 2.31x faster (verified)', percentage: 100 }];
  const client = fakeClient({ 'workspace/executeCommand': (p) => (p.command === 'hiera.jobs' ? jobs : null) });
  const t = setup({ client });
  assert.equal(t.item.visible, false, 'hidden until a job runs');
  const middleware = progressMiddleware(t.tracker);
  const seen = [];
  const next = (token, value) => seen.push([token, value.kind]);
  middleware.handleWorkDoneProgress('hiera-job-3', { kind: 'begin', title: 'hiera optimize', message: 'planning', percentage: 0, cancellable: true }, next);
  assert.equal(t.item.text, '$(sync~spin) hiera: hiera optimize 0%');
  middleware.handleWorkDoneProgress('hiera-job-3', { kind: 'report', message: 'candidate 3/8', percentage: 40 }, next);
  assert.equal(t.item.text, '$(sync~spin) hiera: hiera optimize 40%');
  assert.equal(t.item.tooltip, 'hiera optimize: candidate 3/8 — click to cancel');
  middleware.handleWorkDoneProgress('hiera-job-3', { kind: 'end', message: 'add: 2.31x faster (verified)' }, next);
  assert.deepEqual(seen, [['hiera-job-3', 'begin'], ['hiera-job-3', 'report'], ['hiera-job-3', 'end']], 'next() called each time');
  assert.equal(t.item.text, '$(check) hiera: add: 2.31x faster (verified)');
  assert.equal(t.item.command, 'hiera.showReport');

  const { text, path: reportPath } = await t.commands[COMMANDS.showReport]();
  assert.equal(reportPath, undefined, 'the job wrote no report file: the summary is shown');
  assert.equal(
    text,
    [
      '# hiera report',
      '',
      '## Last job',
      '',
      '- job: hiera-job-3',
      '- title: hiera optimize',
      '- outcome: finished',
      '- message: add: 2.31x faster (verified)',
      '',
      '## Jobs on the server (hiera.jobs)',
      '',
      '| job | title | state | progress | message |',
      '|---|---|---|---|---|',
      '| hiera-job-3 | hiera optimize | succeeded | 100% | add: 2.31x faster (verified) |',
      '',
    ].join('\n'),
  );
  assert.deepEqual(client.requests.at(-1).params, { command: 'hiera.jobs', arguments: [] });
  const opened = stub.calls.find((c) => c.method === 'workspace.openTextDocument').args[0];
  assert.deepEqual(opened, { content: text, language: 'markdown' });
  assert.ok(stub.calls.some((c) => c.method === 'window.showTextDocument' && c.args[0] === stub.state.documents[0]));

  // With the server stopped the report still opens.
  const stopped = setup({ running: false });
  assert.match((await stopped.commands[COMMANDS.showReport]()).text, /No job has finished in this session\.[\s\S]*The server is not running\./);
});

test('showReport opens the report file hiera.jobs names for the last job; a missing file falls back to the summary', async () => {
  const fs = require('node:fs');
  const os = require('node:os');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hiera-report-'));
  const report = path.join(dir, 'report.md');
  fs.writeFileSync(report, '# hiera optimize: Model\n');
  const older = path.join(dir, 'older.md');
  let jobs = [
    { id: 'hiera-job-1', title: 'Profile Model', state: 'succeeded', message: 'Model: 0.1 ms', reportPath: older },
    { id: 'hiera-job-2', title: 'Optimize Model', state: 'succeeded', message: 'Model: no verified improvement', reportPath: report },
    { id: 'hiera-job-3', title: 'Profile k', state: 'running', message: 'timing', percentage: 0 },
  ];
  const client = fakeClient({ 'workspace/executeCommand': () => jobs });
  const t = setup({ client });
  // No job ended in this window: the newest finished job with a report.
  assert.deepEqual(await t.commands[COMMANDS.showReport](), { path: report });
  const opened = stub.calls.filter((c) => c.method === 'workspace.openTextDocument').map((c) => c.args[0]);
  assert.equal(opened.length, 1);
  assert.equal(opened[0].fsPath, report);
  assert.equal(stub.state.documents[0].getText(), '# hiera optimize: Model\n');
  assert.ok(stub.calls.some((c) => c.method === 'window.showTextDocument' && c.args[0] === stub.state.documents[0]));
  assert.ok(t.logs.includes(`report: ${report}`));

  // The job that ended here is the one shown, even when a newer one has a report...
  t.tracker.onProgress('hiera-job-1', { kind: 'begin', title: 'Profile Model' });
  t.tracker.onProgress('hiera-job-1', { kind: 'end', message: 'Model: 0.1 ms' });
  stub.calls.length = 0;
  const shown = await t.commands[COMMANDS.showReport]();
  assert.equal(shown.path, undefined, `${older} does not exist`);
  assert.deepEqual(messages('Warning'), [`hiera: cannot open the report ${older}: ENOENT: no such file or directory, open '${older}'`]);
  assert.match(shown.text, /- job: hiera-job-1/);
  assert.match(shown.text, /\| hiera-job-2 \| Optimize Model \| succeeded \| {2}\| Model: no verified improvement \|/);
  // ...and one without a report gets the summary, no warning.
  jobs = [{ id: 'hiera-job-1', title: 'Profile Model', state: 'failed', message: 'the worker crashed' }, jobs[1]];
  stub.calls.length = 0;
  assert.match((await t.commands[COMMANDS.showReport]()).text, /outcome: finished/);
  assert.deepEqual(messages('Warning'), []);
  fs.rmSync(dir, { recursive: true });
});

test('show task spec: runs the "Show task spec" action; the server opens the file, or the Markdown opens untitled', async () => {
  const specAction = { title: 'Show task spec for Model', kind: 'source', data: { feature: 'analysis', action: 'spec' } };
  let answer = { markdown: '# Task spec: m.py::Model\n', path: '/w/.hiera/runs/specs/m.py.Model.md', problems: [] };
  const client = fakeClient({
    'textDocument/codeAction': () => [optimizeAction, profileAction, specAction],
    'codeAction/resolve': (a) => ({ ...a, command: { title: a.title, command: 'hiera.showSpec', arguments: [{ uri: 'file:///w/m.py', symbol: 'Model' }] } }),
    'workspace/executeCommand': () => answer,
  });
  const t = setup({ client });
  stub.state.activeTextEditor = stub.editor({ uri: 'file:///w/m.py', languageId: 'python', line: 10 });
  const done = await t.commands[COMMANDS.showTaskSpec]();
  assert.deepEqual(done, { title: 'Show task spec for Model', result: answer });
  assert.deepEqual(client.requests.map((r) => r.method), ['textDocument/codeAction', 'codeAction/resolve', 'workspace/executeCommand']);
  assert.deepEqual(client.requests[2].params, { command: 'hiera.showSpec', arguments: [{ uri: 'file:///w/m.py', symbol: 'Model' }] });
  assert.deepEqual(stub.calls.filter((c) => c.method === 'workspace.openTextDocument'), [], 'window/showDocument from the server opens the file');
  assert.ok(t.logs.includes('task spec: /w/.hiera/runs/specs/m.py.Model.md'));
  assert.equal(t.tracker.running().length, 0, 'no job');

  answer = { markdown: '# Task spec: m.py::Model\n', path: null, problems: [] };
  await t.commands[COMMANDS.showTaskSpec]();
  assert.deepEqual(stub.calls.find((c) => c.method === 'workspace.openTextDocument').args[0], { content: answer.markdown, language: 'markdown' });

  const none = setup({ client: fakeClient({ 'textDocument/codeAction': () => [optimizeAction] }) });
  stub.state.activeTextEditor = stub.editor({ uri: 'file:///w/m.py', languageId: 'python' });
  assert.equal(await none.commands[COMMANDS.showTaskSpec](), undefined);
  assert.deepEqual(messages('Information'), ['hiera: nothing to show the task spec of at the cursor']);
});

test('status bar outcomes; a stopped server ends its running jobs; job ids restart with a new server', () => {
  const t = setup();
  t.tracker.onProgress('a', { kind: 'begin', title: 'one' });
  t.tracker.onProgress('b', { kind: 'begin', title: 'two', percentage: 10 });
  assert.equal(t.item.text, '$(sync~spin) hiera: two 10% (+1)');
  t.tracker.onProgress('b', { kind: 'end', message: 'cancelled' });
  assert.equal(t.item.text, '$(sync~spin) hiera: one', 'the other job is still running');
  t.tracker.serverStopped();
  assert.equal(t.item.text, '$(error) hiera: the server stopped');
  assert.equal(t.tracker.running().length, 0);
  // The new server numbers its jobs from 1 again: "a" is a new job.
  t.tracker.started('a', 'again');
  assert.equal(t.item.text, '$(sync~spin) hiera: again');
  // A job that ended before executeCommand answered is not tracked again.
  t.tracker.onProgress('a', { kind: 'end', message: 'not applied: file:///x.cu changed since the job started (version 1 → 2)' });
  t.tracker.started('a', 'again');
  assert.equal(t.tracker.running().length, 0);
  assert.equal(t.item.text, '$(warning) hiera: not applied: file:///x.cu changed since the job started (version 1 → 2)');
  assert.equal(statusText({ token: 1, title: 't', outcome: 'failed', endMessage: '' }), '$(error) hiera: failed');
  // Refused for want of a GPU: a warning, not the check mark of a finished job.
  t.tracker.started('c', 'Optimize Model');
  const noGpu = 'Model: not started: no GPU: no worker has one (hiera worker answered without a CUDA device).';
  t.tracker.onProgress('c', { kind: 'end', message: noGpu });
  assert.equal(t.tracker.last().outcome, 'no GPU');
  assert.equal(t.item.text, `$(warning) hiera: ${noGpu}`);
  t.tracker.started('d', 'Optimize Model');
  t.tracker.onProgress('d', { kind: 'end', message: 'Model: no verified improvement (0 candidates tried)' });
  assert.equal(t.tracker.last().outcome, 'finished');
  t.bar.dispose();
  assert.equal(t.item.disposed, true);
});

test('restart calls the client restart; a failure is shown', async () => {
  const t = setup();
  await t.commands[COMMANDS.restart]();
  assert.equal(t.restarts.length, 1);
  const failing = setup({
    restart: async () => {
      throw new Error('spawn hiera ENOENT');
    },
  });
  await failing.commands[COMMANDS.restart]();
  assert.deepEqual(messages('Error'), ['hiera: the server did not restart: spawn hiera ENOENT']);
});

test('registered commands are exactly package.json contributes.commands, none clashing with server commands', () => {
  const t = setup();
  const disposables = registerCommands(t.deps);
  const registered = [...stub.state.commands.keys()].sort();
  assert.deepEqual(registered, manifest.contributes.commands.map((c) => c.command).sort());
  assert.deepEqual(registered, Object.values(COMMANDS).sort());
  for (const id of Object.values(SERVER_COMMANDS)) assert.ok(!registered.includes(id), `${id} is the server's`);
  for (const d of disposables) d.dispose();
  assert.equal(stub.state.commands.size, 0);
  assert.equal(formatReport(undefined, [], []).includes('None.'), true);
});

test('package.json: activation, entry point, engines, pinned dependencies', () => {
  assert.equal(manifest.name, 'hiera');
  assert.equal(manifest.publisher, 'hiera');
  assert.equal(manifest.main, './dist/extension.js');
  assert.equal(manifest.engines.vscode, '^1.85.0');
  assert.deepEqual(manifest.activationEvents, ['onLanguage:cuda-cpp', 'onLanguage:python']);
  assert.ok(manifest.repository && manifest.repository.url);
  for (const [name, version] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) {
    assert.match(version, /^\d+\.\d+\.\d+$/, `${name} is pinned to an exact version`);
  }
  assert.match(manifest.dependencies['vscode-languageclient'], /^9\./);
  assert.match(manifest.scripts.build, /--external:vscode/);
  assert.match(manifest.scripts.package, /--no-dependencies/);
});
