'use strict';
// Smoke test of the real `hiera lsp` (no test features linked in).
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('../lib/harness');

const URI = 'file:///tmp/hiera-e2e/notes.txt';

test('hiera lsp initializes, lists hiera.cancelJob, answers hover with null, exits 0', { timeout: 20000 }, () =>
  h.withSession(
    h.startHiera,
    async (s) => {
      const result = await s.initialize();
      assert.equal(result.serverInfo.name, 'hiera');
      if (process.env.HIERA_VERSION) assert.equal(result.serverInfo.version, process.env.HIERA_VERSION);
      assert.equal(result.capabilities.positionEncoding, 'utf-16');
      assert.equal(result.capabilities.textDocumentSync.change, 2);
      const commands = result.capabilities.executeCommandProvider.commands;
      assert.ok(commands.includes('hiera.cancelJob'), `commands: ${JSON.stringify(commands)}`);
      assert.ok(commands.includes('hiera.jobs'), `commands: ${JSON.stringify(commands)}`);
      assert.ok(!commands.some((c) => c.startsWith('hiera.test.')), 'test commands must not be in hiera');

      await s.open(URI, 'plaintext', 'nothing to see here\n\n');
      assert.equal(await s.hover(URI, 1, 0), null);
      assert.deepEqual(await s.request('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] }), []);
      const unknown = await s.requestError('workspace/executeCommand', { command: 'hiera.test.slowJob', arguments: [{}] });
      assert.equal(unknown.code, -32602);
      assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
    },
  ));
