// The extension's settings (contributes.configuration, section "hiera") mapped to
// what `hiera lsp` reads: the same JSON object is sent as initializationOptions
// and as the answer to workspace/configuration for section "hiera". Pure: no
// `vscode` import, so it is unit-tested without an editor.
//
// The server merges each object it gets with JSON merge-patch (RFC 7396), key by
// key. A setting left at "not set" is sent as null, which removes an earlier
// value on the server, so clearing a setting in the editor clears it there too.

/** What the mapping reads: a VS Code WorkspaceConfiguration for section "hiera" fits. */
export interface ConfigurationLike {
  get(key: string): unknown;
}

/** The server's "hiera" settings object, exactly as it goes over the wire. */
export interface ServerSettings {
  worker: { command: string[] | null; device: string | null };
  gpu: string | null;
  llm: { endpoint: string | null; model: string | null; apiKeyEnv: string | null; provider: string | null; maxRetries: number | null };
  budget: { candidates: number; minutes: number };
  hints: { enabled: boolean; disabled: string[]; severity: Record<string, string> };
  runsDir: string | null;
}

/** Settings that stay in the editor: how to start the server and which code actions the commands pick. */
export interface ClientSettings {
  serverPath: string;
  serverArgs: string[];
  optimizePattern: RegExp;
  profilePattern: RegExp;
}

export const SECTION = 'hiera';

/** The defaults of package.json's contributes.configuration (a unit test keeps the two equal). */
export const DEFAULTS = {
  'server.path': 'hiera',
  'server.args': ['lsp'],
  'worker.command': [] as string[],
  'worker.device': '',
  gpu: '',
  'llm.endpoint': '',
  'llm.model': '',
  'llm.apiKeyEnv': 'HIERA_LLM_API_KEY',
  'llm.provider': '',
  'llm.maxRetries': null,
  'budget.candidates': 24,
  'budget.minutes': 30,
  'hints.enabled': true,
  'hints.disabled': [] as string[],
  'hints.severity': {} as Record<string, string>,
  runsDir: '',
  'actions.optimizePattern': '^Optimize',
  'actions.profilePattern': '^Profile',
  'trace.server': 'off',
} as const;

/** Keys that never reach the server. */
export const CLIENT_ONLY_KEYS = ['server.path', 'server.args', 'actions.optimizePattern', 'actions.profilePattern', 'trace.server'];

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
/** What the server accepts as llm.provider and as a hints.severity value. */
export const PROVIDERS = ['openai', 'anthropic'];
export const SEVERITIES = ['error', 'warning', 'information', 'hint'];

export type Warn = (message: string) => void;

function str(config: ConfigurationLike, key: keyof typeof DEFAULTS): string | null {
  const value = config.get(key);
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

function strings(config: ConfigurationLike, key: keyof typeof DEFAULTS): string[] {
  const value = config.get(key);
  if (!Array.isArray(value)) return [];
  return value.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim());
}

function positive(config: ConfigurationLike, key: 'budget.candidates' | 'budget.minutes', integer: boolean, warn?: Warn): number {
  const value = config.get(key);
  const fallback = DEFAULTS[key];
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    warn?.(`hiera.${key}: ${JSON.stringify(value)} is not a positive ${integer ? 'integer' : 'number'}; using ${fallback}`);
    return fallback;
  }
  return value;
}

const DEVICES = ['gpu', 'cpu'];

// "cpu" asks for a CPU run (the server refuses jobs without a GPU otherwise); null: the server's default (gpu).
function device(config: ConfigurationLike, warn?: Warn): string | null {
  const value = str(config, 'worker.device');
  if (value === null || DEVICES.includes(value)) return value;
  warn?.(`hiera.worker.device: ${JSON.stringify(value)} is not one of ${DEVICES.join(', ')}; using the server's default (gpu)`);
  return null;
}

function provider(config: ConfigurationLike, warn?: Warn): string | null {
  const value = str(config, 'llm.provider');
  if (value === null || PROVIDERS.includes(value)) return value;
  warn?.(`hiera.llm.provider: ${JSON.stringify(value)} is not one of ${PROVIDERS.join(', ')}; using the server's default (openai)`);
  return null;
}

// null: the server's default. The server takes 0 to 100.
function maxRetries(config: ConfigurationLike, warn?: Warn): number | null {
  const value = config.get('llm.maxRetries');
  if (value === undefined || value === null) return null;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 100) {
    warn?.(`hiera.llm.maxRetries: ${JSON.stringify(value)} is not an integer from 0 to 100; using the server's default`);
    return null;
  }
  return value;
}

