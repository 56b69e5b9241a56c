'use strict';
// Unit tests of src/settings.ts (compiled to out/ by `npm run build:test`): the
// VS Code "hiera" configuration → the JSON object hiera lsp gets as
// initializationOptions and as the answer to workspace/configuration. Pure
// functions: no editor and no `vscode` module needed.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const settings = require('../../out/settings');

const manifest = require(path.join(__dirname, '..', '..', 'package.json'));
const properties = manifest.contributes.configuration.properties;

const DEFAULT_JSON =
  '{"worker":{"command":null,"device":null},"gpu":null,"llm":{"endpoint":null,"model":null,"apiKeyEnv":"HIERA_LLM_API_KEY","provider":null,"maxRetries":null},' +
  '"budget":{"candidates":24,"minutes":30},"hints":{"enabled":true,"disabled":[],"severity":{}},"runsDir":null}';

// A VS Code WorkspaceConfiguration answers get(key) with the user's value or the
// package.json default; this one does the same from package.json itself.
function vscodeLike(values = {}) {
  return {
    get(key) {
      if (Object.prototype.hasOwnProperty.call(values, key)) return values[key];
      const property = properties[`hiera.${key}`];
      return property ? structuredClone(property.default) : undefined;
    },
  };
}

const CUSTOM = {
  'server.path': '/opt/hiera/bin/hiera',
  'server.args': ['lsp', '--log-level', 'debug'],
  'worker.command': ['ssh', 'gpu-box', 'hiera', 'worker', '--device', '1'],
  'worker.device': 'cpu',
  gpu: 'H200',
  'llm.endpoint': 'https://llm.example.com/v1',
  'llm.model': 'some-model-7b',
  'llm.apiKeyEnv': 'MY_LLM_KEY',
  'llm.provider': 'anthropic',
  'llm.maxRetries': 0,
  'budget.candidates': 100,
  'budget.minutes': 2.5,
  'hints.enabled': false,
  'hints.disabled': ['cuda.uncoalesced_access', 'torch.python_loop'],
  'hints.severity': { 'torch.host_sync': 'error', 'cuda.missing_restrict': 'hint' },
  runsDir: '/scratch/hiera-runs',
  'actions.optimizePattern': '^(Optimize|Speed up)',
  'actions.profilePattern': '^Measure',
  'trace.server': 'verbose',
};

test('defaults: the exact JSON sent as initializationOptions', () => {
  const warnings = [];
  const out = settings.toServerSettings(vscodeLike(), (w) => warnings.push(w));
  assert.equal(JSON.stringify(out), DEFAULT_JSON);
  assert.deepEqual(out, {
    worker: { command: null, device: null },
    gpu: null,
    llm: { endpoint: null, model: null, apiKeyEnv: 'HIERA_LLM_API_KEY', provider: null, maxRetries: null },
    budget: { candidates: 24, minutes: 30 },
    hints: { enabled: true, disabled: [], severity: {} },
    runsDir: null,
  });
  assert.deepEqual(warnings, []);
  // configurationFrom (flat values over settings.DEFAULTS) gives the same.
  assert.equal(JSON.stringify(settings.toServerSettings(settings.configurationFrom({}))), DEFAULT_JSON);
});

test('a fully customized configuration: exact JSON, client-only keys left out', () => {
  const out = settings.toServerSettings(vscodeLike(CUSTOM));
  assert.equal(
    JSON.stringify(out),
    '{"worker":{"command":["ssh","gpu-box","hiera","worker","--device","1"],"device":"cpu"},"gpu":"H200",' +
      '"llm":{"endpoint":"https://llm.example.com/v1","model":"some-model-7b","apiKeyEnv":"MY_LLM_KEY","provider":"anthropic","maxRetries":0},' +
      '"budget":{"candidates":100,"minutes":2.5},' +
      '"hints":{"enabled":false,"disabled":["cuda.uncoalesced_access","torch.python_loop"],' +
      '"severity":{"torch.host_sync":"error","cuda.missing_restrict":"hint"}},"runsDir":"/scratch/hiera-runs"}',
  );
  const text = JSON.stringify(out);
  for (const clientOnly of ['/opt/hiera/bin/hiera', '--log-level', 'Speed up', 'Measure', 'verbose']) {
    assert.ok(!text.includes(clientOnly), `${clientOnly} is client-side only`);
  }
  const client = settings.toClientSettings(vscodeLike(CUSTOM));
  assert.equal(client.serverPath, '/opt/hiera/bin/hiera');
  assert.deepEqual(client.serverArgs, ['lsp', '--log-level', 'debug']);
  assert.ok(client.optimizePattern.test('speed up this kernel'));
  assert.ok(!client.optimizePattern.test('hiera: Optimize'));
  assert.ok(client.profilePattern.test('Measure the module'));
});

