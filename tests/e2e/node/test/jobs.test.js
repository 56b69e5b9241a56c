'use strict';
// Code actions, codeAction/resolve, background jobs with $/progress,
// workspace/applyEdit, cancellation, conflicts and $/cancelRequest.
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('../lib/harness');

const T = { timeout: 20000 };
const CU = 'file:///tmp/hiera-e2e/job.cu';
const PY = 'file:///tmp/hiera-e2e/model.py';
const CU_TEXT = '__global__ void add(const float* a, float* b, int n) {\n  int i = threadIdx.x;\n  if (i < n) b[i] += a[i];\n}\n';
const PY_TEXT = 'import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n';

const { range } = h;
const isRequest = (method) => (e) => e.kind === 'request' && e.method === method;

const codeActions = (s, uri) => s.codeActions(uri, range(0, 0, 0, 0));

function slowJob(s, uri, { version = 1, steps = 5, stepMs = 100 } = {}) {
  return s.request('workspace/executeCommand', {
    command: 'hiera.test.slowJob',
    arguments: [{ uri, version, steps, stepMs }],
  });
}

async function waitForReport(s, token, count = 1) {
  await s.waitFor(
    () => s.progress(token).filter((v) => v.kind === 'report').length >= count,
    { what: `${count} progress report(s) of ${token}` },
  );
}