// {rule id: severity}; entries with another value are dropped with a warning.
function severities(config: ConfigurationLike, warn?: Warn): Record<string, string> {
  const value = config.get('hints.severity');
  const out: Record<string, string> = {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return out;
  for (const [rule, severity] of Object.entries(value as Record<string, unknown>)) {
    if (typeof severity === 'string' && SEVERITIES.includes(severity)) {
      out[rule] = severity;
    } else {
      warn?.(`hiera.hints.severity.${rule}: ${JSON.stringify(severity)} is not one of ${SEVERITIES.join(', ')}; ignoring it`);
    }
  }
  return out;
}

/**
 * Maps the "hiera" configuration to the server's settings object. Only the keys
 * below are copied: anything else a user typed under "hiera" (an "llm.apiKey",
 * say) is not sent. The API key is never read; only the name of the
 * environment variable that holds it is sent, and a value that does not look
 * like a variable name (a pasted key) is dropped with a warning.
 */
export function toServerSettings(config: ConfigurationLike, warn?: Warn): ServerSettings {
  const workerCommand = strings(config, 'worker.command');
  let apiKeyEnv = str(config, 'llm.apiKeyEnv');
  if (apiKeyEnv !== null && !ENV_NAME.test(apiKeyEnv)) {
    warn?.('hiera.llm.apiKeyEnv must be the NAME of an environment variable (letters, digits, _), not the key; ignoring it');
    apiKeyEnv = null;
  }
  const enabled = config.get('hints.enabled');
  return {
    worker: { command: workerCommand.length > 0 ? workerCommand : null, device: device(config, warn) },
    gpu: str(config, 'gpu'),
    llm: {
      endpoint: str(config, 'llm.endpoint'),
      model: str(config, 'llm.model'),
      apiKeyEnv,
      provider: provider(config, warn),
      maxRetries: maxRetries(config, warn),
    },
    budget: {
      candidates: positive(config, 'budget.candidates', true, warn),
      minutes: positive(config, 'budget.minutes', false, warn),
    },
    hints: {
      enabled: typeof enabled === 'boolean' ? enabled : DEFAULTS['hints.enabled'],
      disabled: strings(config, 'hints.disabled'),
      severity: severities(config, warn),
    },
    runsDir: str(config, 'runsDir'),
  };
}

/**
 * `next` as a merge patch over what the server holds after `previous`: a key
 * of an object-valued setting (hints.severity) that was sent before and is
 * gone now is sent as null, which removes it on the server (RFC 7396 would
 * keep it otherwise).
 */
export function clearingPatch(previous: unknown, next: unknown): unknown {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  if (!isObject(previous) || !isObject(next)) return next;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(next)) out[key] = key in previous ? clearingPatch(previous[key], value) : value;
  for (const key of Object.keys(previous)) if (!(key in next)) out[key] = null;
  return out;
}

function pattern(config: ConfigurationLike, key: 'actions.optimizePattern' | 'actions.profilePattern', warn?: Warn): RegExp {
  const source = str(config, key) ?? DEFAULTS[key];
  try {
    return new RegExp(source, 'i');
  } catch (error) {
    warn?.(`hiera.${key}: ${(error as Error).message}; using ${DEFAULTS[key]}`);
    return new RegExp(DEFAULTS[key], 'i');
  }
}

export function toClientSettings(config: ConfigurationLike, warn?: Warn): ClientSettings {
  const args = config.get('server.args');
  return {
    serverPath: str(config, 'server.path') ?? DEFAULTS['server.path'],
    // An explicit [] is kept: a wrapper script may need no arguments.
    serverArgs: Array.isArray(args) ? args.filter((a): a is string => typeof a === 'string') : [...DEFAULTS['server.args']],
    optimizePattern: pattern(config, 'actions.optimizePattern', warn),
    profilePattern: pattern(config, 'actions.profilePattern', warn),
  };
}

/** A ConfigurationLike over a flat object such as {"llm.endpoint": "…"}; missing keys read as the defaults. */
export function configurationFrom(values: Record<string, unknown>): ConfigurationLike {
  return {
    get(key: string): unknown {
      if (Object.prototype.hasOwnProperty.call(values, key)) return values[key];
      return (DEFAULTS as Record<string, unknown>)[key];
    },
  };
}

export interface ConfigurationItemLike {
  scopeUri?: string;
  section?: string;
}

/**
 * The answer to workspace/configuration: for the item of section "hiera" (or a
 * part of it, "hiera.llm"), the mapped settings; for any other section, what
 * `other` says (the client's default), null when there is none.
 */
export function configurationAnswer(
  items: ConfigurationItemLike[],
  read: (scopeUri?: string) => ConfigurationLike,
  other: (item: ConfigurationItemLike) => unknown = () => null,
  warn?: Warn,
): unknown[] {
  return items.map((item) => {
    const section = item.section;
    if (section !== SECTION && !(section ?? '').startsWith(`${SECTION}.`)) return other(item);
    let value: unknown = toServerSettings(read(item.scopeUri), warn);
    for (const part of section === SECTION ? [] : section!.slice(SECTION.length + 1).split('.')) {
      value = value !== null && typeof value === 'object' ? ((value as Record<string, unknown>)[part] ?? null) : null;
    }
    return value;
  });
}

/** Whether a change to these keys needs a new server process (the rest is sent to the running one). */
export const RESTART_KEYS = ['server.path', 'server.args'];
