'use strict';
// Document sync (incremental, multi-byte text), hover in UTF-16 and UTF-8,
// diagnostics with versions, code lenses.
const test = require('node:test');
const assert = require('node:assert/strict');
const h = require('../lib/harness');

const T = { timeout: 20000 };
const URI = 'file:///tmp/hiera-e2e/encoding.cu';
const V1 = '#include <cstdio>\nint main() { return 0; }\n';
const INSERTED = '/* 日本 😀 TODO */ int scale = 1;\n';
const FINAL = '#include <cstdio>\n/* 日本 😀 TODO */ int scale_factor = 42;\nint main() { return 0; }\n';

// Columns of the final line 1, per encoding: "/* " 3, "日本" 2 UTF-16 units / 6 bytes,
// " " 1, "😀" 2 units / 4 bytes, " TODO */ int " 13.
const COLUMNS = {
  'utf-16': { todo: 9, word: 21, wordEnd: 33, afterScale: 26, one: 36, answer: 36 },
  'utf-8': { todo: 15, word: 27, wordEnd: 39, afterScale: 32, one: 42, answer: 42 },
};

const { pos, range } = h;

// Opens V1 and edits it into FINAL with two incremental didChange notifications;
// the ranges on the wire are in `encoding`, the client's own copy is UTF-16.
async function editIntoFinal(s, encoding) {
  const c = COLUMNS[encoding];
  const u = COLUMNS['utf-16'];
  await s.open(URI, 'cuda-cpp', V1);
  const v1 = await s.waitForDiagnostics(URI, 1);
  assert.deepEqual(v1, { uri: URI, version: 1, diagnostics: [] });

  const insert = [{ range: range(1, 0, 1, 0), text: INSERTED }];
  assert.equal(await s.change(URI, insert), 2);
  const todo = {
    range: range(1, c.todo, 1, c.todo + 4),
    severity: 2,
    code: 'test.todo',
    source: 'hiera-test',
    message: 'TODO found',
  };
  assert.deepEqual(await s.waitForDiagnostics(URI, 2), { uri: URI, version: 2, diagnostics: [todo] });

  // Two changes in one notification; the second range is relative to the first's result.
  const utf16 = [
    { range: range(1, u.afterScale, 1, u.afterScale), text: '_factor' },
    { range: range(1, u.one, 1, u.one + 1), text: '42' },
  ];
  const wire = [
    { range: range(1, c.afterScale, 1, c.afterScale), text: '_factor' },
    { range: range(1, c.one, 1, c.one + 1), text: '42' },
  ];
  assert.equal(await s.change(URI, utf16, wire), 3);
  assert.equal(s.text(URI), FINAL);
  assert.deepEqual(await s.waitForDiagnostics(URI, 3), { uri: URI, version: 3, diagnostics: [todo] });
}

const hover = (s, line, character) => s.hover(URI, line, character);

test('UTF-16: incremental changes with CJK and emoji, hover columns, diagnostics with versions', T, () =>
  h.withSession(h.startStdio, async (s) => {
    const init = await s.initialize(h.fullCapabilities({ utf8: false }));
    assert.equal(init.capabilities.positionEncoding, 'utf-16');
    await editIntoFinal(s, 'utf-16');
    const c = COLUMNS['utf-16'];
    assert.deepEqual(await hover(s, 1, c.word + 4), {
      contents: { kind: 'markdown', value: '`scale_factor` at line 1, column 21 (utf-16)' },
      range: range(1, c.word, 1, c.wordEnd),
    });
    assert.deepEqual(await hover(s, 1, c.answer), {
      contents: { kind: 'markdown', value: '`42` at line 1, column 36 (utf-16)' },
      range: range(1, 36, 1, 38),
    });
    // The client computes the same columns from its own copy.
    const text = s.text(URI);
    assert.deepEqual(h.positionIn(text, text.indexOf('scale_factor'), 'utf-16'), pos(1, 21));
    assert.equal(await hover(s, 1, 6), null, 'the emoji is not a word');
    assert.equal(await hover(s, 1, 3), null, 'CJK is not a word');
    assert.deepEqual(await hover(s, 2, 5), {
      contents: { kind: 'markdown', value: '`main` at line 2, column 4 (utf-16)' },
      range: range(2, 4, 2, 8),
    });
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('UTF-8: the same edits with byte columns, hover columns in UTF-8', T, () =>
  h.withSession(h.startStdio, async (s) => {
    const init = await s.initialize(h.fullCapabilities({ utf8: true }));
    assert.equal(init.capabilities.positionEncoding, 'utf-8');
    await editIntoFinal(s, 'utf-8');
    const c = COLUMNS['utf-8'];
    assert.deepEqual(await hover(s, 1, c.word + 4), {
      contents: { kind: 'markdown', value: '`scale_factor` at line 1, column 27 (utf-8)' },
      range: range(1, c.word, 1, c.wordEnd),
    });
    assert.deepEqual(await hover(s, 1, c.answer + 1), {
      contents: { kind: 'markdown', value: '`42` at line 1, column 42 (utf-8)' },
      range: range(1, 42, 1, 44),
    });
    const text = s.text(URI);
    assert.deepEqual(h.positionIn(text, text.indexOf('scale_factor'), 'utf-8'), pos(1, 27));
    assert.equal(await hover(s, 1, 10), null, 'byte 10 is inside the emoji');
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('hover falls back to plaintext for a client that only takes plaintext', T, () =>
  h.withSession(h.startStdio, async (s) => {
    const caps = h.fullCapabilities();
    caps.textDocument.hover = { contentFormat: ['plaintext'] };
    await s.initialize(caps);
    await s.open(URI, 'cuda-cpp', V1);
    assert.deepEqual(await hover(s, 1, 4), {
      contents: { kind: 'plaintext', value: '`main` at line 1, column 4 (utf-16)' },
      range: range(1, 4, 1, 8),
    });
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));

test('code lens counts lines and its command runs; didClose clears diagnostics', T, () =>
  h.withSession(h.startStdio, async (s) => {
    await s.initialize();
    await s.open(URI, 'cuda-cpp', V1);
    const lenses = await s.request('textDocument/codeLens', { textDocument: { uri: URI } });
    assert.deepEqual(lenses, [
      { range: range(0, 0, 0, 0), command: { title: 'hiera-test: 3 lines', command: 'hiera.jobs', arguments: [] } },
    ]);
    await s.change(URI, [{ range: range(1, 0, 1, 0), text: 'a\nb\n' }]);
    const after = await s.request('textDocument/codeLens', { textDocument: { uri: URI } });
    assert.equal(after[0].command.title, 'hiera-test: 5 lines');
    // The lens command: hiera.jobs lists no job yet.
    const command = after[0].command;
    assert.deepEqual(await s.request('workspace/executeCommand', { command: command.command, arguments: command.arguments }), []);

    const from = s.events.length;
    await s.notify('textDocument/didClose', { textDocument: { uri: URI } });
    const { event } = await s.waitFor((e) => e.method === 'textDocument/publishDiagnostics', { from, what: 'cleared diagnostics' });
    assert.deepEqual(event.params, { uri: URI, diagnostics: [] });
    const closed = await s.requestError('textDocument/codeLens', { textDocument: { uri: URI } });
    assert.equal(closed.code, -32602);
    assert.deepEqual(await s.shutdownAndExit(), { code: 0, signal: null });
  }));
