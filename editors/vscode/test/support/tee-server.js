'use strict';
// Stands between the extension and a real server and writes down what passes:
//   node tee-server.js [--delay-ms N] LOG SERVER [ARGS...]
// LOG gets one JSON line per message ({"dir": "to-server" | "from-server",
// "message": …}), the first line being {"argv": [ARGS...]} as the extension
// passed them. The bytes themselves pass through unchanged. --delay-ms starts
// the server N ms late (a slow start: the client stays "starting" meanwhile)
// and writes {"pid": …} second, so a test can end a server its client lost.
const fs = require('node:fs');
const { spawn } = require('node:child_process');

let argv = process.argv.slice(2);
let delay = 0;
if (argv[0] === '--delay-ms') {
  delay = Number(argv[1]);
  argv = argv.slice(2);
}
const [log, server, ...args] = argv;
fs.appendFileSync(log, `${JSON.stringify({ argv: args })}\n`);
if (delay > 0) {
  fs.appendFileSync(log, `${JSON.stringify({ pid: process.pid })}\n`);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, delay);
}
const child = spawn(server, args, { stdio: ['pipe', 'pipe', 'inherit'] });

function tap(dir) {
  let buffer = Buffer.alloc(0);
  return (chunk) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      const match = /Content-Length: *(\d+)/i.exec(buffer.subarray(0, end).toString());
      if (!match) return;
      const length = Number(match[1]);
      if (buffer.length < end + 4 + length) return;
      const body = buffer.subarray(end + 4, end + 4 + length).toString();
      buffer = buffer.subarray(end + 4 + length);
      fs.appendFileSync(log, `${JSON.stringify({ dir, message: JSON.parse(body) })}\n`);
    }
  };
}

process.stdin.on('data', tap('to-server'));
child.stdout.on('data', tap('from-server'));
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
child.on('exit', (code, signal) => {
  fs.appendFileSync(log, `${JSON.stringify({ exit: code, signal })}\n`);
  process.exit(code === null ? 1 : code);
});
