'use strict';
// An OpenAI-compatible LLM endpoint on loopback for the optimizer's LLM
// proposer: POST /v1/chat/completions answers each request with the next
// scripted reply (a chat.completion holding a file in a fenced block, as
// tests/support/scripted_llm.cpp builds them for the C++ e2e tests), and
// records the requests. `hold` keeps every answer back until release().
const fs = require('node:fs');
const http = require('node:http');

function chatReplyWithFile(file, language, preface) {
  const content = `${preface}\n\n\`\`\`${language}\n${fs.readFileSync(file, 'utf8')}\`\`\`\n`;
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1000, completion_tokens: 200, total_tokens: 1200 },
  };
}

// replies: chat.completion objects, answered in order; past the end: 500.
async function startScriptedLlm(replies, { hold = false } = {}) {
  const requests = [];
  const pending = [];
  let held = hold;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      requests.push({ method: req.method, url: req.url, body });
      const reply = replies[requests.length - 1];
      const answer = () => {
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions' || !reply) {
          res.writeHead(500, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ error: { message: `no scripted reply for ${req.method} ${req.url} #${requests.length}` } }));
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(reply));
      };
      if (held) pending.push(answer);
      else answer();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    requests,
    release() {
      held = false;
      for (const answer of pending.splice(0)) answer();
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

module.exports = { chatReplyWithFile, startScriptedLlm };
