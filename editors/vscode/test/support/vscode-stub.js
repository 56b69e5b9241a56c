'use strict';
// A STUB of the `vscode` module, NOT the real VS Code API: the real one exists
// only inside a running VS Code, which CI does not have. It fakes the part of the
// API that src/commands.ts and src/status.ts use (window messages, quick pick,
// status bar item, untitled documents, applyEdit, registerCommand, configuration),
// plus enough of what vscode-languageclient touches (Uri, Position, Range,
// WorkspaceEdit, EventEmitter, withProgress, diagnostic collections, …) for the
// bundled dist/extension.js to activate and talk to a real server. Members the
// tests never look at answer with a no-op that returns a Disposable. It records
// every call in `calls` and lets a test script the user's answers. install()
// makes `require('vscode')` return it (a Module._resolveFilename hook).
const Module = require('node:module');

const calls = [];
const state = {
  activeTextEditor: undefined,
  quickPick: (items) => items[0],  // the user's choice; a test replaces it
  messageAnswer: () => undefined,  // the button the user clicks in a message
  applyEdit: () => true,  // the editor applying a WorkspaceEdit
  statusBarItems: [],
  documents: [],  // untitled documents opened
  commands: new Map(),
  configuration: {},  // flat "llm.endpoint" → value for getConfiguration('hiera')
  textDocuments: [],  // documents open in the "editor"
  configurationListeners: [],
  progress: [],  // window.withProgress: {options, reports: []}
  outputChannels: [],
};

function record(method, ...args) {
  calls.push({ method, args });
}

class Uri {
  constructor(value) {
    this.value = value;
    const match = /^([a-z][a-z0-9+.-]*):(?:\/\/([^/]*))?(.*)$/i.exec(value) || [];
    this.scheme = match[1] || 'file';
    this.authority = match[2] || '';
    this.path = match[3] || value;
    this.query = '';
    this.fragment = '';
  }
  get fsPath() {
    return decodeURIComponent(this.path);
  }
  static parse(value) {
    return new Uri(value);
  }
  static file(p) {
    return new Uri(`file://${p}`);
  }
  with() {
    return this;
  }
  toString() {
    return this.value;
  }
  toJSON() {
    return this.value;
  }
}

class Disposable {
  constructor(callOnDispose = () => {}) {
    this.callOnDispose = callOnDispose;
  }
  static from(...items) {
    return new Disposable(() => items.forEach((d) => d && d.dispose && d.dispose()));
  }
  dispose() {
    this.callOnDispose();
    this.callOnDispose = () => {};
  }
}

class EventEmitter {
  constructor() {
    this.listeners = new Set();
    this.event = (listener, thisArg, disposables) => {
      const bound = thisArg ? listener.bind(thisArg) : listener;
      this.listeners.add(bound);
      const d = new Disposable(() => this.listeners.delete(bound));
      if (Array.isArray(disposables)) disposables.push(d);
      return d;
    };
  }
  fire(value) {
    for (const l of [...this.listeners]) l(value);
  }
  dispose() {
    this.listeners.clear();
  }
}

