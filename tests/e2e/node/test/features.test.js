'use strict';
// The real `hiera lsp` editor features through a real client: hint
// diagnostics, hovers, code lenses, code actions and their resolution, a
// quick fix applied, hiera.explainHint, and "Optimize Model.forward" end to
// end: the real `hiera worker` on CPU torch, an OpenAI-compatible LLM on
// loopback (lib/scripted_llm.js) proposing the batched rewrite of
// tests/fixtures/optimize/row_loop_mlp.py, $/progress, and the versioned
// workspace/applyEdit applied with TextDocument.applyEdits. Run by ctest as
// hiera_e2e_node_features (run.sh features), which skips when no python3
// imports torch or hiera-worker was not built.
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const h = require('../lib/harness');
const { chatReplyWithFile, startScriptedLlm } = require('../lib/scripted_llm');

const { REPO, range, uriOf } = h;
const OPTIMIZE_FIXTURES = path.join(REPO, 'tests/fixtures/optimize');
const SAXPY = h.fixture('saxpy.cu');
const ROW_LOOP = fs.readFileSync(path.join(OPTIMIZE_FIXTURES, 'row_loop_mlp.py'), 'utf8');
const recipe = (id) => uriOf(path.join(REPO, 'knowledge/recipes', `${id}.json`));

// Why the optimizer cannot run here, or null: it needs hiera-worker next to
// hiera and a python3 that imports torch (the worker's PyTorch runner).
function optimizerMissing() {
  const worker = path.join(path.dirname(h.hieraBin()), 'hiera-worker');
  if (!fs.existsSync(worker)) return `${worker} was not built (no CUDA toolkit)`;
  try {
    execFileSync(path.join(REPO, 'scripts/find-torch-python'), { stdio: 'ignore', timeout: 60000 });
  } catch {
    return 'no python3 that imports torch (scripts/find-torch-python)';
  }
  return null;
}
const missing = optimizerMissing();

// A scratch folder per test: the documents' URIs and the runs directory.
const scratch = (t) => h.scratchDir(t, 'hiera-e2e-features-');

// The settings that run the optimizer on the CPU worker with one candidate
// from the scripted LLM and nothing retried: a job takes a few seconds. The
// CPU run is asked for (worker.device): without it a job needs a GPU worker.
function optimizerSettings(llmUrl, runsDir) {
  return {
    worker: { command: [h.hieraBin(), 'worker'], device: 'cpu' },
    llm: { endpoint: llmUrl, model: 'scripted-model', maxRetries: 0 },
    budget: { candidates: 1, minutes: 2 },
    runsDir,
  };
}

const summary = (actions) => actions.map((a) => [a.title, a.kind]);

