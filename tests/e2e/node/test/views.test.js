'use strict';
// The real `hiera lsp`'s views of a document through vscode-languageserver-protocol:
// textDocument/documentSymbol, textDocument/inlayHint, textDocument/definition
// and workspace/symbol on fixtures/saxpy.cu and fixtures/model.py (read, never
// written; the server sees only the text sent in didOpen). No worker needed.
const test = require('node:test');
const assert = require('node:assert/strict');
const { DocumentSymbolRequest, InlayHintRequest, DefinitionRequest, WorkspaceSymbolRequest } = require('vscode-languageserver-protocol');
const h = require('../lib/harness');

const SAXPY = h.fixture('saxpy.cu');
const MODEL = h.fixture('model.py');
const CU = 'file:///tmp/hiera-e2e/views/saxpy.cu';
const PY = 'file:///tmp/hiera-e2e/views/model.py';

const { pos, range } = h;
const SAXPY_COST = 'est. 3.00 µs on H200 (launch-bound)';
const FUNCTION = 12, CLASS = 5, METHOD = 6, EVENT = 24, OPERATOR = 25;

test('hiera lsp: outline, inlay hints, go to definition and workspace symbols on a .cu and a .py', { timeout: 30000 }, () =>
  h.withSession(
    h.startHiera,
    async (s) => {
      const init = await s.initialize(h.fullCapabilities(), { initializationOptions: { gpu: 'H200' } });
      assert.equal(init.capabilities.documentSymbolProvider, true);
      assert.deepEqual(init.capabilities.inlayHintProvider, { resolveProvider: false });
      assert.equal(init.capabilities.definitionProvider, true);
      assert.equal(init.capabilities.workspaceSymbolProvider, true);

      await s.open(CU, 'cuda', SAXPY);
      await s.waitForDiagnostics(CU, 1);
      await s.open(PY, 'python', MODEL);
      await s.waitForDiagnostics(PY, 1);

      // CUDA: the kernel, and the host function with its launch as a child.
      assert.deepEqual(await s.request(DocumentSymbolRequest.method, { textDocument: { uri: CU } }), [
        { name: 'saxpy', detail: SAXPY_COST, kind: FUNCTION, range: range(5, 0, 8, 1), selectionRange: range(5, 16, 5, 21) },
        {
          name: 'run_saxpy', detail: '1 launch', kind: FUNCTION, range: range(10, 0, 12, 1), selectionRange: range(10, 5, 10, 14),
          children: [{
            name: 'saxpy<<<(n + 99) / 100, 100>>>', detail: SAXPY_COST, kind: EVENT,
            range: range(11, 2, 11, 44), selectionRange: range(11, 2, 11, 7),
          }],
        },
      ]);

      // Python: the module, forward, and its four ops in execution order.
      const op = (name, detail, r) => ({ name, detail, kind: OPERATOR, range: r, selectionRange: r });
      assert.deepEqual(await s.request(DocumentSymbolRequest.method, { textDocument: { uri: PY } }), [{
        name: 'Model', detail: 'est. 7.07 µs on H200 (memory-bound, fused)', kind: CLASS, range: range(4, 0, 13, 66), selectionRange: range(4, 6, 4, 11),
        children: [{
          name: 'forward', detail: '4 ops', kind: METHOD, range: range(12, 4, 13, 66), selectionRange: range(12, 8, 12, 15),
          children: [
            op('self.fc1', 'linear · est. 3.53 µs on H200 (memory-bound)', range(13, 53, 13, 64)),
            op('torch.nn.functional.gelu', 'gelu · est. 3.00 µs on H200 (launch-bound)', range(13, 28, 13, 65)),
            op('self.fc2', 'linear · est. 3.53 µs on H200 (memory-bound)', range(13, 19, 13, 66)),
            op('+', 'add · est. 3.00 µs on H200 (launch-bound)', range(13, 15, 13, 66)),
          ],
        }],
      }]);

      // Inlay hints: the launch's block, then forward's def line and its one line of ops.
      assert.deepEqual(await s.request(InlayHintRequest.method, { textDocument: { uri: CU }, range: range(0, 0, 13, 0) }), [{
        position: pos(11, 45), label: '100 threads/block · occupancy ≤ 100%', kind: 1, paddingLeft: true,
        tooltip: 'The block (100) has 100 threads. Estimated occupancy on H200: at most 16 blocks of 4 warps per SM (64 of 64 warps), limited by warps; registers are not counted',
      }]);
      assert.deepEqual(await s.request(InlayHintRequest.method, { textDocument: { uri: CU }, range: range(0, 0, 10, 0) }), []);
      const hints = await s.request(InlayHintRequest.method, { textDocument: { uri: PY }, range: range(0, 0, 22, 0) });
      assert.deepEqual(hints.map((hint) => [hint.position, hint.label, hint.kind, hint.paddingLeft]), [
        [pos(12, 55), '≈ 7.07 µs', 1, true],
        [pos(13, 66), '≈ 13.1 µs', 1, true],
      ]);
      assert.equal(hints[1].tooltip, 'Estimate on H200 op by op (speed of light, at least one launch each), memory-bound: linear 3.53 µs + gelu 3.00 µs + linear 3.53 µs + add 3.00 µs');

      // Definition: from the launch's kernel name to the kernel; elsewhere nothing.
      assert.deepEqual(await s.request(DefinitionRequest.method, { textDocument: { uri: CU }, position: pos(11, 4) }),
        [{ uri: CU, range: range(5, 16, 5, 21) }]);
      assert.deepEqual(await s.request(DefinitionRequest.method, { textDocument: { uri: CU }, position: pos(11, 20) }), []);

      // Workspace symbols: a case-insensitive subsequence over both documents.
      assert.deepEqual(await s.request(WorkspaceSymbolRequest.method, { query: 'SXP' }),
        [{ name: 'saxpy', kind: FUNCTION, location: { uri: CU, range: range(5, 16, 5, 21) }, containerName: 'saxpy.cu' }]);
      assert.deepEqual((await s.request(WorkspaceSymbolRequest.method, { query: '' })).map((sym) => sym.name), ['Model', 'saxpy']);

      assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
    },
  ));
