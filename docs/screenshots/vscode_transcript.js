// The VS Code transcript (vscode-transcript.md): the extension's command code under
// the stubbed vscode module against the real hiera lsp; prints Markdown.
// Run from the repository root: node docs/screenshots/vscode_transcript.js FILE.cu RUNS_DIR
const base=require('path').resolve('editors/vscode')+'/';
const stub = require(base+'test/support/vscode-stub').__stub.install();
const { Client } = require(base+'test/support/lsp');
const settings = require(base+'out/settings');
const { COMMANDS, createCommands } = require(base+'out/commands');
const { JobTracker, JobStatusBar, progressMiddleware } = require(base+'out/status');
const fs=require('fs');
(async () => {
  const file=require('path').resolve(process.argv[2]), uri='file://'+file, text=fs.readFileSync(file,'utf8');
  const user = settings.configurationFrom({ runsDir: require('path').resolve(process.argv[3]) });
  const tracker = new JobTracker(()=>{}); const bar = new JobStatusBar(tracker);
  const c = new Client({ bin: require('path').resolve('build/dev/bin/hiera'), args: ['lsp'], middleware: progressMiddleware(tracker), answerConfiguration: (items) => settings.configurationAnswer(items, () => user) });
  const log = (t, o) => console.log(`### ${t}\n\`\`\`json\n${JSON.stringify(o, null, 1)}\n\`\`\`\n`);
  const init = settings.toServerSettings(user);
  log('→ initialize: initializationOptions', init);
  const r = await c.initialize(init);
  log('← initialize result (capabilities excerpt)', { serverInfo: r.serverInfo, executeCommandProvider: r.capabilities.executeCommandProvider, codeActionProvider: r.capabilities.codeActionProvider });
  await c.open(uri, 'cuda-cpp', text);
  const d = await c.waitFor(e => e.method==='textDocument/publishDiagnostics', 'diags');
  log('← textDocument/publishDiagnostics', d.params.diagnostics.map(x=>({range:x.range, severity:x.severity, code:x.code, message:x.message})));
  log('← textDocument/hover at 12:40', await c.sendRequest('textDocument/hover', { textDocument:{uri}, position:{line:11, character:40} }));
  log('← textDocument/codeLens', await c.sendRequest('textDocument/codeLens', { textDocument:{uri} }));
  const commands = createCommands({ client: () => c, restart: async()=>{}, tracker, patterns: () => ({ optimize:/^Optimize/i, profile:/^Profile/i }), log: (l)=>console.log('output channel: '+l) });
  stub.state.activeTextEditor = stub.editor({ uri, languageId: 'cuda-cpp', line: 11, character: 40 });
  log('← textDocument/codeAction at the cursor (titles)', (await c.sendRequest('textDocument/codeAction', { textDocument:{uri}, range:{start:{line:11,character:40},end:{line:11,character:40}}, context:{diagnostics:[]} })).map(a=>a.title));
  const spec = await commands[COMMANDS.showTaskSpec]();
  log('hiera: Show Task Spec at Cursor → workspace/executeCommand hiera.showSpec answer (markdown cut)', { ...spec.result, markdown: spec.result.markdown.split('\n').slice(0,8).join('\n') + '\n…' });
  log('← window/showDocument (the server asks VS Code to open the spec)', c.of('request','window/showDocument'));
  await c.shutdownAndExit(); process.exit(0);
})().catch(e=>{console.error(e); process.exit(1);});