// Polls `condition` (state outside the session, such as the LLM's requests).
async function until(condition, timeoutMs, what) {
  for (const deadline = Date.now() + timeoutMs; !condition(); await h.sleep(20)) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

test('hiera lsp on a .cu and a .py: diagnostics, hover, code lenses, code actions, a quick fix, explainHint', { timeout: 30000 }, (t) =>
  h.withSession(h.startHiera, async (s) => {
    const dir = scratch(t);
    const init = await s.initialize(h.fullCapabilities(), { initializationOptions: { gpu: 'h200' } });
    assert.deepEqual(init.capabilities.executeCommandProvider.commands, [
      'hiera.cancelJob', 'hiera.jobs', 'hiera.optimizeSymbol', 'hiera.profileSymbol', 'hiera.showSpec', 'hiera.explainHint',
    ]);
    assert.deepEqual(init.capabilities.codeActionProvider, { codeActionKinds: ['quickfix', 'refactor.rewrite', 'source'], resolveProvider: true });

    // CUDA ------------------------------------------------------------------
    const cu = uriOf(path.join(dir, 'saxpy.cu'));
    await s.open(cu, 'cuda', SAXPY);
    const restrict = {
      code: 'cuda.missing_restrict',
      codeDescription: { href: recipe('s3_vectorized_16byte_access') },
      data: { rule: 'cuda.missing_restrict' },
      message: "'x' is only read in 'saxpy': declare it const and __restrict__",
      range: range(5, 38, 5, 46),
      severity: 3,
      source: 'hiera',
    };
    const blockSize = {
      code: 'cuda.block_size',
      codeDescription: { href: recipe('s3_grid_stride_sm_count_grid') },
      data: { rule: 'cuda.block_size' },
      message: 'block of 100 threads is not a multiple of 32: its last warp runs 4 of 32 lanes',
      range: range(11, 26, 11, 29),
      severity: 2,
      source: 'hiera',
    };
    assert.deepEqual(await s.waitForDiagnostics(cu, 1), { uri: cu, version: 1, diagnostics: [restrict, blockSize] });

    const estimate = '**Estimate** on H200: 3.00 µs, launch-bound (at least 3.00 µs a launch; 2.62 µs at speed of light) · 2.1 MFLOP, 12.6 MB (shapes from annotations)';
    assert.deepEqual(await s.hover(cu, 5, 18), {
      contents: { kind: 'markdown', value: `### kernel \`saxpy\`\n\n${estimate}\n\nNot measured yet: run *Profile kernel saxpy*.\n` },
      range: range(5, 16, 5, 21),
    });
    assert.deepEqual(await s.hover(cu, 11, 4), {
      contents: {
        kind: 'markdown',
        value: '### launch of `saxpy` in `run_saxpy`\n\ngrid `(n + 99) / 100` · block `100` (100 threads per block)\n\n' +
          `${estimate}\n\nNot measured yet: run *Profile kernel saxpy*.\n`,
      },
      range: range(11, 2, 11, 44),
    });
    assert.equal(await s.hover(cu, 9, 0), null, 'no hover on a blank line');
    const saxpyArgs = [{ kind: 'kernel', symbol: 'saxpy', uri: cu, version: 1 }];
    assert.deepEqual(await s.request('textDocument/codeLens', { textDocument: { uri: cu } }), [
      { range: range(5, 16, 5, 21), command: { title: 'est. 3.00 µs on H200 (launch-bound)', command: 'hiera.profileSymbol', arguments: saxpyArgs } },
    ]);

    // On `float* x`: the quick fix and the explanation of its hint, then the kernel's actions.
    const listed = await s.codeActions(cu, range(5, 40, 5, 40));
    assert.deepEqual(summary(listed), [
      ['Declare `float* x` const __restrict__', 'quickfix'],
      ['Explain hint cuda.missing_restrict', 'quickfix'],
      ['Optimize kernel saxpy', 'refactor.rewrite'],
      ['Profile kernel saxpy', 'source'],
      ['Show task spec for saxpy', 'source'],
      ['Add launch contract', 'source'],
    ]);
    assert.equal(listed[0].isPreferred, true);
    assert.deepEqual(listed[0].diagnostics, [restrict]);
    for (const action of listed) assert.ok(!action.edit && !action.command, `${action.title} is resolved lazily`);
    const resolved = [];
    for (const action of listed) resolved.push(await s.request('codeAction/resolve', action));
    assert.deepEqual(resolved.slice(1, 5).map((a) => a.command), [
      { title: 'Explain hint cuda.missing_restrict', command: 'hiera.explainHint', arguments: [{ hint: 0, rule: 'cuda.missing_restrict', uri: cu, version: 1 }] },
      { title: 'Optimize kernel saxpy', command: 'hiera.optimizeSymbol', arguments: saxpyArgs },
      { title: 'Profile kernel saxpy', command: 'hiera.profileSymbol', arguments: saxpyArgs },
      { title: 'Show task spec for saxpy', command: 'hiera.showSpec', arguments: saxpyArgs },
    ]);
    // At the launch's block size: the explanation of its hint (it has no fix), then the launched kernel's actions.
    assert.deepEqual(summary(await s.codeActions(cu, range(11, 27, 11, 27))), [
      ['Explain hint cuda.block_size', 'quickfix'],
      ['Optimize kernel saxpy', 'refactor.rewrite'],
      ['Profile kernel saxpy', 'source'],
      ['Show task spec for saxpy', 'source'],
      ['Add launch contract', 'source'],
    ]);

    // hiera.explainHint with the resolved arguments: the rule's explanation, and a one-line message.
    const explainCommand = resolved[1].command;
    const explained = await s.request('workspace/executeCommand', { command: explainCommand.command, arguments: explainCommand.arguments });
    assert.equal(explained.title, 'Hint cuda.missing_restrict');
    assert.ok(
      explained.markdown.startsWith("### cuda.missing_restrict (information)\n\n**'x' is only read in 'saxpy': declare it const and __restrict__**\n\n"),
      explained.markdown,
    );
    assert.ok(explained.markdown.includes('`s3_vectorized_16byte_access`'), explained.markdown);
    const { event: shown } = await s.waitFor((e) => e.method === 'window/showMessage', { what: 'the explanation message' });
    assert.deepEqual(shown.params, { type: 3, message: "hiera cuda.missing_restrict: 'x' is only read in 'saxpy': declare it const and __restrict__" });

    // The quick fix: a versioned edit, applied as an editor would; the hint is gone.
    const fix = resolved[0];
    assert.deepEqual(fix.edit, {
      documentChanges: [{
        textDocument: { uri: cu, version: 1 },
        edits: [
          { range: range(5, 38, 5, 38), newText: 'const ' },
          { range: range(5, 44, 5, 44), newText: ' __restrict__' },
        ],
      }],
    });
    s.applyWorkspaceEdit(fix.edit);
    assert.equal(s.text(cu), SAXPY.replace('float* x, float* y) {', 'const float* __restrict__ x, float* y) {'));
    assert.deepEqual((await s.waitForDiagnostics(cu, 2)).diagnostics, [blockSize]);
    // An action listed for version 1 no longer resolves.
    const stale = await s.requestError('codeAction/resolve', listed[2]);
    assert.equal(stale.code, -32801);

    // Python (KernelBench) ----------------------------------------------------
    const py = uriOf(path.join(dir, 'row_loop_mlp.py'));
    await s.open(py, 'python', ROW_LOOP);
    const loop = {
      code: 'torch.python_loop',
      codeDescription: { href: recipe('s1_batched_matmul_for_loop') },
      data: { rule: 'torch.python_loop' },
      message: 'Python loop over a tensor in forward runs a matmul per iteration: one batched matmul does them all',
      range: range(14, 15, 14, 79),
      severity: 2,
      source: 'hiera',
    };
    assert.deepEqual(await s.waitForDiagnostics(py, 1), { uri: py, version: 1, diagnostics: [loop] });
    assert.deepEqual(await s.hover(py, 8, 8), {
      contents: {
        kind: 'markdown',
        value: "### nn.Module `Model`\n\n1 layer · 3 ops in forward\n\nNo estimate: the shapes of forward's inputs are unknown " +
          "(KernelBench's `get_inputs` gives them).\n\nNot measured yet: run *Profile Model.forward*.\n",
      },
      range: range(8, 6, 8, 11),
    });
    assert.deepEqual(await s.hover(py, 14, 30), {
      contents: {
        kind: 'markdown',
        value: "### `self.linear` (linear) in `Model.forward`\n\nin a loop: the work is per iteration\n\nNo estimate: the shapes of its " +
          "inputs are unknown (KernelBench's `get_inputs` gives them).\n",
      },
      range: range(14, 27, 14, 50),
    });
    const modelArgs = [{ kind: 'module', symbol: 'Model', uri: py, version: 1 }];
    assert.deepEqual(await s.request('textDocument/codeLens', { textDocument: { uri: py } }), [
      { range: range(8, 6, 8, 11), command: { title: 'not measured yet', command: 'hiera.profileSymbol', arguments: modelArgs } },
    ]);
    const pyActions = await s.codeActions(py, range(14, 16, 14, 16));
    assert.deepEqual(summary(pyActions), [
      ['Explain hint torch.python_loop', 'quickfix'],
      ['Optimize Model.forward', 'refactor.rewrite'],
      ['Profile Model.forward', 'source'],
      ['Show task spec for Model', 'source'],
    ]);
    assert.deepEqual((await s.request('codeAction/resolve', pyActions[1])).command,
      { title: 'Optimize Model.forward', command: 'hiera.optimizeSymbol', arguments: modelArgs });
    // Outside any module: nothing to offer.
    assert.deepEqual(await s.codeActions(py, range(4, 0, 4, 0)), []);

    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('Optimize Model.forward: progress, then the verified ModelNew inserted after Model by a versioned edit', { timeout: 60000, skip: missing || false }, async (t) => {
  const dir = scratch(t);
  const llm = await startScriptedLlm([chatReplyWithFile(path.join(OPTIMIZE_FIXTURES, 'replies/correct.py'), 'python', 'One batched linear layer:')]);
  t.after(() => llm.close());
  await h.withSession(h.startHiera, async (s) => {
    const runs = path.join(dir, 'runs');
    await s.initialize(h.fullCapabilities(), { initializationOptions: optimizerSettings(llm.url, runs) });
    const py = uriOf(path.join(dir, 'row_loop_mlp.py'));
    await s.open(py, 'python', ROW_LOOP);
    await s.waitForDiagnostics(py, 1);

    // The action as an editor runs it: list, resolve, execute its command.
    const optimize = (await s.codeActions(py, range(13, 8, 13, 8))).find((a) => a.title === 'Optimize Model.forward');
    const { command } = await s.request('codeAction/resolve', optimize);
    const reply = await s.request('workspace/executeCommand', { command: command.command, arguments: command.arguments });
    assert.deepEqual(reply, { jobId: 'hiera-job-1' });
    const end = await s.waitForProgressEnd('hiera-job-1', 50000);

    assert.deepEqual(s.requests('window/workDoneProgress/create'), [{ token: 'hiera-job-1' }]);
    const values = s.progress('hiera-job-1');
    assert.deepEqual(values[0], { kind: 'begin', title: 'Optimize Model', message: 'started', cancellable: true, percentage: 0 });
    const reports = values.slice(1, -1);
    assert.ok(reports.length >= 3 && reports.every((v) => v.kind === 'report'), JSON.stringify(values));
    const messages = reports.map((v) => v.message);
    for (const expected of ['timing the reference', 'S1 / whole module: asking llm:settings for 1 (0/1 tried, 0 verified)']) {
      assert.ok(messages.includes(expected), `no report "${expected}" in ${JSON.stringify(messages)}`);
    }
    assert.match(messages.at(-1), /^S1 \/ whole module: c1 is \d+\.\d\dx faster than the reference, verified in its delivered form /);
    assert.equal(reports.at(-1).percentage, 100);
    const report = end.message.match(/^Model: (\d+\.\d\d)x faster on cpu, verified; report: (.*\/report\.md)$/);
    assert.ok(report, end.message);
    assert.ok(Number(report[1]) > 1, end.message);
    assert.ok(report[2].startsWith(`${runs}/`) && fs.existsSync(report[2]), report[2]);

    // One edit, for the version the job started from, before the end of the progress.
    const edits = s.requests('workspace/applyEdit');
    assert.equal(edits.length, 1);
    const editAt = s.events.findIndex((e) => e.method === 'workspace/applyEdit');
    const endAt = s.events.findIndex((e) => e.method === '$/progress' && e.params.token === 'hiera-job-1' && e.params.value.kind === 'end');
    assert.ok(editAt < endAt, 'the edit comes before the end of the progress');
    const { edit, label } = edits[0];
    assert.equal(label, `hiera: optimized Model (${report[1]}x)`);
    assert.deepEqual(edit.changeAnnotations, { 'hiera-job-1': { label, description: 'hiera job hiera-job-1', needsConfirmation: false } });
    assert.equal(edit.documentChanges.length, 1);
    assert.deepEqual(edit.documentChanges[0].textDocument, { uri: py, version: 1 });
    const [insertion] = edit.documentChanges[0].edits;
    assert.deepEqual(insertion.range, range(15, 33, 15, 33), 'inserted at the end of Model');
    assert.equal(insertion.annotationId, 'hiera-job-1');

    // The text after the harness applied it (TextDocument.applyEdits) and answered applied: true.
    const after = s.text(py);
    const modelEnd = ROW_LOOP.indexOf('        return torch.cat(rows, 0)\n') + '        return torch.cat(rows, 0)'.length;
    assert.equal(after.slice(0, modelEnd), ROW_LOOP.slice(0, modelEnd), 'the original Model is intact');
    assert.ok(after.endsWith(ROW_LOOP.slice(modelEnd)), 'get_inputs and get_init_inputs follow unchanged');
    const inserted = after.slice(modelEnd, after.length - (ROW_LOOP.length - modelEnd)).split('\n');
    assert.deepEqual(inserted.slice(0, 3), ['', '', '']);
    assert.match(inserted[3], /^# Optimized by hiera on cpu: \d+\.\d\dx faster than the original, verified\.$/);
    assert.match(inserted[4], /^# Median \d+\.\d+ ms -> \d+\.\d+ ms \(p10-p90 .* ms, \d+ timed runs each\)\.$/);
    assert.equal(inserted[5], '# Verified on 6 trials within atol 1e-05, rtol 1e-05 (float32); spaces tried: S1; delivered from S1.');
    assert.equal(inserted[6], `# Full report: ${report[2]}`);
    assert.deepEqual(inserted.slice(7), [
      'class ModelNew(nn.Module):',
      '    def __init__(self, features):',
      '        super().__init__()',
      '        self.linear = nn.Linear(features, features)',
      '',
      '    def forward(self, x):',
      '        # One batched linear layer over all rows, then the ReLU.',
      '        return torch.relu(self.linear(x))',
    ]);
    // The server heard the applied edit as version 2 and analysed it: Model's loop hint is still there, and
    // ModelNew's one batched linear + ReLU is an epilogue cuBLASLt could take.
    assert.equal((await s.waitForDiagnostics(py, 2)).diagnostics.map((d) => d.code).join(), 'torch.python_loop,torch.gemm_epilogue');

    // The measurement recorded once the edit was applied: Model's lens shows it, for version 2.
    const lenses = await s.request('textDocument/codeLens', { textDocument: { uri: py } });
    assert.deepEqual(lenses.map((l) => [l.range.start.line, l.command.arguments[0].symbol, l.command.arguments[0].version]),
      [[8, 'Model', 2], [22, 'ModelNew', 2]]);
    assert.match(lenses[0].command.title, /^[\d.]+ m?s on cpu · verified \d+\.\d+× faster$/);
    assert.equal(lenses[1].command.title, 'not measured yet');

    // The LLM was asked once, for this task.
    assert.equal(llm.requests.length, 1);
    assert.equal(llm.requests[0].url, '/v1/chat/completions');
    const body = JSON.parse(llm.requests[0].body);
    assert.equal(body.model, 'scripted-model');
    assert.ok(llm.requests[0].body.includes('rows = [torch.relu(self.linear(x[i:i + 1]))'), 'the prompt carries the reference');

    // The job is listed as improved with the end message.
    const jobs = await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] });
    assert.deepEqual(jobs.map((j) => [j.id, j.title, j.state, j.message]), [['hiera-job-1', 'Optimize Model', 'improved', end.message]]);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  });
});

test('without a GPU worker and no CPU run asked for, Profile and Optimize stop with "no GPU" and say what to set', { timeout: 60000, skip: missing || false }, async (t) => {
  const dir = scratch(t);
  // The real worker, kept from any GPU the machine has.
  const worker = ['env', 'CUDA_VISIBLE_DEVICES=', h.hieraBin(), 'worker'];
  await h.withSession(h.startHiera, async (s) => {
    await s.initialize(h.fullCapabilities(), {
      initializationOptions: { worker: { command: worker }, llm: {}, runsDir: path.join(dir, 'runs') },
    });
    const py = uriOf(path.join(dir, 'row_loop_mlp.py'));
    await s.open(py, 'python', ROW_LOOP);
    const expected = `Model: not started: no GPU: no worker has one (${worker.join(' ')} answered without a CUDA device). ` +
      'Profiling and optimizing need a GPU worker: set worker.command to one (e.g. ["ssh://gpu-host"], a host with a GPU ' +
      'and hiera installed) or list several in worker.specs (["ssh://gpu-host", "slurm:gpu,gres=gpu:1"]); or ask for a ' +
      'CPU run with worker.device: "cpu" (PyTorch-operator candidates only, timed on the CPU)';
    const jobs = [];
    for (const [command, title] of [['hiera.profileSymbol', 'Profile Model'], ['hiera.optimizeSymbol', 'Optimize Model']]) {
      const { jobId } = await s.request('workspace/executeCommand', {
        command, arguments: [{ uri: py, version: 1, symbol: 'Model', kind: 'module' }],
      });
      assert.deepEqual(await s.waitForProgressEnd(jobId, 40000), { kind: 'end', message: expected });
      // Shown, not only the end of a progress report.
      const { event } = await s.waitFor((e) => e.method === 'window/showMessage' && e.params.message === `hiera: ${title}: ${expected}`,
        { timeoutMs: 5000, what: `the shown refusal of ${title}` });
      assert.equal(event.params.type, 2, 'a warning');
      jobs.push([jobId, title, 'no GPU', expected]);
    }
    const listed = await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] });
    assert.deepEqual(listed.map((j) => [j.id, j.title, j.state, j.message]), jobs);
    assert.deepEqual(s.requests('workspace/applyEdit'), []);
    assert.equal(fs.existsSync(path.join(dir, 'runs')), false, 'nothing ran');
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  });
});

