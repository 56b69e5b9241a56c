'use strict';
// Drives code-server's workbench in headless Chromium (playwright-core) the way a
// user would, and asserts what hiera shows: the .cu's hints in the Problems
// panel, the kernel's hover with hiera's cost estimate, the kernels in the
// Outline, and an Optimize job on the .py's module, run by the CPU worker to its
// end, with hiera's progress in the window. Screenshots of each step go to SHOTS.
// Mode "untrusted": the folder opens in Restricted Mode (no trust prompt); the .py's hints still
// show, and Optimize is refused with hiera's message, no job started.
//   node drive.js trusted|untrusted URL WORK_DIR SHOTS_DIR
const { chromium } = require('playwright-core');
const fs = require('node:fs');
const path = require('node:path');
const assert = require('node:assert/strict');

const [mode, url, work, shots] = process.argv.slice(2);
const STEP_MS = 60000;
const JOB_MS = 240000;

function step(name) {
  console.log(`== ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
const started = Date.now();

// A quick-input box (Quick Open, command palette, Go to Line): open it with KEY,
// type TEXT and take the row labelled PICK (none for Go to Line).
async function quickInput(page, key, text, pick) {
  await page.keyboard.press(key);
  await page.waitForSelector('.quick-input-widget:not([style*="display: none"]) input', { timeout: STEP_MS });
  await page.keyboard.type(text);
  if (pick) await page.waitForSelector(`.quick-input-list .monaco-list-row[aria-label*="${pick}"]`, { timeout: STEP_MS });
  await page.keyboard.press('Enter');
}

async function openFile(page, name) {
  await quickInput(page, 'Control+P', name, name);
  await page.waitForSelector(`.tab.active[aria-label*="${name}"]`, { timeout: STEP_MS });
}

const command = (page, title) => quickInput(page, 'F1', title, title);
const goTo = (page, line, column) => quickInput(page, 'Control+G', `${line}:${column}`);

// The .py open, its hint shown (the server answered), Optimize at Cursor on class Model.
async function optimizeModel(page) {
  await openFile(page, 'row_loop_mlp.py');
  await page.waitForSelector('.monaco-editor .squiggly-warning', { timeout: STEP_MS });
  await goTo(page, 9, 8);
  await command(page, 'hiera: Optimize at Cursor');
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(shots, name) });
  console.log(`   screenshot ${name}`);
}

async function untrusted(page) {
  step('untrusted workspace: Restricted Mode');
  await page.goto(url);
  await page.waitForSelector('.statusbar-item:has-text("Restricted Mode")', { timeout: STEP_MS });
  step('untrusted workspace: hints, and Optimize refused');
  await optimizeModel(page);
  const toast = '.notifications-toasts .notification-list-item';
  await page.waitForSelector(`${toast}:has-text("untrusted workspace")`, { timeout: STEP_MS });
  const texts = await page.$$eval(toast, (items) => items.map((i) => i.innerText));
  console.log(`   notifications: ${JSON.stringify(texts)}`);
  const refusal = texts.find((t) => t.includes('untrusted workspace'));
  assert.match(refusal, /hiera: Optimize is off in an untrusted workspace: a job builds and runs this workspace's code\. Trust the workspace to run it; hints, hovers and the outline work without\./);
  assert.match(refusal, /Manage Workspace Trust/);
  await page.waitForTimeout(1000);  // the toast's fade-in
  await shot(page, 'vscode-untrusted.png');
  const jobs = await page.$$eval('.statusbar-item', (items) => items.map((i) => i.innerText).filter((t) => /hiera:/.test(t)));
  assert.deepEqual(jobs, [], 'no job in the status bar');
  step('done');
}

async function main() {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    if (mode === 'untrusted') return await untrusted(page);
    step('workbench');
    await page.goto(url);
    await page.waitForSelector('.monaco-workbench', { timeout: STEP_MS });
    await page.waitForSelector('.explorer-folders-view .monaco-list-row[aria-label*="strided_scaled_relu.cu"]', { timeout: STEP_MS });

    step('the .cu: diagnostics');
    await openFile(page, 'strided_scaled_relu.cu');
    await page.waitForSelector('.monaco-editor .squiggly-warning, .monaco-editor .squiggly-info, .monaco-editor .squiggly-error', { timeout: STEP_MS });
    await page.keyboard.press('Control+Shift+M');
    await page.waitForSelector('.markers-panel .monaco-list-row', { timeout: STEP_MS });
    const problems = await page.$$eval('.markers-panel .monaco-list-row', (rows) => rows.map((r) => r.getAttribute('aria-label') || ''));
    console.log(`   problems: ${JSON.stringify(problems)}`);
    PROBLEMS(problems);
    await shot(page, 'vscode-problems.png');

    step('the .cu: hover on the kernel');
    await goTo(page, 12, 40);
    await page.keyboard.press('Control+K');
    await page.keyboard.press('Control+I');
    await page.waitForSelector('.monaco-hover:not(.hidden) .hover-contents', { timeout: STEP_MS });
    const hover = await page.$eval('.monaco-hover:not(.hidden)', (h) => h.innerText);
    console.log(`   hover: ${JSON.stringify(hover)}`);
    HOVER(hover);
    await shot(page, 'vscode-hover.png');
    await page.keyboard.press('Escape');

    step('the .cu: outline');
    await command(page, 'Explorer: Focus on Outline View');
    await page.waitForSelector('.outline-pane .monaco-list-row', { timeout: STEP_MS });
    const outline = await page.$$eval('.outline-pane .monaco-list-row', (rows) => rows.map((r) => r.getAttribute('aria-label') || r.innerText));
    console.log(`   outline: ${JSON.stringify(outline)}`);
    OUTLINE(outline);
    await shot(page, 'vscode-outline.png');

    step('the .py: Optimize on the CPU worker');
    await optimizeModel(page);
    const statusItem = '.statusbar-item[id*="hiera"], .statusbar-item:has-text("hiera:")';
    await page.waitForSelector(statusItem, { timeout: STEP_MS });
    const running = await page.$eval(statusItem, (e) => e.innerText);
    console.log(`   status while running: ${JSON.stringify(running)}`);
    await shot(page, 'vscode-optimize-progress.png');
    const done = await page.waitForFunction(
      () => {
        const item = [...document.querySelectorAll('.statusbar-item')].find((e) => /hiera:/.test(e.innerText));
        return item && !item.querySelector('.codicon-sync') ? item.innerText : false;
      },
      null,
      { timeout: JOB_MS, polling: 500 },
    );
    const end = await done.jsonValue();
    const icon = await page.$eval(statusItem, (e) => (e.querySelector(".codicon") || {}).className || "");
    console.log(`   icon: ${icon}`);
    console.log(`   status at the end: ${JSON.stringify(end)}`);
    JOB(running, end, icon, channelText());
    await shot(page, 'vscode-optimize-done.png');
    step('done');
  } finally {
    await browser.close();
  }
}

// What hiera shows, exactly where the fixture makes it certain.
function PROBLEMS(problems) {
  assert.equal(problems[0], '3 problems in file strided_scaled_relu.cu of folder .');
  const rows = problems.slice(1);
  const expected = [
    /^Warning: 'x\[i\]': consecutive threads .* a warp's loads are not coalesced at line 17 and character 25\. generated by hiera$/,
    /^Warning: 'y\[i\]': consecutive threads .* a warp's stores are not coalesced at line 18 and character 5\. generated by hiera$/,
    /^Info: 'x' is only read in 'strided_scaled_relu': declare it __restrict__ at line 12 and character 48\. generated by hiera$/,
  ];
  assert.equal(rows.length, expected.length, JSON.stringify(rows));
  expected.forEach((pattern, i) => assert.match(rows[i], pattern));
}
function HOVER(hover) {
  assert.match(hover, /^kernel strided_scaled_relu\n/);
  assert.match(hover, /Estimate on H200: [0-9.]+ µs at speed of light, memory-bound · 50\.3 MFLOP, 134\.2 MB \(shapes from annotations\)/);
}
function OUTLINE(outline) {
  assert.deepEqual(outline, ['strided_scaled_relu (function)']);
}
function JOB(running, end, icon, channel) {
  assert.match(running, /hiera: Optimize Model [0-9]+%/);
  // A terminal state: the spinner is gone, an outcome icon and the end message with its report are shown.
  assert.match(icon, /codicon-(check|warning|error)\b/);
  const report = /^ ?hiera: Model: .*; report: (\S+\/report\.md)$/.exec(end);
  assert.ok(report, `the end message names the report: ${end}`);
  assert.ok(fs.existsSync(report[1]), `${report[1]} exists`);
  // hiera's progress on the way, as the extension logged it in the hiera output channel.
  for (const phase of ['optimize: started job hiera-job-1 (Optimize Model.forward)', "probing the worker's device", 'timing the reference']) {
    assert.ok(channel.includes(phase), `the hiera output channel shows "${phase}"`);
  }
}

// The hiera output channel's file (code-server writes each channel under logs/).
function channelText() {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (/-hiera\.log$/.test(entry.name)) found.push(full);
    }
  };
  walk(path.join(work, 'data', 'logs'));
  return found.map((file) => fs.readFileSync(file, 'utf8')).join('\n');
}

main().catch((error) => {
  console.error(`FAIL: ${error && error.stack ? error.stack : error}`);
  process.exit(1);
});