test('code action → executeCommand → progress create/begin/report/end → applyEdit applied by the client', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    const actions = await codeActions(s, CU);
    assert.deepEqual(actions, [
      {
        title: 'hiera-test: run test job',
        kind: 'source',
        command: {
          title: 'hiera-test: run test job',
          command: 'hiera.test.slowJob',
          arguments: [{ uri: CU, version: 1, steps: 5, stepMs: 100 }],
        },
        data: { feature: 1, payload: null },
      },
      {
        title: 'hiera-test: insert header comment',
        kind: 'refactor.rewrite',
        data: { feature: 1, payload: { uri: CU, version: 1 } },
      },
    ]);

    const command = actions[0].command;
    const reply = await s.request('workspace/executeCommand', { command: command.command, arguments: command.arguments });
    assert.deepEqual(reply, { jobId: 'hiera-job-1' });
    const token = reply.jobId;

    const end = await s.waitForProgressEnd(token);
    assert.deepEqual(end, { kind: 'end', message: 'done' });

    // The order of what the server sent about this job.
    const sequence = s.events
      .filter(
        (e) =>
          (e.kind === 'request' && (e.method === 'window/workDoneProgress/create' || e.method === 'workspace/applyEdit')) ||
          (e.method === '$/progress' && e.params.token === token),
      )
      .map((e) => (e.method === '$/progress' ? e.params.value : { request: e.method, params: e.params }));
    assert.deepEqual(sequence, [
      { request: 'window/workDoneProgress/create', params: { token } },
      { kind: 'begin', title: 'hiera test job', cancellable: true, message: 'started', percentage: 0 },
      { kind: 'report', cancellable: true, message: 'step 1/5', percentage: 20 },
      { kind: 'report', cancellable: true, message: 'step 2/5', percentage: 40 },
      { kind: 'report', cancellable: true, message: 'step 3/5', percentage: 60 },
      { kind: 'report', cancellable: true, message: 'step 4/5', percentage: 80 },
      { kind: 'report', cancellable: true, message: 'step 5/5', percentage: 100 },
      {
        request: 'workspace/applyEdit',
        params: {
          label: 'hiera test job',
          edit: {
            documentChanges: [
              {
                textDocument: { uri: CU, version: 1 },
                edits: [{ range: range(0, 0, 0, 0), newText: '// hiera-test: job done\n', annotationId: token }],
              },
            ],
            changeAnnotations: {
              [token]: { label: 'hiera test job', needsConfirmation: false, description: `hiera job ${token}` },
            },
          },
        },
      },
      { kind: 'end', message: 'done' },
    ]);

    // The client applied the edit to its copy (TextDocument.applyEdits) and sent didChange.
    assert.equal(s.text(CU), `// hiera-test: job done\n${CU_TEXT}`);
    assert.equal(s.documents.get(CU).version, 2);
    await s.waitForDiagnostics(CU, 2);
    const lenses = await s.request('textDocument/codeLens', { textDocument: { uri: CU } });
    assert.equal(lenses[0].command.title, 'hiera-test: 6 lines');
    const jobs = await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] });
    assert.deepEqual(jobs, [{ id: token, title: 'hiera test job', state: 'done', message: 'done', percentage: 100 }]);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('codeAction/resolve adds the edit; the client applies it (CUDA "//", Python "#")', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    await s.open(PY, 'python', PY_TEXT);
    for (const [uri, text, prefix] of [
      [CU, CU_TEXT, '// '],
      [PY, PY_TEXT, '# '],
    ]) {
      const header = (await codeActions(s, uri))[1];
      assert.equal(header.edit, undefined, 'the edit is computed on resolve');
      const resolved = await s.request('codeAction/resolve', header);
      assert.deepEqual(resolved, {
        title: 'hiera-test: insert header comment',
        kind: 'refactor.rewrite',
        data: { feature: 1, payload: { uri, version: 1 } },
        edit: {
          documentChanges: [
            { textDocument: { uri, version: 1 }, edits: [{ range: range(0, 0, 0, 0), newText: `${prefix}hiera-test: header\n` }] },
          ],
        },
      });
      s.applyWorkspaceEdit(resolved.edit);
      assert.equal(s.text(uri), `${prefix}hiera-test: header\n${text}`);
      await s.waitForDiagnostics(uri, 2);
    }
    const bad = await s.requestError('codeAction/resolve', { title: 'not ours', data: { something: 1 } });
    assert.equal(bad.code, -32602);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('a client without resolveSupport or documentChanges gets eager edits in "changes" form', T, () =>
  h.withSession(h.startStdio, async (s) => {
    const caps = h.fullCapabilities();
    delete caps.textDocument.codeAction.resolveSupport;
    caps.workspace.workspaceEdit = {};
    await s.initialize(caps);
    await s.open(PY, 'python', PY_TEXT);
    const header = (await codeActions(s, PY))[1];
    assert.deepEqual(header.edit, { changes: { [PY]: [{ range: range(0, 0, 0, 0), newText: '# hiera-test: header\n' }] } });
    s.applyWorkspaceEdit(header.edit);
    assert.equal(s.text(PY), `# hiera-test: header\n${PY_TEXT}`);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('cancel through window/workDoneProgress/cancel: end "cancelled", no applyEdit', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    const { jobId } = await slowJob(s, CU, { steps: 50, stepMs: 100 });
    await waitForReport(s, jobId);
    await s.notify('window/workDoneProgress/cancel', { token: jobId });
    assert.deepEqual(await s.waitForProgressEnd(jobId), { kind: 'end', message: 'cancelled' });
    const reports = s.progress(jobId).filter((v) => v.kind === 'report');
    assert.ok(reports.length < 50, `${reports.length} reports: the job ran to the end`);
    await h.sleep(300);
    assert.equal(s.requests('workspace/applyEdit').length, 0);
    assert.equal(s.text(CU), CU_TEXT);
    const jobs = await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] });
    assert.equal(jobs.length, 1);
    assert.equal(jobs[0].state, 'cancelled');
    assert.equal(jobs[0].message, 'cancelled');
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('cancel through the hiera.cancelJob command: end "cancelled", no applyEdit', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    const { jobId } = await slowJob(s, CU, { steps: 50, stepMs: 100 });
    await waitForReport(s, jobId);
    const running = await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] });
    assert.equal(running[0].state, 'running');
    assert.match(running[0].message, /^step \d+\/50$/);
    assert.deepEqual(await s.request('workspace/executeCommand', { command: 'hiera.cancelJob', arguments: [jobId] }), { cancelled: 1 });
    assert.deepEqual(await s.waitForProgressEnd(jobId), { kind: 'end', message: 'cancelled' });
    await h.sleep(300);
    assert.equal(s.requests('workspace/applyEdit').length, 0);
    const again = await s.requestError('workspace/executeCommand', { command: 'hiera.cancelJob', arguments: [jobId] });
    assert.equal(again.code, -32602);
    assert.equal(again.message, `hiera.cancelJob: no running job ${jobId}`);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('didChange while the job runs: no applyEdit, a warning, end "not applied: ..."', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    const { jobId } = await slowJob(s, CU, { steps: 10, stepMs: 100 });
    await waitForReport(s, jobId);
    await s.change(CU, [{ range: range(1, 0, 1, 0), text: '  // user typing\n' }]);
    const end = await s.waitForProgressEnd(jobId);
    const expected = `not applied: ${CU} changed since the job started (version 1 → 2)`;
    assert.deepEqual(end, { kind: 'end', message: expected });
    assert.ok(end.message.startsWith('not applied:'));
    assert.deepEqual(s.notifications('window/showMessage'), [{ type: 2, message: `hiera: hiera test job: ${expected}` }]);
    await h.sleep(200);
    assert.equal(s.requests('workspace/applyEdit').length, 0);
    assert.equal(s.text(CU), CU_TEXT.replace('\n', '\n  // user typing\n'));
    const jobs = await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] });
    assert.equal(jobs[0].state, 'conflict');
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('a stale version argument fails with ContentModified (-32801)', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    const offered = (await codeActions(s, CU))[0].command;
    await s.change(CU, [{ range: range(0, 0, 0, 0), text: '// edited\n' }]);
    const error = await s.requestError('workspace/executeCommand', { command: offered.command, arguments: offered.arguments });
    assert.equal(error.code, -32801);
    assert.equal(error.message, 'the document changed since the action was offered');
    assert.equal(s.requests('window/workDoneProgress/create').length, 0);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('a client without workDoneProgress gets showMessage/logMessage instead of $/progress', T, () =>
  h.withSession(h.startStdio, async (s) => {
    const caps = h.fullCapabilities();
    delete caps.window;
    caps.workspace.workspaceEdit = {};  // and "changes" instead of documentChanges
    await s.initialize(caps);
    await s.open(PY, 'python', PY_TEXT);
    const { jobId } = await slowJob(s, PY, { steps: 2, stepMs: 50 });
    assert.equal(jobId, 'hiera-job-1');
    const done = 'hiera: hiera test job: done';
    await s.waitFor((e) => e.method === 'window/showMessage' && e.params.message === done, { what: 'the final showMessage' });
    assert.deepEqual(s.notifications('window/showMessage'), [
      { type: 3, message: 'hiera: hiera test job started (job hiera-job-1)' },
      { type: 3, message: done },
    ]);
    assert.deepEqual(
      s.notifications('window/logMessage', (p) => p.message.startsWith('hiera: hiera test job: step')),
      [
        { type: 4, message: 'hiera: hiera test job: step 1/2' },
        { type: 4, message: 'hiera: hiera test job: step 2/2' },
      ],
    );
    assert.equal(s.requests('window/workDoneProgress/create').length, 0);
    assert.equal(s.notifications('$/progress').length, 0);
    assert.deepEqual(s.requests('workspace/applyEdit'), [
      {
        label: 'hiera test job',
        edit: { changes: { [PY]: [{ range: range(0, 0, 0, 0), newText: '# hiera-test: job done\n' }] } },
      },
    ]);
    assert.equal(s.text(PY), `# hiera-test: job done\n${PY_TEXT}`);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('an edit the client refuses ends the job with "not applied: <reason>"', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    s.applyEditAnswer = () => ({ applied: false, failureReason: 'read-only buffer' });
    const { jobId } = await slowJob(s, CU, { steps: 1, stepMs: 10 });
    assert.deepEqual(await s.waitForProgressEnd(jobId), { kind: 'end', message: 'not applied: read-only buffer' });
    assert.equal(s.requests('workspace/applyEdit').length, 1);
    assert.equal(s.text(CU), CU_TEXT);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('$/cancelRequest stops a running hiera.test.block with -32800; the next request is answered', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    const source = new h.CancellationTokenSource();
    const started = Date.now();
    const blocked = s.requestError(
      'workspace/executeCommand',
      { command: 'hiera.test.block', arguments: [{ ms: 10000 }] },
      { token: source.token, timeoutMs: 8000 },
    );
    // Queued behind the blocked message loop.
    const hover = s.hover(CU, 0, 12, { timeoutMs: 8000 });
    await h.sleep(200);
    source.cancel();
    const error = await blocked;
    assert.equal(error.code, -32800);
    assert.ok(Date.now() - started < 5000, 'the block ended long before its 10 s');
    assert.deepEqual(await hover, {
      contents: { kind: 'markdown', value: '`void` at line 0, column 11 (utf-16)' },
      range: range(0, 11, 0, 15),
    });
    // Without a cancel the block runs to its end.
    assert.deepEqual(await s.request('workspace/executeCommand', { command: 'hiera.test.block', arguments: [{ ms: 50 }] }), { blocked: true });
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('shutdown cancels a running job', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(CU, 'cuda-cpp', CU_TEXT);
    const { jobId } = await slowJob(s, CU, { steps: 100, stepMs: 100 });
    await waitForReport(s, jobId);
    assert.equal(await s.request('shutdown', null), null);
    assert.deepEqual(await s.waitForProgressEnd(jobId), { kind: 'end', message: 'cancelled' });
    await s.notify('exit');
    assert.deepEqual(await h.withTimeout(s.exited, 5000, 'exit'), { code: 0, signal: null });
    assert.equal(s.requests('workspace/applyEdit').length, 0);
  }));
