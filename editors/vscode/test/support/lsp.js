'use strict';
// A Node LSP client (vscode-languageserver-protocol over the child's stdio) that
// behaves like the extension inside VS Code: it offers the capabilities
// vscode-languageclient 9 offers, answers workspace/configuration with
// src/settings.ts, answers window/workDoneProgress/create and routes each
// token's $/progress through src/status.ts's middleware the way
// vscode-languageclient's ProgressPart does (connection.onProgress per token),
// and applies workspace/applyEdit to its copies of the documents, as an editor
// would, echoing the change as didChange.
const { spawn } = require('node:child_process');
const { after } = require('node:test');
const {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  WorkDoneProgress,
} = require('vscode-languageserver-protocol/node');
const { TextDocument } = require('vscode-languageserver-textdocument');

const WAIT_MS = 10000;

function binary(name) {
  const value = process.env[name];
  return value && value.length > 0 ? value : undefined;
}

function withTimeout(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// What vscode-languageclient 9 tells a server about VS Code (the parts hiera reads).
function vscodeCapabilities() {
  return {
    general: { positionEncodings: ['utf-16'] },
    window: { workDoneProgress: true, showMessage: { messageActionItem: { additionalPropertiesSupport: true } }, showDocument: { support: true } },
    workspace: {
      applyEdit: true,
      configuration: true,
      didChangeConfiguration: { dynamicRegistration: true },
      executeCommand: { dynamicRegistration: true },
      workspaceEdit: {
        documentChanges: true,
        resourceOperations: ['create', 'rename', 'delete'],
        failureHandling: 'textOnlyTransactional',
        normalizesLineEndings: true,
        changeAnnotationSupport: { groupsOnLabel: true },
      },
    },
    textDocument: {
      synchronization: { dynamicRegistration: true, willSave: true, willSaveWaitUntil: true, didSave: true },
      hover: { dynamicRegistration: true, contentFormat: ['markdown', 'plaintext'] },
      codeLens: { dynamicRegistration: true },
      publishDiagnostics: { relatedInformation: true, versionSupport: false, codeDescriptionSupport: true, dataSupport: true },
      codeAction: {
        dynamicRegistration: true,
        isPreferredSupport: true,
        disabledSupport: true,
        dataSupport: true,
        resolveSupport: { properties: ['edit'] },
        codeActionLiteralSupport: {
          codeActionKind: {
            valueSet: ['', 'quickfix', 'refactor', 'refactor.extract', 'refactor.inline', 'refactor.rewrite', 'source', 'source.organizeImports'],
          },
        },
        honorsChangeAnnotations: true,
      },
    },
  };
}

const children = new Set();
after(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

class Client {
  // settingsFor(items) answers workspace/configuration; middleware is status.ts's progressMiddleware (optional).
  constructor({ bin, args = [], answerConfiguration, middleware }) {
    this.child = spawn(bin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(this.child);
    this.stderr = '';
    this.events = [];
    this.waiters = [];
    this.documents = new Map();
    this.builtinProgress = [];  // what reached the "built-in progress UI" (the middleware's next)
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
    this.child.on('exit', () => children.delete(this.child));
    this.child.stderr.on('data', (chunk) => {
      this.stderr += chunk.toString();
    });
    const quiet = { error: (m) => this.record('log', 'error', m), warn: (m) => this.record('log', 'warn', m), info() {}, log() {} };
    const c = createProtocolConnection(new StreamMessageReader(this.child.stdout), new StreamMessageWriter(this.child.stdin), quiet);
    this.connection = c;
    for (const method of ['window/logMessage', 'window/showMessage', 'textDocument/publishDiagnostics']) {
      c.onNotification(method, (params) => this.record('notification', method, params));
    }
    c.onUnhandledProgress((params) => this.record('notification', '$/progress (unhandled)', params));
    c.onRequest('workspace/configuration', (params) => {
      this.record('request', 'workspace/configuration', params);
      const answer = answerConfiguration ? answerConfiguration(params.items) : params.items.map(() => null);
      this.record('answer', 'workspace/configuration', answer);
      return answer;
    });
    // vscode-languageclient's ProgressFeature: a ProgressPart per created token.
    c.onRequest('window/workDoneProgress/create', (params) => {
      this.record('request', 'window/workDoneProgress/create', params);
      const token = params.token;
      const builtin = (t, value) => this.builtinProgress.push({ token: t, value });
      const handler = middleware
        ? (value) => middleware.handleWorkDoneProgress(token, value, () => builtin(token, value))
        : (value) => builtin(token, value);
      const disposable = c.onProgress(WorkDoneProgress.type, token, (value) => {
        handler(value);
        this.record('progress', token, value);
        if (value.kind === 'end') disposable.dispose();
      });
      return null;
    });
    // vscode-languageclient opens the document and answers success.
    c.onRequest('window/showDocument', (params) => {
      this.record('request', 'window/showDocument', params);
      return { success: true };
    });
    c.onRequest('workspace/applyEdit', (params) => {
      this.record('request', 'workspace/applyEdit', params);
      try {
        this.applyWorkspaceEdit(params.edit);
        return { applied: true };
      } catch (error) {
        return { applied: false, failureReason: error.message };
      }
    });
    c.listen();
  }

  record(kind, method, params) {
    this.events.push({ kind, method, params });
    for (const w of [...this.waiters]) w();
  }

  waitFor(predicate, what, ms = WAIT_MS) {
    let check;
    const found = new Promise((resolve) => {
      check = () => {
        const hit = this.events.find(predicate);
        if (hit) resolve(hit);
      };
      this.waiters.push(check);
      check();
    });
    return withTimeout(found, ms, what).finally(() => {
      this.waiters = this.waiters.filter((w) => w !== check);
    });
  }

  of(kind, method) {
    return this.events.filter((e) => e.kind === kind && e.method === method).map((e) => e.params);
  }

  // What commands.ts calls: the LanguageClient.sendRequest shape.
  sendRequest(method, params) {
    return withTimeout(this.connection.sendRequest(method, params), WAIT_MS, `the reply to ${method}`);
  }

  sendNotification(method, params) {
    return this.connection.sendNotification(method, params);
  }

  async initialize(initializationOptions) {
    const result = await this.sendRequest('initialize', {
      processId: process.pid,
      clientInfo: { name: 'Visual Studio Code (hiera extension test)', version: '1.85.0' },
      rootUri: 'file:///tmp/hiera-vscode',
      capabilities: vscodeCapabilities(),
      initializationOptions,
      workspaceFolders: null,
    });
    await this.sendNotification('initialized', {});
    return result;
  }

  async open(uri, languageId, text) {
    this.documents.set(uri, TextDocument.create(uri, languageId, 1, text));
    await this.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId, version: 1, text } });
  }

  async change(uri, text) {
    const doc = this.documents.get(uri);
    const version = doc.version + 1;
    this.documents.set(uri, TextDocument.create(uri, doc.languageId, version, text));
    await this.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges: [{ text }] });
  }

  text(uri) {
    return this.documents.get(uri).getText();
  }

  applyWorkspaceEdit(edit) {
    const perUri = [];
    for (const change of edit.documentChanges ?? []) {
      const doc = this.documents.get(change.textDocument.uri);
      if (!doc) throw new Error(`${change.textDocument.uri} is not open`);
      if (change.textDocument.version !== null && change.textDocument.version !== doc.version) {
        throw new Error(`version mismatch: edit for ${change.textDocument.version}, document at ${doc.version}`);
      }
      perUri.push([change.textDocument.uri, change.edits]);
    }
    for (const [uri, edits] of Object.entries(edit.changes ?? {})) perUri.push([uri, edits]);
    for (const [uri, edits] of perUri) {
      const doc = this.documents.get(uri);
      void this.change(uri, TextDocument.applyEdits(doc, edits));
    }
  }

  async shutdownAndExit() {
    await this.sendRequest('shutdown', null);
    await this.sendNotification('exit');
    return withTimeout(this.exited, WAIT_MS, 'the server to exit');
  }

  async dispose() {
    try {
      this.connection.dispose();
    } catch {
      // closed already
    }
    if (this.child.exitCode === null && this.child.signalCode === null) {
      this.child.kill('SIGKILL');
      await withTimeout(this.exited, 5000, 'the killed server').catch(() => {});
    }
  }
}

async function withClient(options, body) {
  const client = new Client(options);
  try {
    return await body(client);
  } catch (error) {
    if (client.stderr) error.message += `\n--- server stderr ---\n${client.stderr}`;
    throw error;
  } finally {
    await client.dispose();
  }
}

module.exports = { Client, binary, withClient, withTimeout, vscodeCapabilities, WAIT_MS };