test('a running optimize job is cancelled from the client: end "cancelled", no edit', { timeout: 40000, skip: missing || false }, async (t) => {
  const dir = scratch(t);
  // The LLM holds its answer: the job is still running whenever the cancel arrives.
  const llm = await startScriptedLlm([chatReplyWithFile(path.join(OPTIMIZE_FIXTURES, 'replies/correct.py'), 'python', 'Batched:')], { hold: true });
  t.after(() => llm.close());
  await h.withSession(h.startHiera, async (s) => {
    await s.initialize(h.fullCapabilities(), { initializationOptions: optimizerSettings(llm.url, path.join(dir, 'runs')) });
    const py = uriOf(path.join(dir, 'row_loop_mlp.py'));
    await s.open(py, 'python', ROW_LOOP);
    const reply = await s.request('workspace/executeCommand', {
      command: 'hiera.optimizeSymbol', arguments: [{ uri: py, version: 1, symbol: 'Model', kind: 'module' }],
    });
    const job = reply.jobId;
    await until(() => llm.requests.length === 1, 30000, 'the LLM request');
    await s.notify('window/workDoneProgress/cancel', { token: job });
    const end = await s.waitForProgressEnd(job, 20000);
    llm.release();
    assert.deepEqual(end, { kind: 'end', message: 'cancelled' });
    await h.sleep(300);
    assert.deepEqual(s.requests('workspace/applyEdit'), []);
    assert.equal(s.text(py), ROW_LOOP);
    const jobs = await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] });
    assert.deepEqual(jobs.map((j) => [j.id, j.state, j.message]), [[job, 'cancelled', 'cancelled']]);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  });
});

test('hiera.optimizeSymbol for a version the document has left: -32801, no job', { timeout: 20000 }, (t) =>
  h.withSession(h.startHiera, async (s) => {
    const dir = scratch(t);
    await s.initialize();
    const py = uriOf(path.join(dir, 'row_loop_mlp.py'));
    await s.open(py, 'python', ROW_LOOP);
    const version = await s.change(py, [{ range: range(0, 0, 0, 0), text: '# edited\n' }]);
    assert.equal(version, 2);
    const error = await s.requestError('workspace/executeCommand', {
      command: 'hiera.optimizeSymbol', arguments: [{ uri: py, version: 1, symbol: 'Model', kind: 'module' }],
    });
    assert.equal(error.code, -32801);
    assert.equal(error.message, `hiera.optimizeSymbol: ${py} is at version 2, not 1 (the document changed)`);
    assert.deepEqual(await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] }), []);
    assert.deepEqual(s.requests('window/workDoneProgress/create'), []);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));
