// The extension's commands. They talk to the server with plain LSP requests
// through `client.sendRequest`, so the same code runs against a
// vscode-languageclient LanguageClient in VS Code and against a bare
// vscode-languageserver-protocol connection in the tests.
//
// Client command ids must differ from the commands the server lists in
// executeCommandProvider (hiera.cancelJob, hiera.jobs, …): vscode-languageclient
// registers those itself, and a second registration of an id fails. Hence
// "hiera.cancel" for the command that sends "hiera.cancelJob", and
// "hiera.showTaskSpec" for the one that runs the action sending "hiera.showSpec".
import * as vscode from 'vscode';
import type { JobTracker, JobView, ProgressToken } from './status';
import { JOB_COMMANDS, refuse } from './trust';

export const COMMANDS = {
  optimize: 'hiera.optimize',
  profile: 'hiera.profile',
  showTaskSpec: 'hiera.showTaskSpec',
  cancel: 'hiera.cancel',
  showReport: 'hiera.showReport',
  restart: 'hiera.restartServer',
} as const;

/** Commands of the server that the client sends through workspace/executeCommand. */
export const SERVER_COMMANDS = { cancelJob: 'hiera.cancelJob', jobs: 'hiera.jobs' } as const;

export const LANGUAGES = ['cuda-cpp', 'python'];

/** The title of the server's task spec action ("Show task spec for k"); not a setting. */
export const TASK_SPEC_PATTERN = /^Show task spec/i;

type ActionKind = 'optimize' | 'profile' | 'spec';
const VERBS: Record<ActionKind, string> = { optimize: 'optimize', profile: 'profile', spec: 'show the task spec of' };
const NAMES: Record<ActionKind, string> = { optimize: 'optimize', profile: 'profile', spec: 'show task spec' };

const CONTENT_MODIFIED = -32801;

interface Position {
  line: number;
  character: number;
}
interface Range {
  start: Position;
  end: Position;
}
export interface LspCommand {
  title: string;
  command: string;
  arguments?: unknown[];
}
export interface LspCodeAction {
  title: string;
  kind?: string;
  command?: LspCommand;
  edit?: unknown;
  data?: unknown;
  disabled?: { reason: string };
}

/** What the commands need of the language client (a LanguageClient has all of it). */
export interface ClientLike {
  sendRequest<R>(method: string, params: unknown): Promise<R>;
  code2ProtocolConverter?: { asUri(uri: vscode.Uri): string };
  protocol2CodeConverter?: { asWorkspaceEdit(edit: any): Promise<vscode.WorkspaceEdit> | vscode.WorkspaceEdit };
}

export interface CommandDeps {
  /** The running client, or undefined while the server is stopped. */
  client(): ClientLike | undefined;
  /** Restarts the server (LanguageClient.restart, or a new client when its command changed). */
  restart(): Promise<void>;
  tracker: JobTracker;
  /** Title patterns of the optimize and profile code actions. */
  patterns(): { optimize: RegExp; profile: RegExp };
  log(line: string): void;
  /** Workspace Trust (src/trust.ts): false refuses every job start. Absent: trusted. */
  trusted?(): boolean;
}

export interface StartedJob {
  jobId?: ProgressToken;
  title: string;
  result: unknown;
}

function isCommand(item: LspCommand | LspCodeAction): item is LspCommand {
  return typeof (item as LspCommand).command === 'string';
}

function errorCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function runningClient(deps: CommandDeps): ClientLike | undefined {
  const client = deps.client();
  if (!client) void vscode.window.showWarningMessage('hiera: the server is not running (run "hiera: Restart Server", and see the hiera output)');
  return client;
}

async function runAction(
  deps: CommandDeps,
  client: ClientLike,
  chosen: LspCommand | LspCodeAction,
  verb: string,
): Promise<StartedJob | undefined> {
  let command: LspCommand | undefined;
  if (isCommand(chosen)) {
    command = chosen;
  } else {
    let action = chosen;
    if (action.disabled) {
      void vscode.window.showInformationMessage(`hiera: ${action.title}: ${action.disabled.reason}`);
      return undefined;
    }
    if (!action.command && !action.edit && action.data !== undefined) {
      action = await client.sendRequest<LspCodeAction>('codeAction/resolve', action);
    }
    if (action.edit) {
      const edit = client.protocol2CodeConverter ? await client.protocol2CodeConverter.asWorkspaceEdit(action.edit) : action.edit;
      const applied = await vscode.workspace.applyEdit(edit as vscode.WorkspaceEdit);
      if (!applied) {
        void vscode.window.showWarningMessage(`hiera: ${action.title}: the edit was not applied`);
        return undefined;
      }
    }
    command = action.command;
  }
  if (!command) return { title: chosen.title, result: null };
  if (JOB_COMMANDS.has(command.command) && deps.trusted && !deps.trusted()) {
    refuse(chosen.title, deps.log);
    return undefined;
  }
  const result = await client.sendRequest<unknown>('workspace/executeCommand', {
    command: command.command,
    arguments: command.arguments ?? [],
  });
  const jobId = (result as { jobId?: unknown } | null)?.jobId;
  if (typeof jobId === 'string' || typeof jobId === 'number') {
    deps.tracker.started(jobId, chosen.title);
    deps.log(`${verb}: started job ${jobId} (${chosen.title})`);
    return { jobId, title: chosen.title, result };
  }
  deps.log(`${verb}: ${chosen.title}: ${JSON.stringify(result)}`);
  return { title: chosen.title, result };
}