class CancellationTokenSource {
  constructor() {
    const emitter = new EventEmitter();
    this.emitter = emitter;
    this.token = { isCancellationRequested: false, onCancellationRequested: emitter.event };
  }
  cancel() {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose() {
    this.emitter.dispose();
  }
}

class CancellationError extends Error {}

class Position {
  constructor(line, character) {
    this.line = line;
    this.character = character;
  }
}

class Range {
  constructor(a, b, c, d) {
    if (typeof a === 'number') {
      this.start = new Position(a, b);
      this.end = new Position(c, d);
    } else {
      this.start = a;
      this.end = b;
    }
  }
  get isEmpty() {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

class Selection extends Range {
  constructor(anchor, active) {
    super(anchor, active);
    this.anchor = anchor;
    this.active = active;
  }
}

class TextEdit {
  constructor(range, newText) {
    this.range = range;
    this.newText = newText;
  }
}

// Keeps what a WorkspaceEdit holds: [{uri, edits: [TextEdit], metadata}].
class WorkspaceEdit {
  constructor() {
    this.changes = [];
  }
  replace(uri, range, newText, metadata) {
    this.changes.push({ uri: uri.toString(), edit: new TextEdit(range, newText), metadata });
  }
  insert(uri, position, newText, metadata) {
    this.replace(uri, new Range(position, position), newText, metadata);
  }
  delete(uri, range, metadata) {
    this.replace(uri, range, '', metadata);
  }
  set(uri, edits) {
    for (const edit of edits) this.replace(uri, edit.range, edit.newText);
  }
  get size() {
    return new Set(this.changes.map((c) => c.uri)).size;
  }
  entries() {
    const byUri = new Map();
    for (const c of this.changes) byUri.set(c.uri, [...(byUri.get(c.uri) || []), c.edit]);
    return [...byUri.entries()].map(([uri, edits]) => [Uri.parse(uri), edits]);
  }
  createFile() {}
  renameFile() {}
  deleteFile() {}
}

// An empty class for every type the tests never construct in earnest.
const plainClass = (name) =>
  ({
    [name]: class {
      constructor(...args) {
        this.args = args;
      }
    },
  })[name];

class CodeActionKind {
  constructor(value) {
    this.value = value;
  }
  append(part) {
    return new CodeActionKind(this.value ? `${this.value}.${part}` : part);
  }
  contains(other) {
    return this.value === '' || other.value === this.value || other.value.startsWith(`${this.value}.`);
  }
  intersects(other) {
    return this.contains(other) || other.contains(this);
  }
}
CodeActionKind.Empty = new CodeActionKind('');
CodeActionKind.QuickFix = new CodeActionKind('quickfix');
CodeActionKind.Refactor = new CodeActionKind('refactor');
CodeActionKind.RefactorExtract = new CodeActionKind('refactor.extract');
CodeActionKind.RefactorInline = new CodeActionKind('refactor.inline');
CodeActionKind.RefactorMove = new CodeActionKind('refactor.move');
CodeActionKind.RefactorRewrite = new CodeActionKind('refactor.rewrite');
CodeActionKind.Source = new CodeActionKind('source');
CodeActionKind.SourceOrganizeImports = new CodeActionKind('source.organizeImports');
CodeActionKind.SourceFixAll = new CodeActionKind('source.fixAll');

const DiagnosticSeverity = { Error: 0, Warning: 1, Information: 2, Hint: 3 };
const ProgressLocation = { SourceControl: 1, Window: 10, Notification: 15 };

// A namespace whose unknown members are no-ops returning a Disposable (onDidX events,
// registerXProvider, …); named members behave as written.
function namespace(name, members) {
  return new Proxy(members, {
    get(target, key) {
      if (key in target) return target[key];
      if (typeof key !== 'string') return undefined;
      return (...args) => {
        record(`${name}.${key}`, ...args);
        return new Disposable();
      };
    },
  });
}

const StatusBarAlignment = { Left: 1, Right: 2 };

function createStatusBarItem(alignment, priority) {
  const item = {
    alignment,
    priority,
    name: undefined,
    text: '',
    tooltip: undefined,
    command: undefined,
    visible: false,
    disposed: false,
    show() {
      this.visible = true;
    },
    hide() {
      this.visible = false;
    },
    dispose() {
      this.disposed = true;
      this.visible = false;
    },
  };
  state.statusBarItems.push(item);
  return item;
}

const message = (severity) => async (text, ...items) => {
  record(`window.show${severity}Message`, text, ...items);
  return state.messageAnswer(text, items);
};

function createDiagnosticCollection(name) {
  const map = new Map();
  return {
    name,
    set(uri, diagnostics) {
      if (Array.isArray(uri)) for (const [u, d] of uri) map.set(u.toString(), d);
      else map.set(uri.toString(), diagnostics);
    },
    get: (uri) => map.get(uri.toString()),
    has: (uri) => map.has(uri.toString()),
    delete: (uri) => map.delete(uri.toString()),
    clear: () => map.clear(),
    forEach: (fn) => map.forEach((d, u) => fn(Uri.parse(u), d)),
    dispose: () => map.clear(),
  };
}

// languages.match: a DocumentFilter selector against a document (language + scheme).
function match(selector, document) {
  const filters = Array.isArray(selector) ? selector : [selector];
  for (const f of filters) {
    if (typeof f === 'string' ? f === document.languageId : (!f.language || f.language === document.languageId) && (!f.scheme || f.scheme === document.uri.scheme)) {
      return 10;
    }
  }
  return 0;
}

const window = {
  get activeTextEditor() {
    return state.activeTextEditor;
  },
  showInformationMessage: message('Information'),
  showWarningMessage: message('Warning'),
  showErrorMessage: message('Error'),
  async showQuickPick(items, options) {
    const list = await items;
    record('window.showQuickPick', list, options);
    return state.quickPick(list, options);
  },
  createStatusBarItem,
  createOutputChannel(name) {
    const lines = [];
    const channel = { name, lines, append: (s) => lines.push(s), appendLine: (s) => lines.push(s), show() {}, hide() {}, clear() {}, replace() {}, dispose() {} };
    state.outputChannels.push(channel);
    return channel;
  },
  async showTextDocument(document, options) {
    record('window.showTextDocument', document, options);
    return { document };
  },
  // The built-in progress UI (vscode-languageclient's ProgressPart uses it).
  async withProgress(options, task) {
    const entry = { options, reports: [], done: false };
    state.progress.push(entry);
    record('window.withProgress', options);
    const source = new CancellationTokenSource();
    entry.cancel = () => source.cancel();
    try {
      return await task({ report: (value) => entry.reports.push(value) }, source.token);
    } finally {
      entry.done = true;
    }
  },
  get visibleTextEditors() {
    return state.activeTextEditor ? [state.activeTextEditor] : [];
  },
  tabGroups: { all: [], onDidChangeTabs: () => new Disposable(), onDidChangeTabGroups: () => new Disposable() },
};

const workspace = {
  async openTextDocument(options) {
    record('workspace.openTextDocument', options);
    if (options instanceof Uri) {
      // A file on disk, as VS Code opens it: a missing file is an error.
      const text = require('node:fs').readFileSync(options.fsPath, 'utf8');
      const document = { uri: options, languageId: options.fsPath.endsWith('.md') ? 'markdown' : 'plaintext', getText: () => text };
      state.documents.push(document);
      return document;
    }
    const document = {
      uri: new Uri(`untitled:Untitled-${state.documents.length + 1}`),
      languageId: options.language,
      getText: () => options.content,
    };
    state.documents.push(document);
    return document;
  },
  async applyEdit(edit) {
    record('workspace.applyEdit', edit);
    return state.applyEdit(edit);
  },
  getConfiguration(section) {
    record('workspace.getConfiguration', section);
    const prefix = section && section !== 'hiera' ? `${section.replace(/^hiera\./, '')}.` : '';
    return {
      get: (key, fallback) => {
        const value = section && !section.startsWith('hiera') ? undefined : state.configuration[prefix + key];
        return value === undefined ? fallback : value;
      },
      has: (key) => prefix + key in state.configuration,
      inspect: () => undefined,
      update: async () => {},
    };
  },
  get textDocuments() {
    return state.textDocuments;
  },
  workspaceFolders: undefined,
  isTrusted: true,  // Workspace Trust; test/unit/trust.test.js passes trust through CommandDeps instead
  notebookDocuments: [],
  onDidChangeConfiguration(listener) {
    state.configurationListeners.push(listener);
    return new Disposable(() => {
      state.configurationListeners = state.configurationListeners.filter((l) => l !== listener);
    });
  },
  // What VS Code fires when settings change: affectsConfiguration("hiera.gpu") etc.
  fireConfigurationChange(changedKeys) {
    const event = { affectsConfiguration: (section) => changedKeys.some((k) => `hiera.${k}` === section || `hiera.${k}`.startsWith(`${section}.`)) };
    return Promise.all(state.configurationListeners.map((l) => l(event)));
  },
};

const commands = {
  registerCommand(id, handler) {
    if (state.commands.has(id)) throw new Error(`command '${id}' already exists`);
    state.commands.set(id, handler);
    return { dispose: () => state.commands.delete(id) };
  },
  async executeCommand(id, ...args) {
    const handler = state.commands.get(id);
    if (!handler) throw new Error(`command '${id}' not found`);
    return handler(...args);
  },
};

// An open text document as the editor (and vscode-languageclient) reads it.
function textDocument(uri, languageId, text = '', version = 1) {
  return {
    uri: Uri.parse(uri),
    fileName: Uri.parse(uri).fsPath,
    languageId,
    version,
    isClosed: false,
    isDirty: false,
    isUntitled: false,
    lineCount: text.split('\n').length,
    getText: () => text,
  };
}

// A text editor as commands.ts reads it: document (uri, languageId, version) and selection.
function editor({ uri, languageId, version = 1, line = 0, character = 0, endLine = line, endCharacter = character, document }) {
  const start = new Position(line, character);
  const end = new Position(endLine, endCharacter);
  return {
    document: document || textDocument(uri, languageId, '', version),
    selection: Object.assign(new Selection(start, end), { start, end }),
  };
}

function reset() {
  calls.length = 0;
  state.activeTextEditor = undefined;
  state.quickPick = (items) => items[0];
  state.messageAnswer = () => undefined;
  state.applyEdit = () => true;
  state.statusBarItems = [];
  state.documents = [];
  state.commands = new Map();
  state.configuration = {};
  state.textDocuments = [];
  state.configurationListeners = [];
  state.progress = [];
  state.outputChannels = [];
}

const vscode = {
  version: '1.85.0',
  Uri,
  Disposable,
  EventEmitter,
  CancellationTokenSource,
  CancellationError,
  Position,
  Range,
  Selection,
  TextEdit,
  WorkspaceEdit,
  CodeActionKind,
  DiagnosticSeverity,
  ProgressLocation,
  StatusBarAlignment,
  env: { appName: 'Visual Studio Code (stub)', language: 'en', machineId: 'stub', openExternal: async () => true },
  window: namespace('window', window),
  workspace: namespace('workspace', workspace),
  commands,
  languages: namespace('languages', { match, createDiagnosticCollection }),
};
// Classes vscode-languageclient extends or builds (CodeLens, Diagnostic, …): empty ones will do.
for (const name of [
  'CallHierarchyItem', 'CodeAction', 'CodeLens', 'Color', 'ColorInformation', 'ColorPresentation',
  'CompletionItem', 'CompletionList', 'Diagnostic', 'DiagnosticRelatedInformation', 'DocumentLink', 'DocumentSymbol',
  'FoldingRange', 'Hover', 'InlayHint', 'InlayHintLabelPart', 'InlineValueText', 'Location', 'MarkdownString',
  'ParameterInformation', 'SelectionRange', 'SemanticTokens', 'SignatureHelp', 'SignatureInformation', 'SnippetString',
  'SymbolInformation', 'TabInputCustom', 'TabInputNotebook', 'TabInputNotebookDiff', 'TabInputText', 'TabInputTextDiff',
  'ThemeIcon', 'TypeHierarchyItem', 'LinkedEditingRanges', 'DocumentHighlight', 'InlineCompletionItem',
]) {
  vscode[name] = plainClass(name);
}
const stub = { vscode, calls, state, editor, textDocument, reset, install };

// require('vscode') resolves to this file from then on.
function install() {
  const original = Module._resolveFilename;
  if (original.hieraStub) return stub;
  const hooked = function (request, ...rest) {
    if (request === 'vscode') return __filename;
    return original.call(this, request, ...rest);
  };
  hooked.hieraStub = true;
  Module._resolveFilename = hooked;
  return stub;
}

// The module is the fake API; tests reach the controls through __stub.
vscode.__stub = stub;
module.exports = vscode;