test('the API key never appears: only the NAME of its environment variable is sent', () => {
  const secret = 'sk-live-0123456789abcdefSECRET';
  // A key typed into settings.json under keys hiera does not define is not copied...
  const withKey = vscodeLike({ ...CUSTOM, 'llm.apiKey': secret, apiKey: secret, 'llm.key': secret });
  const out = settings.toServerSettings(withKey);
  assert.equal(out.llm.apiKeyEnv, 'MY_LLM_KEY');
  assert.ok(!JSON.stringify(out).includes(secret));
  // ...and a key pasted into hiera.llm.apiKeyEnv itself is dropped, with a warning that does not repeat it.
  const warnings = [];
  const pasted = settings.toServerSettings(vscodeLike({ 'llm.apiKeyEnv': secret }), (w) => warnings.push(w));
  assert.equal(pasted.llm.apiKeyEnv, null);
  assert.ok(!JSON.stringify(pasted).includes(secret));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /NAME of an environment variable/);
  assert.ok(!warnings[0].includes(secret));
  // The same holds for the workspace/configuration answer.
  const answer = settings.configurationAnswer([{ section: 'hiera' }], () => withKey);
  assert.ok(!JSON.stringify(answer).includes(secret));
  // The mapping never reads an environment variable.
  process.env.MY_LLM_KEY = secret;
  try {
    assert.ok(!JSON.stringify(settings.toServerSettings(withKey)).includes(secret));
  } finally {
    delete process.env.MY_LLM_KEY;
  }
});

test('unset and malformed values: null (server default) or the default, with warnings', () => {
  const warnings = [];
  const out = settings.toServerSettings(
    vscodeLike({
      gpu: '  ',
      'llm.endpoint': ' https://x.example/v1 ',
      'worker.command': ['', 3, '  '],
      'worker.device': 'tpu',
      'budget.candidates': 2.5,
      'budget.minutes': -1,
      'hints.enabled': 'yes',
      'hints.disabled': 'cuda.x',
      'hints.severity': { 'torch.host_sync': 'fatal', 'cuda.block_size': 'warning', 'torch.python_loop': 2 },
      'llm.provider': 'gemini',
      'llm.maxRetries': 101,
      runsDir: ' ',
    }),
    (w) => warnings.push(w),
  );
  assert.deepEqual(out, {
    worker: { command: null, device: null },
    gpu: null,
    llm: { endpoint: 'https://x.example/v1', model: null, apiKeyEnv: 'HIERA_LLM_API_KEY', provider: null, maxRetries: null },
    budget: { candidates: 24, minutes: 30 },
    hints: { enabled: true, disabled: [], severity: { 'cuda.block_size': 'warning' } },
    runsDir: null,
  });
  assert.deepEqual(warnings, [
    'hiera.worker.device: "tpu" is not one of gpu, cpu; using the server\'s default (gpu)',
    'hiera.llm.provider: "gemini" is not one of openai, anthropic; using the server\'s default (openai)',
    'hiera.llm.maxRetries: 101 is not an integer from 0 to 100; using the server\'s default',
    'hiera.budget.candidates: 2.5 is not a positive integer; using 24',
    'hiera.budget.minutes: -1 is not a positive number; using 30',
    'hiera.hints.severity.torch.host_sync: "fatal" is not one of error, warning, information, hint; ignoring it',
    'hiera.hints.severity.torch.python_loop: 2 is not one of error, warning, information, hint; ignoring it',
  ]);
  const badPattern = [];
  const client = settings.toClientSettings(vscodeLike({ 'actions.optimizePattern': '(', 'server.args': [] }), (w) => badPattern.push(w));
  assert.equal(client.optimizePattern.source, '^Optimize');
  assert.deepEqual(client.serverArgs, [], 'an explicit [] is kept');
  assert.equal(badPattern.length, 1);
});

