// Workspace Trust: a job builds and runs the workspace's code (the reference and
// the candidates), so an untrusted workspace keeps the static views (hints,
// hover, lenses, outline, task specs) and every job start is refused with a
// message that says why and how to trust. package.json's
// capabilities.untrustedWorkspaces lists the settings VS Code then ignores.
import * as vscode from 'vscode';

/** The server's commands that start a job (server/features/symbol_actions.h). */
export const JOB_COMMANDS: ReadonlySet<string> = new Set(['hiera.optimizeSymbol', 'hiera.profileSymbol']);

export const MANAGE_TRUST = 'Manage Workspace Trust';

export function refusal(what: string): string {
  return `hiera: ${what} is off in an untrusted workspace: a job builds and runs this workspace's code. Trust the workspace to run it; hints, hovers and the outline work without.`;
}

/** Shows the refusal, with a button that opens VS Code's trust editor. */
export function refuse(what: string, log: (line: string) => void): void {
  const message = refusal(what);
  log(message);
  void Promise.resolve(vscode.window.showWarningMessage(message, MANAGE_TRUST)).then((choice) => {
    if (choice === MANAGE_TRUST) void vscode.commands.executeCommand('workbench.trust.manage');
  });
}

type Next = (command: string, args: unknown[]) => unknown;

/**
 * vscode-languageclient's executeCommand middleware: the commands of code lenses
 * and code actions the user clicks pass here; a job command in an untrusted
 * workspace never reaches the server.
 */
export function trustMiddleware(isTrusted: () => boolean, log: (line: string) => void) {
  return {
    executeCommand(command: string, args: unknown[], next: Next): unknown {
      if (JOB_COMMANDS.has(command) && !isTrusted()) {
        refuse(command === 'hiera.profileSymbol' ? 'Profile' : 'Optimize', log);
        return undefined;
      }
      return next(command, args);
    },
  };
}
