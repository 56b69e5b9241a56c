'use strict';
// The .vsix that `npm run build && npm run package` (vsce, offline) produced:
// a zip holding the bundled extension and its manifest, and nothing else of the
// source tree. Read with a small zip reader (central directory + inflateRaw).
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const root = path.join(__dirname, '..', '..');
const vsix = path.join(root, 'hiera.vsix');

function readZip(file) {
  const buf = fs.readFileSync(file);
  assert.equal(buf.readUInt32LE(0), 0x04034b50, `${file} is not a zip`);
  // End of central directory: the last 0x06054b50 within the trailing 64 KiB + 22 bytes.
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65557); --i) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  assert.ok(eocd >= 0, 'no end of central directory');
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const entries = new Map();
  for (let n = 0; n < count; ++n) {
    assert.equal(buf.readUInt32LE(at), 0x02014b50, 'bad central directory entry');
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    const name = buf.toString('utf8', at + 46, at + 46 + nameLength);
    entries.set(name, () => {
      const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
      const data = buf.subarray(start, start + compressed);
      return method === 0 ? data : zlib.inflateRawSync(data);
    });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

test('hiera.vsix: a zip with extension/dist/extension.js and extension/package.json, no sources', { skip: fs.existsSync(vsix) ? false : 'hiera.vsix is missing: run npm run build && npm run package' }, () => {
  const entries = readZip(vsix);
  const names = [...entries.keys()].sort();
  for (const required of ['extension/dist/extension.js', 'extension/package.json', 'extension.vsixmanifest', '[Content_Types].xml', 'extension/README.md']) {
    assert.ok(names.includes(required), `${required} in ${JSON.stringify(names)}`);
  }
  assert.ok(names.some((n) => /^extension\/LICENSE/i.test(n)), `a license in ${JSON.stringify(names)}`);
  for (const name of names) {
    assert.ok(!/^extension\/(src|test|out|node_modules)\//.test(name), `${name} does not belong in the package`);
  }
  const manifest = JSON.parse(entries.get('extension/package.json')().toString());
  const source = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  assert.equal(manifest.name, 'hiera');
  assert.equal(manifest.publisher, 'hiera');
  assert.equal(manifest.version, source.version);
  assert.equal(manifest.main, './dist/extension.js');
  assert.deepEqual(manifest.activationEvents, ['onLanguage:cuda-cpp', 'onLanguage:python']);
  assert.deepEqual(manifest.contributes, source.contributes);
  const bundled = entries.get('extension/dist/extension.js')().toString();
  assert.equal(bundled, fs.readFileSync(path.join(root, 'dist', 'extension.js'), 'utf8'), 'the package holds the current build');
  assert.match(bundled, /require\("vscode"\)/, 'vscode stays external');
  assert.ok(!/require\("vscode-languageclient/.test(bundled), 'vscode-languageclient is bundled in');
  const vsixManifest = entries.get('extension.vsixmanifest')().toString();
  assert.match(vsixManifest, /<Identity [^>]*Id="hiera"[^>]*Publisher="hiera"/);
  assert.match(vsixManifest, /Microsoft\.VisualStudio\.Code" Version="\^1\.85\.0"|Microsoft\.VisualStudio\.Code/);
});
