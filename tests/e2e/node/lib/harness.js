'use strict';
// A real LSP client (vscode-languageserver-protocol over the child's stdio or a
// TCP socket) driving hiera-test-lsp / hiera lsp, with a record of everything
// the server sent and helpers that wait for it with timeouts.
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { after } = require('node:test');
const {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  CancellationTokenSource,
  ResponseError,
} = require('vscode-languageserver-protocol/node');
const { TextDocument } = require('vscode-languageserver-textdocument');

const DEFAULT_WAIT_MS = 5000;

function binary(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the suite through ctest (label e2e), which points it at the built binary`);
  return value;
}

const testServer = () => binary('HIERA_TEST_LSP');
const hieraBin = () => binary('HIERA_BIN');

const REPO = path.resolve(__dirname, '../../../..');
const FIXTURES = process.env.HIERA_E2E_FIXTURES || path.join(REPO, 'tests/e2e/fixtures');
// The text of a file of FIXTURES.
const fixture = (name) => fs.readFileSync(path.join(FIXTURES, name), 'utf8');

const pos = (line, character) => ({ line, character });
const range = (l1, c1, l2, c2) => ({ start: pos(l1, c1), end: pos(l2, c2) });
const uriOf = (file) => pathToFileURL(file).href;

// A scratch folder for test `t` (documents' files, runs directories), removed when it ends.
function scratchDir(t, prefix = 'hiera-e2e-') {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

// Client capabilities of a modern editor; tests switch pieces off.
function fullCapabilities({ utf8 = false } = {}) {
  return {
    general: { positionEncodings: utf8 ? ['utf-8', 'utf-16'] : ['utf-16'] },
    window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: false } } },
    workspace: {
      applyEdit: true,
      configuration: true,
      workspaceEdit: { documentChanges: true, changeAnnotationSupport: { groupsOnLabel: true } },
    },
    textDocument: {
      synchronization: { dynamicRegistration: false, didSave: true },
      hover: { contentFormat: ['markdown', 'plaintext'] },
      codeLens: {},
      publishDiagnostics: { versionSupport: true },
      codeAction: {
        codeActionLiteralSupport: { codeActionKind: { valueSet: ['', 'quickfix', 'refactor', 'refactor.rewrite', 'source'] } },
        dataSupport: true,
        resolveSupport: { properties: ['edit'] },
      },
    },
  };
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Converts a UTF-16 offset of `text` into an LSP position in `encoding`.
function positionIn(text, offset, encoding) {
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  const lineText = before.slice(before.lastIndexOf('\n') + 1);
  const character = encoding === 'utf-8' ? Buffer.byteLength(lineText, 'utf8') : lineText.length;
  return { line, character };
}

class Session {
  constructor({ child, reader, writer, socket }) {
    this.child = child;
    this.socket = socket;
    this.stderr = '';
    this.events = [];  // {kind: 'notification' | 'request' | 'log', method, params}
    this.waiters = [];
    this.documents = new Map();  // uri -> TextDocument, the client's copy
    this.applyEditAnswer = null;  // (params) => ApplyWorkspaceEditResult; default: apply to the client's copy
    this.loggedErrors = [];
    this.exited = new Promise((resolve) => {
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    child.stderr.on('data', (chunk) => {
      this.stderr += chunk.toString();
      this._wake();
    });
    const logger = {
      error: (m) => this._record('log', 'error', m),
      warn: (m) => this._record('log', 'warn', m),
      info: () => {},
      log: () => {},
    };
    this.connection = createProtocolConnection(reader, writer, logger);
    this.connection.onError(([error]) => this._record('log', 'connection-error', String(error && error.message)));
    this.connection.onClose(() => this._record('log', 'close', null));
    for (const method of ['textDocument/publishDiagnostics', 'window/showMessage', 'window/logMessage']) {
      this.connection.onNotification(method, (params) => this._record('notification', method, params));
    }
    this.connection.onUnhandledProgress((params) => this._record('notification', '$/progress', params));
    this.connection.onRequest('window/workDoneProgress/create', (params) => {
      this._record('request', 'window/workDoneProgress/create', params);
      return null;
    });
    this.connection.onRequest('workspace/configuration', (params) => {
      this._record('request', 'workspace/configuration', params);
      return params.items.map(() => null);
    });
    this.connection.onRequest('workspace/applyEdit', (params) => {
      this._record('request', 'workspace/applyEdit', params);
      if (this.applyEditAnswer) return this.applyEditAnswer(params);
      try {
        this.applyWorkspaceEdit(params.edit);
        return { applied: true };
      } catch (error) {
        return { applied: false, failureReason: error.message };
      }
    });
    this.connection.listen();
  }

  _record(kind, method, params) {
    this.events.push({ kind, method, params });
    this._wake();
  }

  _wake() {
    for (const waiter of [...this.waiters]) waiter();
  }

  // Resolves with the first event at index >= `from` matching `predicate`.
  waitFor(predicate, { from = 0, timeoutMs = DEFAULT_WAIT_MS, what = 'an event' } = {}) {
    let check;
    const found = new Promise((resolve) => {
      check = () => {
        for (let i = from; i < this.events.length; ++i) {
          if (predicate(this.events[i])) {
            resolve({ event: this.events[i], index: i });
            return;
          }
        }
      };
      this.waiters.push(check);
      check();
    });
    return withTimeout(found, timeoutMs, what).finally(() => {
      this.waiters = this.waiters.filter((w) => w !== check);
    });
  }

  notifications(method, filter = () => true) {
    return this.events.filter((e) => e.kind === 'notification' && e.method === method && filter(e.params)).map((e) => e.params);
  }

  requests(method) {
    return this.events.filter((e) => e.kind === 'request' && e.method === method).map((e) => e.params);
  }

  progress(token) {
    return this.notifications('$/progress', (p) => p.token === token).map((p) => p.value);
  }

  async waitForProgressEnd(token, timeoutMs = DEFAULT_WAIT_MS) {
    const { event } = await this.waitFor(
      (e) => e.kind === 'notification' && e.method === '$/progress' && e.params.token === token && e.params.value.kind === 'end',
      { timeoutMs, what: `$/progress end of ${token}` },
    );
    return event.params.value;
  }

  async waitForDiagnostics(uri, version, timeoutMs = DEFAULT_WAIT_MS) {
    const { event } = await this.waitFor(
      (e) => e.kind === 'notification' && e.method === 'textDocument/publishDiagnostics' && e.params.uri === uri && e.params.version === version,
      { timeoutMs, what: `diagnostics of ${uri} version ${version}` },
    );
    return event.params;
  }

  request(method, params, { timeoutMs = DEFAULT_WAIT_MS, token } = {}) {
    // vscode-jsonrpc takes a trailing token only when it is one; an undefined would become a parameter.
    const sent = token ? this.connection.sendRequest(method, params, token) : this.connection.sendRequest(method, params);
    return withTimeout(sent, timeoutMs, `the reply to ${method}`);
  }

  // Resolves with the ResponseError a request fails with; fails if it succeeds.
  async requestError(method, params, options) {
    try {
      const result = await this.request(method, params, options);
      assert.fail(`${method} succeeded with ${JSON.stringify(result)}; an error was expected`);
    } catch (error) {
      if (!(error instanceof ResponseError)) throw error;
      return error;
    }
  }

  notify(method, params) {
    return this.connection.sendNotification(method, params);
  }

  hover(uri, line, character, options) {
    return this.request('textDocument/hover', { textDocument: { uri }, position: pos(line, character) }, options);
  }

  // The code actions offered at `at` (a range), with no diagnostics in the context.
  codeActions(uri, at) {
    return this.request('textDocument/codeAction', { textDocument: { uri }, range: at, context: { diagnostics: [] } });
  }

  async initialize(capabilities = fullCapabilities(), extra = {}) {
    const result = await this.request('initialize', {
      processId: process.pid,
      clientInfo: { name: 'hiera-e2e-node', version: '1' },
      rootUri: 'file:///tmp/hiera-e2e',
      capabilities,
      ...extra,
    });
    await this.notify('initialized', {});
    return result;
  }

  async open(uri, languageId, text, version = 1) {
    this.documents.set(uri, TextDocument.create(uri, languageId, version, text));
    await this.notify('textDocument/didOpen', { textDocument: { uri, languageId, version, text } });
  }

  // Incremental change; `changes` ranges are in UTF-16 (the client's copy), `wire`
  // (optional) gives the ranges as sent, for a session that negotiated UTF-8.
  async change(uri, changes, wire = changes) {
    const current = this.documents.get(uri);
    const version = current.version + 1;
    this.documents.set(uri, TextDocument.update(current, changes, version));
    await this.notify('textDocument/didChange', { textDocument: { uri, version }, contentChanges: wire });
    return version;
  }

  text(uri) {
    return this.documents.get(uri).getText();
  }

  // What an editor does with workspace/applyEdit: check versions, apply the
  // edits to its copy with TextDocument.applyEdits, and tell the server.
  applyWorkspaceEdit(edit) {
    const perUri = [];
    if (edit.documentChanges) {
      for (const change of edit.documentChanges) {
        assert.ok(change.textDocument, 'only TextDocumentEdit entries are expected');
        const doc = this.documents.get(change.textDocument.uri);
        if (!doc) throw new Error(`${change.textDocument.uri} is not open`);
        if (change.textDocument.version !== null && change.textDocument.version !== doc.version) {
          throw new Error(`version mismatch: edit for ${change.textDocument.version}, document at ${doc.version}`);
        }
        perUri.push([change.textDocument.uri, change.edits]);
      }
    } else if (edit.changes) {
      for (const [uri, edits] of Object.entries(edit.changes)) perUri.push([uri, edits]);
    }
    for (const [uri, edits] of perUri) {
      const doc = this.documents.get(uri);
      if (!doc) throw new Error(`${uri} is not open`);
      const text = TextDocument.applyEdits(doc, edits);
      const version = doc.version + 1;
      this.documents.set(uri, TextDocument.create(uri, doc.languageId, version, text));
      // The editor's buffer changed: the server hears about it like any edit.
      this.notify('textDocument/didChange', { textDocument: { uri, version }, contentChanges: [{ text }] });
    }
  }

  async shutdownAndExit(timeoutMs = DEFAULT_WAIT_MS) {
    assert.equal(await this.request('shutdown', null), null);
    await this.notify('exit');
    return withTimeout(this.exited, timeoutMs, 'the server process to exit');
  }

  // Always safe to call: ends the connection and the process.
  async dispose() {
    try {
      this.connection.dispose();
    } catch {
      // already closed
    }
    if (this.socket) this.socket.destroy();
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await withTimeout(this.exited, 5000, 'the killed server to exit').catch(() => {});
    }
  }
}

// Every server process started by this file; the ones still alive when the
// file's tests end (a test that timed out mid-way) are killed, so the test
// process can exit instead of waiting on their pipes.
const children = new Set();
after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

function spawnServer(bin, args) {
  const child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  child.on('exit', () => children.delete(child));
  child.on('error', (error) => {
    throw new Error(`cannot start ${bin}: ${error.message}`);
  });
  return child;
}

// A session over the child's stdin/stdout.
function startStdio({ bin = testServer(), args = [] } = {}) {
  const child = spawnServer(bin, args);
  return new Session({ child, reader: new StreamMessageReader(child.stdout), writer: new StreamMessageWriter(child.stdin) });
}

// A session with the real `hiera lsp` (no test features).
const startHiera = () => startStdio({ bin: hieraBin(), args: ['lsp'] });

// A session over TCP: the server listens on an ephemeral loopback port and
// names it on stderr.
async function startTcp({ bin = testServer(), args = [] } = {}) {
  const child = spawnServer(bin, [...args, '--listen', '127.0.0.1:0']);
  let stderr = '';
  const port = await withTimeout(
    new Promise((resolve, reject) => {
      child.stderr.on('data', (chunk) => {
        stderr += chunk.toString();
        const match = /hiera: listening on 127\.0\.0\.1:(\d+)/.exec(stderr);
        if (match) resolve(Number(match[1]));
      });
      child.on('exit', (code) => reject(new Error(`the server exited with ${code} before listening: ${stderr}`)));
    }),
    5000,
    'the "listening on" line',
  );
  const socket = await withTimeout(
    new Promise((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port }, () => resolve(s));
      s.on('error', reject);
    }),
    5000,
    `a TCP connection to port ${port}`,
  );
  const session = new Session({ child, reader: new StreamMessageReader(socket), writer: new StreamMessageWriter(socket), socket });
  session.stderr = stderr;
  session.port = port;
  return session;
}

// Runs `body(session)` and always disposes of the session.
async function withSession(start, body) {
  const session = await start();
  try {
    return await body(session);
  } catch (error) {
    if (session.stderr) error.message += `\n--- server stderr ---\n${session.stderr}`;
    throw error;
  } finally {
    await session.dispose();
  }
}

module.exports = {
  CancellationTokenSource,
  DEFAULT_WAIT_MS,
  FIXTURES,
  REPO,
  ResponseError,
  Session,
  TextDocument,
  fixture,
  fullCapabilities,
  hieraBin,
  pos,
  positionIn,
  range,
  scratchDir,
  sleep,
  startHiera,
  startStdio,
  startTcp,
  testServer,
  uriOf,
  withSession,
  withTimeout,
};
