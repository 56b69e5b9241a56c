// The running job in the status bar, fed by the server's work-done progress.
//
// hiera creates its progress tokens itself (window/workDoneProgress/create, the
// token is the job id) and then sends $/progress. vscode-languageclient 9 answers
// the create request with a ProgressPart that registers the only $/progress
// handler for that token (vscode-jsonrpc keeps one per token) and drives the
// built-in progress UI, so neither client.onProgress(token) nor
// client.onNotification('$/progress') can be used beside it. The client's
// `middleware.handleWorkDoneProgress(token, params, next)` sees every
// begin/report/end of those tokens: we observe them there and call next(),
// which keeps the built-in progress UI (and its cancel button) working.
import * as vscode from 'vscode';

export type ProgressToken = string | number;

export interface ProgressValue {
  kind: 'begin' | 'report' | 'end';
  title?: string;
  message?: string;
  percentage?: number;
  cancellable?: boolean;
}

export type JobOutcome = 'running' | 'finished' | 'cancelled' | 'not applied' | 'no GPU' | 'failed';

export interface JobView {
  token: ProgressToken;
  title: string;
  message?: string;
  percentage?: number;
  outcome: JobOutcome;
  /** The end message, for the report. */
  endMessage?: string;
}

function outcomeOf(message: string | undefined): JobOutcome {
  const text = (message ?? '').trim().toLowerCase();
  if (text === 'cancelled' || text.startsWith('cancelled')) return 'cancelled';
  if (text.startsWith('not applied')) return 'not applied';
  // The server refused the job before it ran ("Model: not started: no GPU: ..."): not a success.
  if (text.startsWith('no gpu') || /(^|: )not started: no gpu\b/.test(text)) return 'no GPU';
  if (text.startsWith('failed') || text.startsWith('error')) return 'failed';
  return 'finished';
}

export type JobListener = (job: JobView) => void;

/** What the server said about each job, in arrival order. No vscode calls: the view renders it. */
export class JobTracker {
  private readonly jobs = new Map<string, JobView>();
  private lastEnded: JobView | undefined;
  // Job ids restart with each server process: an id that ended in an earlier one is a new job.
  private generation = 0;
  private lastEndedGeneration = -1;
  private readonly listeners = new Set<JobListener>();

  constructor(private readonly log: (line: string) => void = () => {}) {}

  /** A job the extension started (executeCommand answered {jobId}); its begin may already have arrived. */
  started(token: ProgressToken, title: string): void {
    const key = String(token);
    if (this.jobs.has(key) || this.endedHere(token)) return;
    this.update({ token, title, outcome: 'running' });
  }

  /** The server process went away: its running jobs went with it. */
  serverStopped(): void {
    for (const job of this.running()) {
      this.log(`[job ${String(job.token)}] ${job.title}: the server stopped`);
      this.update({ ...job, outcome: 'failed', endMessage: 'the server stopped', message: 'the server stopped' });
    }
    this.generation += 1;
  }

  private endedHere(token: ProgressToken): boolean {
    return this.lastEnded?.token === token && this.lastEndedGeneration === this.generation;
  }

  /** One $/progress value of `token`. */
  onProgress(token: ProgressToken, value: ProgressValue): void {
    if (!value || typeof value !== 'object') return;
    const key = String(token);
    const known = this.jobs.get(key);
    const job: JobView = known ? { ...known } : { token, title: value.title ?? `job ${key}`, outcome: 'running' };
    switch (value.kind) {
      case 'begin':
        job.title = value.title ?? job.title;
        job.message = value.message;
        job.percentage = value.percentage;
        this.log(`[job ${key}] ${job.title}: started${value.message ? ` (${value.message})` : ''}`);
        break;
      case 'report':
        if (value.message !== undefined) job.message = value.message;
        if (value.percentage !== undefined) job.percentage = value.percentage;
        this.log(`[job ${key}] ${job.message ?? ''}${job.percentage !== undefined ? ` ${job.percentage}%` : ''}`);
        break;
      case 'end':
        job.outcome = outcomeOf(value.message);
        job.endMessage = value.message ?? '';
        job.message = value.message;
        this.log(`[job ${key}] ${job.title}: ${value.message ?? 'ended'}`);
        break;
      default:
        return;
    }
    this.update(job);
  }

  private update(job: JobView): void {
    const key = String(job.token);
    if (job.outcome === 'running') {
      this.jobs.set(key, job);  // a Map keeps first-insertion order: the newest job is last
    } else {
      this.jobs.delete(key);
      this.lastEnded = job;
      this.lastEndedGeneration = this.generation;
    }
    for (const listener of [...this.listeners]) listener(job);
  }

  running(): JobView[] {
    return [...this.jobs.values()];
  }

  last(): JobView | undefined {
    return this.lastEnded;
  }

  onDidChange(listener: JobListener): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** Resolves with the job when `token` ends. */
  whenEnded(token: ProgressToken): Promise<JobView> {
    if (this.endedHere(token) && !this.jobs.has(String(token))) return Promise.resolve(this.lastEnded!);
    return new Promise((resolve) => {
      const subscription = this.onDidChange((job) => {
        if (job.token === token && job.outcome !== 'running') {
          subscription.dispose();
          resolve(job);
        }
      });
    });
  }
}

/** The vscode-languageclient middleware that feeds `tracker` and lets the built-in progress UI run. */
export function progressMiddleware(tracker: JobTracker) {
  return {
    handleWorkDoneProgress(token: ProgressToken, params: ProgressValue, next: (token: ProgressToken, params: any) => void): void {
      try {
        tracker.onProgress(token, params);
      } finally {
        next(token, params);
      }
    },
  };
}

const ICONS: Record<JobOutcome, string> = {
  running: '$(sync~spin)',
  finished: '$(check)',
  cancelled: '$(circle-slash)',
  'not applied': '$(warning)',
  'no GPU': '$(warning)',
  failed: '$(error)',
};

/** The status bar text of a job: "$(sync~spin) hiera: title 40% — message". */
export function statusText(job: JobView, othersRunning = 0): string {
  if (job.outcome === 'running') {
    const percent = job.percentage !== undefined ? ` ${job.percentage}%` : '';
    const more = othersRunning > 0 ? ` (+${othersRunning})` : '';
    return `${ICONS.running} hiera: ${job.title}${percent}${more}`;
  }
  return `${ICONS[job.outcome]} hiera: ${job.endMessage || job.outcome}`;
}

/** The status bar item: the newest running job (click: cancel), else the last result (click: report). */
export class JobStatusBar {
  private readonly item: vscode.StatusBarItem;
  private readonly subscription: { dispose(): void };

  constructor(private readonly tracker: JobTracker) {
    this.item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'hiera job';
    this.subscription = tracker.onDidChange(() => this.render());
    this.render();
  }

  render(): void {
    const running = this.tracker.running();
    const last = this.tracker.last();
    if (running.length > 0) {
      const job = running[running.length - 1];
      this.item.text = statusText(job, running.length - 1);
      this.item.tooltip = `${job.title}${job.message ? `: ${job.message}` : ''} — click to cancel`;
      this.item.command = 'hiera.cancel';
      this.item.show();
    } else if (last) {
      this.item.text = statusText(last);
      this.item.tooltip = `${last.title}: ${last.endMessage || last.outcome} — click for the report`;
      this.item.command = 'hiera.showReport';
      this.item.show();
    } else {
      this.item.hide();
    }
  }

  get text(): string {
    return this.item.text;
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
