'use strict';
// "Add launch contract" through a real client against the real `hiera lsp`:
// an unannotated CUDA kernel (fixtures/vector_add.cu) offers the action, its
// resolved edit is applied as an editor applies a WorkspaceEdit
// (TextDocument.applyEdits, then didChange), the text is checked exactly, the
// new contract has no annotation diagnostics, and a Profile of the kernel then
// starts as a job on the CPU worker (worker.device "cpu", asked for
// explicitly). Run by ctest as hiera_e2e_node_features (run.sh features).
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const h = require('../lib/harness');

const VECTOR_ADD = h.fixture('vector_add.cu');
const { range } = h;

// The lines the action inserts, exactly (the Neovim test reads the same file).
const CONTRACT = h.fixture('vector_add.contract.txt');

test('Add launch contract on an unannotated kernel, applied, then Profile starts on the CPU worker', { timeout: 60000 }, async (t) => {
  const dir = h.scratchDir(t, 'hiera-e2e-contract-');
  await h.withSession(h.startHiera, async (s) => {
    await s.initialize(h.fullCapabilities(), {
      initializationOptions: { worker: { command: [h.hieraBin(), 'worker'], device: 'cpu' }, runsDir: path.join(dir, 'runs') },
    });
    const uri = h.uriOf(path.join(dir, 'vector_add.cu'));
    await s.open(uri, 'cuda', VECTOR_ADD);
    await s.waitForDiagnostics(uri, 1);

    // On the kernel's name: the kernel's actions, the contract last; listed without its edit.
    const listed = await s.codeActions(uri, range(3, 18, 3, 18));
    assert.deepEqual(listed.map((a) => [a.title, a.kind]), [
      ['Optimize kernel vector_add', 'refactor.rewrite'],
      ['Profile kernel vector_add', 'source'],
      ['Show task spec for vector_add', 'source'],
      ['Add launch contract', 'source'],
    ]);
    const action = listed[3];
    assert.ok(!action.edit, 'resolved lazily');
    const resolved = await s.request('codeAction/resolve', action);
    assert.deepEqual(resolved.edit, {
      documentChanges: [{ textDocument: { uri, version: 1 }, edits: [{ range: range(3, 0, 3, 0), newText: CONTRACT }] }],
    });

    // Applied as an editor applies it: the lines above the kernel, nothing else changed.
    s.applyWorkspaceEdit(resolved.edit);
    const lines = VECTOR_ADD.split('\n');
    assert.equal(s.text(uri), [...lines.slice(0, 3), ...CONTRACT.split('\n').slice(0, -1), ...lines.slice(3)].join('\n'));
    const after = await s.waitForDiagnostics(uri, 2);
    assert.deepEqual(after.diagnostics.filter((d) => d.code === 'hiera.annotation'), [], 'the inserted contract is well formed');
    const again = await s.codeActions(uri, range(11, 18, 11, 18));
    assert.ok(!again.some((a) => a.title.startsWith('Add launch contract')), 'not offered once the kernel has a contract');

    // Profile the kernel at the new version: a job starts and reports progress.
    const reply = await s.request('workspace/executeCommand', {
      command: 'hiera.profileSymbol', arguments: [{ uri, version: 2, symbol: 'vector_add', kind: 'kernel' }],
    });
    assert.deepEqual(reply, { jobId: 'hiera-job-1' });
    const { event } = await s.waitFor(
      (e) => e.method === '$/progress' && e.params.token === 'hiera-job-1' && e.params.value.kind === 'begin',
      { timeoutMs: 20000, what: 'the profile job beginning' },
    );
    assert.deepEqual(event.params.value, { kind: 'begin', title: 'Profile vector_add', message: 'started', cancellable: true, percentage: 0 });
    const end = await s.waitForProgressEnd('hiera-job-1', 50000);
    assert.equal(end.kind, 'end');
    t.diagnostic(`profile ended: ${end.message}`);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  });
});