/**
 * Optimize / profile at the cursor: asks the server for the code actions at the
 * selection, takes the one whose title matches the pattern (asks when several
 * do), resolves it if needed, applies its edit and runs its command through
 * workspace/executeCommand. A job the command starts reports through $/progress.
 */
async function actionAtCursor(deps: CommandDeps, which: ActionKind): Promise<StartedJob | undefined> {
  const verb = VERBS[which];
  const editor = vscode.window.activeTextEditor;
  if (!editor || !LANGUAGES.includes(editor.document.languageId)) {
    void vscode.window.showWarningMessage(`hiera: open a CUDA or Python file and put the cursor in the kernel or module to ${verb}`);
    return undefined;
  }
  if (which !== 'spec' && deps.trusted && !deps.trusted()) {
    refuse(NAMES[which] === 'optimize' ? 'Optimize' : 'Profile', deps.log);
    return undefined;
  }
  const client = runningClient(deps);
  if (!client) return undefined;
  const document = editor.document;
  const uri = client.code2ProtocolConverter ? client.code2ProtocolConverter.asUri(document.uri) : document.uri.toString();
  const selection = editor.selection;
  const range: Range = {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
  try {
    const actions =
      (await client.sendRequest<(LspCommand | LspCodeAction)[] | null>('textDocument/codeAction', {
        textDocument: { uri },
        range,
        context: { diagnostics: [], triggerKind: 1 },
      })) ?? [];
    const pattern = which === 'spec' ? TASK_SPEC_PATTERN : deps.patterns()[which];
    const matching = actions.filter((a) => pattern.test(a.title));
    if (matching.length === 0) {
      void vscode.window.showInformationMessage(`hiera: nothing to ${verb} at the cursor`);
      return undefined;
    }
    let chosen = matching[0];
    if (matching.length > 1) {
      const picked = await vscode.window.showQuickPick(
        matching.map((a) => a.title),
        { placeHolder: `hiera: what to ${verb}` },
      );
      if (picked === undefined) return undefined;
      chosen = matching.find((a) => a.title === picked)!;
    }
    return await runAction(deps, client, chosen, NAMES[which]);
  } catch (error) {
    if (errorCode(error) === CONTENT_MODIFIED) {
      void vscode.window.showWarningMessage(`hiera: the file changed while the action was prepared; run "${NAMES[which]}" again`);
    } else {
      void vscode.window.showErrorMessage(`hiera: ${NAMES[which]} failed: ${errorMessage(error)}`);
    }
    deps.log(`${NAMES[which]} failed: ${errorMessage(error)}`);
    return undefined;
  }
}

/**
 * Show task spec at the cursor: the server writes the spec to a Markdown file
 * and asks the editor to open it (window/showDocument, which
 * vscode-languageclient handles); when it could not write one, the Markdown it
 * answered opens in an untitled document.
 */
async function showTaskSpec(deps: CommandDeps): Promise<StartedJob | undefined> {
  const done = await actionAtCursor(deps, 'spec');
  const answer = done?.result as { markdown?: unknown; path?: unknown } | null | undefined;
  if (!done || !answer || typeof answer.markdown !== 'string') return done;
  if (typeof answer.path === 'string') {
    deps.log(`task spec: ${answer.path}`);
  } else {
    const document = await vscode.workspace.openTextDocument({ content: answer.markdown, language: 'markdown' });
    await vscode.window.showTextDocument(document, { preview: true });
  }
  return done;
}

/** Cancels the running job (asks which when several run); with none known, every job on the server. */
async function cancel(deps: CommandDeps): Promise<unknown> {
  const client = runningClient(deps);
  if (!client) return undefined;
  const running = deps.tracker.running();
  let args: ProgressToken[] = [];
  if (running.length === 1) {
    args = [running[0].token];
  } else if (running.length > 1) {
    const all = 'All running jobs';
    const picked = await vscode.window.showQuickPick([all, ...running.map((j) => `${String(j.token)}: ${j.title}`)], {
      placeHolder: 'hiera: cancel which job?',
    });
    if (picked === undefined) return undefined;
    if (picked !== all) args = [running.find((j) => picked.startsWith(`${String(j.token)}: `))!.token];
  }
  try {
    const result = await client.sendRequest<{ cancelled?: number }>('workspace/executeCommand', {
      command: SERVER_COMMANDS.cancelJob,
      arguments: args,
    });
    const count = result?.cancelled ?? 0;
    deps.log(`cancel ${args.length ? String(args[0]) : 'all'}: ${count} job(s) cancelled`);
    void vscode.window.showInformationMessage(count === 0 ? 'hiera: no job is running' : `hiera: cancelled ${count} job${count === 1 ? '' : 's'}`);
    return result;
  } catch (error) {
    deps.log(`cancel failed: ${errorMessage(error)}`);
    void vscode.window.showInformationMessage(`hiera: ${errorMessage(error)}`);
    return undefined;
  }
}

interface ServerJob {
  id: string;
  title: string;
  state: string;
  message?: string;
  percentage?: number;
  reportPath?: string;
}

/**
 * The report file of the last job: the one this window saw end, else the
 * newest finished job on the server that wrote one (hiera.jobs lists jobs
 * oldest first).
 */
export function reportPathOf(last: JobView | undefined, jobs: ServerJob[] | string): string | undefined {
  if (typeof jobs === 'string') return undefined;
  const path = (job: ServerJob | undefined) => (job && typeof job.reportPath === 'string' && job.reportPath !== '' ? job.reportPath : undefined);
  if (last) return path(jobs.find((job) => job.id === String(last.token)));
  return path([...jobs].reverse().find((job) => job.state !== 'running' && path(job)));
}

const cell = (value: unknown) => String(value ?? '').replace(/\|/g, '\\|').replace(/\n/g, ' ');

/** The report text: the last job's end message and the server's job list (hiera.jobs). */
export function formatReport(last: JobView | undefined, running: JobView[], jobs: ServerJob[] | string): string {
  const lines = ['# hiera report', ''];
  lines.push('## Last job', '');
  if (last) {
    lines.push(`- job: ${String(last.token)}`, `- title: ${last.title}`, `- outcome: ${last.outcome}`, `- message: ${last.endMessage ?? ''}`);
  } else {
    lines.push('No job has finished in this session.');
  }
  if (running.length > 0) {
    lines.push('', '## Running', '');
    for (const job of running) {
      lines.push(`- ${String(job.token)}: ${job.title}${job.percentage !== undefined ? ` ${job.percentage}%` : ''}${job.message ? ` — ${job.message}` : ''}`);
    }
  }
  lines.push('', '## Jobs on the server (hiera.jobs)', '');
  if (typeof jobs === 'string') {
    lines.push(jobs);
  } else if (jobs.length === 0) {
    lines.push('None.');
  } else {
    lines.push('| job | title | state | progress | message |', '|---|---|---|---|---|');
    for (const job of jobs) {
      lines.push(`| ${cell(job.id)} | ${cell(job.title)} | ${cell(job.state)} | ${job.percentage !== undefined ? `${job.percentage}%` : ''} | ${cell(job.message)} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export interface ShownReport {
  /** The report file the last job wrote, opened as it is; undefined: the summary below was shown instead. */
  path?: string;
  /** The summary shown in an untitled Markdown document when there is no report file. */
  text?: string;
}

/**
 * Opens the report file of the last job (hiera.jobs' reportPath); without
 * one (the job wrote none, or the server is not running), a summary of the
 * jobs in an untitled Markdown document (no webview).
 */
async function showReport(deps: CommandDeps): Promise<ShownReport> {
  const client = deps.client();
  let jobs: ServerJob[] | string = 'The server is not running.';
  if (client) {
    try {
      jobs = (await client.sendRequest<ServerJob[]>('workspace/executeCommand', { command: SERVER_COMMANDS.jobs, arguments: [] })) ?? [];
    } catch (error) {
      jobs = `The server did not answer hiera.jobs: ${errorMessage(error)}`;
    }
  }
  const path = reportPathOf(deps.tracker.last(), jobs);
  if (path) {
    try {
      const report = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
      await vscode.window.showTextDocument(report, { preview: true });
      deps.log(`report: ${path}`);
      return { path };
    } catch (error) {
      void vscode.window.showWarningMessage(`hiera: cannot open the report ${path}: ${errorMessage(error)}`);
      deps.log(`report ${path}: ${errorMessage(error)}`);
    }
  }
  const text = formatReport(deps.tracker.last(), deps.tracker.running(), jobs);
  const document = await vscode.workspace.openTextDocument({ content: text, language: 'markdown' });
  await vscode.window.showTextDocument(document, { preview: true });
  return { text };
}

async function restart(deps: CommandDeps): Promise<void> {
  deps.log('restarting the server');
  try {
    await deps.restart();
  } catch (error) {
    void vscode.window.showErrorMessage(`hiera: the server did not restart: ${errorMessage(error)}`);
    deps.log(`restart failed: ${errorMessage(error)}`);
  }
}

/** The command handlers by id, for registration and for the tests. */
export function createCommands(deps: CommandDeps): Record<string, (...args: unknown[]) => Promise<unknown>> {
  return {
    [COMMANDS.optimize]: () => actionAtCursor(deps, 'optimize'),
    [COMMANDS.profile]: () => actionAtCursor(deps, 'profile'),
    [COMMANDS.showTaskSpec]: () => showTaskSpec(deps),
    [COMMANDS.cancel]: () => cancel(deps),
    [COMMANDS.showReport]: () => showReport(deps),
    [COMMANDS.restart]: () => restart(deps),
  };
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  return Object.entries(createCommands(deps)).map(([id, handler]) => vscode.commands.registerCommand(id, handler));
}