test('workspace/configuration answer: section "hiera", a part of it, and other sections', () => {
  const scopes = [];
  const read = (scopeUri) => {
    scopes.push(scopeUri);
    return vscodeLike(CUSTOM);
  };
  const answer = settings.configurationAnswer(
    [{ section: 'hiera', scopeUri: 'file:///w/a.cu' }, { section: 'hiera.llm' }, { section: 'hiera.budget.minutes' }, { section: 'editor' }, {}],
    read,
  );
  assert.deepEqual(answer, [
    settings.toServerSettings(vscodeLike(CUSTOM)),
    { endpoint: 'https://llm.example.com/v1', model: 'some-model-7b', apiKeyEnv: 'MY_LLM_KEY', provider: 'anthropic', maxRetries: 0 },
    2.5,
    null,
    null,
  ]);
  assert.deepEqual(scopes, ['file:///w/a.cu', undefined, undefined]);
  const delegated = settings.configurationAnswer([{ section: 'editor' }], read, (item) => `other:${item.section}`);
  assert.deepEqual(delegated, ['other:editor']);
});

test('settings.ts and package.json agree: every contributed setting has the same default and a place', () => {
  const contributed = Object.keys(properties).map((k) => k.replace(/^hiera\./, '')).sort();
  assert.deepEqual(contributed, Object.keys(settings.DEFAULTS).sort());
  for (const [key, value] of Object.entries(settings.DEFAULTS)) {
    assert.deepEqual(properties[`hiera.${key}`].default, value, `default of hiera.${key}`);
  }
  // Each setting is either client-only or lands in the server object at its dotted path.
  const server = settings.toServerSettings(vscodeLike());
  for (const key of contributed) {
    if (settings.CLIENT_ONLY_KEYS.includes(key)) continue;
    const parts = key.split('.');
    let node = server;
    for (const part of parts) {
      assert.ok(node !== null && typeof node === 'object' && part in node, `hiera.${key} is not in the server settings`);
      node = node[part];
    }
  }
  // Settings that need a new server process are client-only.
  for (const key of settings.RESTART_KEYS) assert.ok(settings.CLIENT_ONLY_KEYS.includes(key));
});

test('clearingPatch: a hint severity removed in the editor is sent as null so the server drops it too', () => {
  const before = settings.toServerSettings(vscodeLike({ 'hints.severity': { 'torch.host_sync': 'error', 'cuda.block_size': 'hint' } }));
  const after = settings.toServerSettings(vscodeLike({ 'hints.severity': { 'cuda.block_size': 'warning' } }));
  const patch = settings.clearingPatch(before, after);
  assert.deepEqual(patch.hints, { enabled: true, disabled: [], severity: { 'cuda.block_size': 'warning', 'torch.host_sync': null } });
  // Everything else is the new object as it is; arrays are replaced, not diffed.
  assert.deepEqual({ ...patch, hints: undefined }, { ...after, hints: undefined });
  // Nothing sent before (a new server): the object itself.
  assert.equal(settings.clearingPatch(undefined, after), after);
  // JSON merge patch (RFC 7396) of the patch over the old object gives exactly the new one.
  const mergePatch = (target, p) => {
    if (p === null || typeof p !== 'object' || Array.isArray(p)) return p;
    const out = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
    for (const [k, v] of Object.entries(p)) {
      if (v === null) delete out[k];
      else out[k] = mergePatch(out[k], v);
    }
    return out;
  };
  const withoutNulls = JSON.parse(JSON.stringify(after, (k, v) => v));
  assert.deepEqual(mergePatch(before, patch).hints, withoutNulls.hints);
});
