'use strict';
// Protocol test against the real `hiera lsp` (HIERA_BIN): a Node client from
// vscode-languageserver-protocol starts it with the server command and arguments
// the extension uses (hiera.server.args, no "--stdio"), sends exactly the
// initializationOptions src/settings.ts produces, and answers the server's
// workspace/configuration pull for section "hiera" with src/settings.ts's answer.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { binary, withClient } = require('../support/lsp');
const settings = require('../../out/settings');

const manifest = require(path.join(__dirname, '..', '..', 'package.json'));
const hiera = binary('HIERA_BIN');
const skip = hiera ? false : 'HIERA_BIN is not set (ctest sets it to the built hiera)';

const USER = settings.configurationFrom({
  'worker.command': ['hiera', 'worker', '--device', '0'],
  gpu: 'H200',
  'llm.endpoint': 'http://127.0.0.1:9/v1',
  'llm.model': 'test-model',
  'llm.apiKeyEnv': 'HIERA_TEST_LLM_KEY',
  'budget.candidates': 8,
  'budget.minutes': 1.5,
  'llm.provider': 'anthropic',
  'llm.maxRetries': 2,
  'hints.disabled': ['cuda.block_size'],
  'hints.severity': { 'torch.python_loop': 'error' },
  runsDir: '/tmp/hiera-vscode-runs',
});

// A failure the server reports about what we sent: an error/warning log or message.
const complaints = (client) =>
  [...client.of('notification', 'window/logMessage'), ...client.of('notification', 'window/showMessage')].filter((m) => m.type <= 2);

test('hiera lsp: initializationOptions from settings.ts, workspace/configuration "hiera" pulled and answered', { skip, timeout: 30000 }, () => {
  const client = settings.toClientSettings(USER);
  assert.deepEqual([client.serverPath, client.serverArgs], ['hiera', ['lsp']]);
  const reads = [];
  return withClient(
    {
      bin: hiera,  // hiera.server.path, resolved to the built binary
      args: client.serverArgs,
      answerConfiguration: (items) =>
        settings.configurationAnswer(items, (scopeUri) => {
          reads.push(scopeUri);
          return USER;
        }),
    },
    async (c) => {
      const initializationOptions = settings.toServerSettings(USER);
      assert.equal(
        JSON.stringify(initializationOptions),
        '{"worker":{"command":["hiera","worker","--device","0"],"device":null},"gpu":"H200",' +
          '"llm":{"endpoint":"http://127.0.0.1:9/v1","model":"test-model","apiKeyEnv":"HIERA_TEST_LLM_KEY","provider":"anthropic","maxRetries":2},' +
          '"budget":{"candidates":8,"minutes":1.5},"hints":{"enabled":true,"disabled":["cuda.block_size"],' +
          '"severity":{"torch.python_loop":"error"}},"runsDir":"/tmp/hiera-vscode-runs"}',
      );
      const result = await c.initialize(initializationOptions);
      assert.equal(result.serverInfo.name, 'hiera');
      assert.equal(result.capabilities.positionEncoding, 'utf-16');
      assert.equal(result.capabilities.textDocumentSync.change, 2);
      assert.ok(result.capabilities.codeActionProvider, 'code actions (optimize/profile) are offered');

      // vscode-languageclient registers the server's commands under their own ids: none may clash with ours.
      const serverCommands = result.capabilities.executeCommandProvider.commands;
      assert.ok(serverCommands.includes('hiera.cancelJob') && serverCommands.includes('hiera.jobs'), JSON.stringify(serverCommands));
      const ours = manifest.contributes.commands.map((cmd) => cmd.command);
      assert.deepEqual(ours.filter((id) => serverCommands.includes(id)), [], `client commands clash with ${JSON.stringify(serverCommands)}`);

      // After `initialized` the server pulls section "hiera"; the answer is settings.ts's object.
      await c.waitFor((e) => e.kind === 'answer' && e.method === 'workspace/configuration', 'the workspace/configuration pull');
      assert.deepEqual(c.of('request', 'workspace/configuration'), [{ items: [{ section: 'hiera' }] }]);
      assert.deepEqual(c.of('answer', 'workspace/configuration'), [[initializationOptions]]);
      assert.deepEqual(reads, [undefined]);

      // The answer is accepted: the session goes on with no complaint, and a job query works.
      assert.deepEqual(await c.sendRequest('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] }), []);

      // A settings change as the extension sends it (the mapped object, nulls clear keys), then one with
      // null settings, which makes the server pull again.
      await c.sendNotification('workspace/didChangeConfiguration', {
        settings: { hiera: settings.toServerSettings(settings.configurationFrom({ gpu: '' })) },
      });
      await c.sendNotification('workspace/didChangeConfiguration', { settings: null });
      await c.waitFor(
        () => c.of('answer', 'workspace/configuration').length === 2,
        'the second workspace/configuration pull',
      );
      assert.deepEqual(await c.sendRequest('workspace/executeCommand', { command: 'hiera.jobs', arguments: [] }), []);
      assert.deepEqual(complaints(c), [], 'the server complained about what the client sent');
      assert.ok(!/unknown request|failed|error/i.test(c.stderr), `server stderr:\n${c.stderr}`);

      // The API key's value never travels: only its variable's name.
      const sent = JSON.stringify([initializationOptions, ...c.of('answer', 'workspace/configuration')]);
      assert.ok(sent.includes('HIERA_TEST_LLM_KEY'));
      assert.deepEqual(await c.shutdownAndExit(), { code: 0, signal: null });
    },
  );
});
