// The hiera extension: starts `hiera lsp` for CUDA and Python files with
// vscode-languageclient, sends the "hiera" settings (src/settings.ts) as
// initializationOptions and on workspace/configuration, shows the running job in
// the status bar (src/status.ts) and registers the commands (src/commands.ts).
// In an untrusted workspace jobs are refused (src/trust.ts); the rest works.
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, State } from 'vscode-languageclient/node';
import { CommandDeps, LANGUAGES, registerCommands } from './commands';
import {
  ConfigurationLike,
  RESTART_KEYS,
  SECTION,
  clearingPatch,
  configurationAnswer,
  toClientSettings,
  toServerSettings,
} from './settings';
import { JobStatusBar, JobTracker, progressMiddleware } from './status';
import { trustMiddleware } from './trust';

let client: LanguageClient | undefined;
let output: vscode.OutputChannel | undefined;
let launched: { command: string; args: string[] } | undefined;
// The settings object the running server last got: a later change is sent as a
// patch over it that clears removed keys (settings.ts clearingPatch).
let lastSent: unknown;
// Set by deactivate(): a restart still in flight then starts no new server.
let deactivated = false;

function serverSettings(): unknown {
  const next = toServerSettings(read(), warn);
  const patch = clearingPatch(lastSent, next);
  lastSent = next;
  return patch;
}

function log(line: string): void {
  output?.appendLine(`[${new Date().toISOString()}] ${line}`);
}

// Settings are read on every start, pull and change: show each distinct problem once.
const warned = new Set<string>();
function warn(message: string): void {
  log(message);
  if (warned.has(message)) return;
  warned.add(message);
  void vscode.window.showWarningMessage(message);
}

const read = (scopeUri?: string): ConfigurationLike =>
  vscode.workspace.getConfiguration(SECTION, scopeUri ? vscode.Uri.parse(scopeUri) : undefined);

function createClient(tracker: JobTracker): LanguageClient {
  const launch = toClientSettings(read(), warn);
  launched = { command: launch.serverPath, args: launch.serverArgs };
  // No `transport`: TransportKind.stdio would append "--stdio" to the arguments.
  const serverOptions: ServerOptions = { command: launch.serverPath, args: launch.serverArgs, options: { env: process.env } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: LANGUAGES.flatMap((language) => [
      { scheme: 'file', language },
      { scheme: 'untitled', language },
    ]),
    outputChannel: output,
    // A function: read again on every (re)start.
    initializationOptions: () => {
      lastSent = undefined;  // a new server process holds nothing yet
      return serverSettings();
    },
    middleware: {
      ...progressMiddleware(tracker),
      ...trustMiddleware(() => vscode.workspace.isTrusted, log),
      workspace: {
        // The server pulls section "hiera": answer with the mapped settings, not the raw configuration.
        configuration: async (params, token, next) => {
          const hiera = configurationAnswer(params.items, read, () => undefined, warn).map((value, i) =>
            params.items[i].section === SECTION && !params.items[i].scopeUri ? serverSettings() : value,
          );
          if (params.items.every((item) => item.section === SECTION || (item.section ?? '').startsWith(`${SECTION}.`))) return hiera;
          const others = await next(params, token);
          if (!Array.isArray(others)) return others;
          return hiera.map((value, i) => (value === undefined ? others[i] : value));
        },
      },
    },
  };
  log(`starting ${launch.serverPath} ${launch.serverArgs.join(' ')}`);
  const created = new LanguageClient('hiera', 'hiera', serverOptions, clientOptions);
  created.onDidChangeState((event) => {
    if (event.newState === State.Stopped) tracker.serverStopped();
  });
  return created;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  deactivated = false;
  output = vscode.window.createOutputChannel('hiera');
  context.subscriptions.push(output);
  const tracker = new JobTracker(log);
  context.subscriptions.push(new JobStatusBar(tracker));

  const restart = async (): Promise<void> => {
    // A restart asked for while the server is still starting (trust granted right after a restart) waits for it.
    if (client) await settled(client);
    const launch = toClientSettings(read(), warn);
    const changed = !launched || launch.serverPath !== launched.command || JSON.stringify(launch.serverArgs) !== JSON.stringify(launched.args);
    if (client && !changed && client.state === State.Running) {
      await client.restart();
      return;
    }
    // A new command line, or a client that never started, needs a new client.
    const old = client;
    client = undefined;
    if (old) await stopClient(old, true).catch((error: unknown) => log(`stopping the old server: ${String(error)}`));
    // deactivate() may have run while the old server stopped: start nothing then.
    if (deactivated) return;
    client = createClient(tracker);
    await client.start();
  };

  const deps: CommandDeps = {
    client: () => (client && client.state === State.Running ? client : undefined),
    restart,
    tracker,
    patterns: () => {
      const settings = toClientSettings(read(), warn);
      return { optimize: settings.optimizePattern, profile: settings.profilePattern };
    },
    log,
    trusted: () => vscode.workspace.isTrusted,
  };
  context.subscriptions.push(...registerCommands(deps));
  if (!vscode.workspace.isTrusted) log('untrusted workspace: hints and hovers only, no optimize or profile jobs');
  // Trusting takes the workspace's restricted settings (hiera.server.path, ...) into effect: restart on them.
  context.subscriptions.push(
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      log('workspace trusted: restarting the server with the workspace settings');
      void vscode.commands.executeCommand('hiera.restartServer');
    }),
  );

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (!event.affectsConfiguration(SECTION)) return;
      if (RESTART_KEYS.some((key) => event.affectsConfiguration(`${SECTION}.${key}`))) {
        const choice = await vscode.window.showInformationMessage('hiera: the server command changed.', 'Restart Server');
        if (choice === 'Restart Server') await vscode.commands.executeCommand('hiera.restartServer');
        return;
      }
      // The server merges what it gets key by key; nulls clear settings the user removed.
      if (client && client.state === State.Running) {
        await client.sendNotification('workspace/didChangeConfiguration', { settings: { [SECTION]: serverSettings() } });
      }
    }),
  );

  client = createClient(tracker);
  try {
    await client.start();
  } catch (error) {
    const message = `hiera: could not start "${launched?.command}": ${error instanceof Error ? error.message : String(error)}. Set hiera.server.path, then run "hiera: Restart Server".`;
    log(message);
    void vscode.window.showErrorMessage(message);
  }
}

/** Lets a client that is still starting finish (or fail) its start; vscode-languageclient cannot stop it before. */
async function settled(c: LanguageClient): Promise<void> {
  if (c.state === State.Starting) await c.start().catch(() => undefined);
}

/** Stops a client whatever its state: one still starting is stopped once started, one that never started is left. */
async function stopClient(c: LanguageClient, dispose = false): Promise<void> {
  await settled(c);
  if (c.state !== State.Running) return;
  await (dispose ? c.dispose() : c.stop());
}

export async function deactivate(): Promise<void> {
  deactivated = true;
  const old = client;
  client = undefined;
  if (old) await stopClient(old);
}
