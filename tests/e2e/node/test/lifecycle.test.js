'use strict';
// Lifecycle, capabilities, JSON-RPC error codes and the TCP transport.
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('../lib/harness');

const T = { timeout: 20000 };
const URI = 'file:///tmp/hiera-e2e/lifecycle.cu';

function expectedCapabilities(encoding) {
  return {
    positionEncoding: encoding,
    textDocumentSync: { openClose: true, change: 2, save: { includeText: false } },
    hoverProvider: true,
    codeLensProvider: { resolveProvider: false },
    codeActionProvider: { codeActionKinds: ['quickfix', 'refactor.rewrite', 'source'], resolveProvider: true },
    executeCommandProvider: { commands: ['hiera.cancelJob', 'hiera.jobs', 'hiera.test.slowJob', 'hiera.test.block'] },
  };
}

function expectedVersion() {
  return process.env.HIERA_VERSION;
}

test('initialize answers capabilities and serverInfo; shutdown then exit ends with code 0', T, () =>
  h.withSession(h.startStdio, async (s) => {
    const result = await s.initialize();
    assert.deepEqual(result.capabilities, expectedCapabilities('utf-16'));
    assert.equal(result.serverInfo.name, 'hiera');
    if (expectedVersion()) assert.equal(result.serverInfo.version, expectedVersion());
    else assert.match(result.serverInfo.version, /^\d+\.\d+\.\d+$/);
    // The server pulls the "hiera" settings section after initialized.
    const { event } = await s.waitFor((e) => e.kind === 'request' && e.method === 'workspace/configuration', {
      what: 'workspace/configuration',
    });
    assert.deepEqual(event.params, { items: [{ section: 'hiera' }] });
    const exit = await s.shutdownAndExit();
    assert.deepEqual(exit, { code: 0, signal: null });
  }));

test('a client that offers utf-8 gets utf-8', T, () =>
  h.withSession(h.startStdio, async (s) => {
    const result = await s.initialize(h.fullCapabilities({ utf8: true }));
    assert.deepEqual(result.capabilities, expectedCapabilities('utf-8'));
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('exit without shutdown ends with code 1', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.notify('exit');
    assert.deepEqual(await h.withTimeout(s.exited, 5000, 'exit'), { code: 1, signal: null });
  }));

test('closing stdin without exit ends the server with code 1', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    s.child.stdin.end();
    assert.deepEqual(await h.withTimeout(s.exited, 5000, 'exit'), { code: 1, signal: null });
  }));

test('requests before initialize fail with ServerNotInitialized (-32002)', T, () =>
  h.withSession(h.startStdio, async (s) => {
    const error = await s.requestError('textDocument/hover', { textDocument: { uri: URI }, position: { line: 0, character: 0 } });
    assert.equal(error.code, -32002);
    assert.equal(error.message, 'the server is not initialized yet');
    const shutdown = await s.requestError('shutdown', null);
    assert.equal(shutdown.code, -32002);
    // Initialize still works afterwards; a second initialize is an InvalidRequest.
    await s.initialize();
    const again = await s.requestError('initialize', { processId: null, rootUri: null, capabilities: {} });
    assert.equal(again.code, -32600);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('unknown method (-32601), wrong params (-32602), malformed JSON (-32700, id null); the server goes on', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(URI, 'cuda-cpp', 'int x;\n');

    const unknown = await s.requestError('hiera/noSuchMethod', {});
    assert.equal(unknown.code, -32601);
    assert.equal(unknown.message, 'unknown method: hiera/noSuchMethod');

    const wrongType = await s.requestError('textDocument/hover', { textDocument: { uri: URI }, position: { line: 'zero', character: 0 } });
    assert.equal(wrongType.code, -32602);
    assert.match(wrongType.message, /line/);

    const missing = await s.requestError('textDocument/codeLens', {});
    assert.equal(missing.code, -32602);

    const notOpen = await s.requestError('textDocument/hover', { textDocument: { uri: 'file:///nowhere.cu' }, position: { line: 0, character: 0 } });
    assert.equal(notOpen.code, -32602);
    assert.equal(notOpen.message, 'document not open: file:///nowhere.cu');

    const badCommand = await s.requestError('workspace/executeCommand', { command: 'hiera.noSuchCommand', arguments: [] });
    assert.equal(badCommand.code, -32602);
    assert.equal(badCommand.message, 'unknown command: hiera.noSuchCommand');

    const badArgument = await s.requestError('workspace/executeCommand', { command: 'hiera.test.slowJob', arguments: ['not an object'] });
    assert.equal(badArgument.code, -32602);
    assert.equal(badArgument.message, 'hiera.test.slowJob: the argument must be an object');

    const badVersion = await s.requestError('workspace/executeCommand', { command: 'hiera.test.slowJob', arguments: [{ uri: URI, version: 'one' }] });
    assert.equal(badVersion.code, -32602);
    assert.equal(badVersion.message, 'hiera.test.slowJob: version must be an integer');

    // A frame whose body is not JSON, written between two of the client's messages.
    const before = s.events.length;
    const body = '{"jsonrpc":"2.0","id":77,"method":';
    s.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    const { event } = await s.waitFor((e) => e.kind === 'log' && /without id/.test(e.params), {
      from: before,
      what: 'the error reply with id null',
    });
    const error = JSON.parse(event.params.slice(event.params.indexOf('{')));
    assert.equal(error.code, -32700);

    // The session still works.
    const hover = await s.request('textDocument/hover', { textDocument: { uri: URI }, position: { line: 0, character: 4 } });
    assert.equal(hover.contents.value, '`x` at line 0, column 4 (utf-16)');
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('requests after shutdown are refused with InvalidRequest (-32600)', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    assert.equal(await s.request('shutdown', null), null);
    const error = await s.requestError('textDocument/hover', { textDocument: { uri: URI }, position: { line: 0, character: 0 } });
    assert.equal(error.code, -32600);
    await s.notify('exit');
    assert.deepEqual(await h.withTimeout(s.exited, 5000, 'exit'), { code: 0, signal: null });
  }));

test('TCP transport: --listen 127.0.0.1:0 serves one client', T, () =>
  h.withSession(h.startTcp, async (s) => {
    assert.ok(s.port > 0 && s.port < 65536, `port ${s.port}`);
    const result = await s.initialize();
    assert.deepEqual(result.capabilities, expectedCapabilities('utf-16'));
    await s.open(URI, 'cuda-cpp', '__global__ void scale(float* v) {} // TODO\n');
    const diagnostics = await s.waitForDiagnostics(URI, 1);
    assert.equal(diagnostics.diagnostics.length, 1);
    const hover = await s.request('textDocument/hover', { textDocument: { uri: URI }, position: { line: 0, character: 18 } });
    assert.deepEqual(hover, {
      contents: { kind: 'markdown', value: '`scale` at line 0, column 16 (utf-16)' },
      range: { start: { line: 0, character: 16 }, end: { line: 0, character: 21 } },
    });
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('TCP transport refuses a non-loopback address with exit code 2', T, async () => {
  const { spawn } = require('node:child_process');
  const child = spawn(h.testServer(), ['--listen', '0.0.0.0:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c) => (stderr += c));
  const code = await h.withTimeout(new Promise((resolve) => child.on('exit', resolve)), 5000, 'exit');
  assert.equal(code, 2);
  assert.match(stderr, /refusing to listen on non-loopback address 0\.0\.0\.0/);
});
