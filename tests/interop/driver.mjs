// The TypeScript SDK's own MCP client (the one the MCP Inspector bundles), driven by a
// JSON scenario, for the Python tests in this directory to assert on. Nothing here
// judges run-repl: it connects, lists the tools (as every agent does first, and as the
// SDK needs to check each result against its tool's output schema), runs the steps and
// prints what the client saw, protocol errors included, as JSON lines on stdout:
//
//     {"event": "connected", "protocol_version": ..., "server": {...}, "tools": [...]}
//     {"event": "progress", "step": 0, "progress": 0.2, "total": 120, "message": "..."}
//     {"event": "result", "step": 0, "ok": true, "result": {...}}     (or ok false, "error")
//     {"event": "done"}
//
// A connection that fails is {"event": "connect_error", "error": {...}} then "done".
//
//     node driver.mjs SCENARIO_JSON        (or the scenario on stdin)
//
// scenario: {"transport": "stdio", "command": [...], "env": {...}, "cwd": "..."}
//        or {"transport": "http", "url": "...", "headers": {...}}
//        with "steps": [{"op": "call", "tool": "run", "arguments": {...}}, ...]
// ops: call (tool, arguments, timeout_ms), list_tools, list_resources, read_resource (uri),
// list_prompts, get_prompt (name, arguments), ping. An argument {"$step": N, "path": [...]}
// is that part of step N's result (a value_ref, a run_id), as an agent passes it on.
//
// `node driver.mjs --conformance URL TOKEN OUTDIR [SCENARIO]` runs the official
// conformance suite's server scenarios (its active suite, or the one named) against URL, through a loopback proxy that adds
// `Authorization: Bearer TOKEN` (the suite's client cannot send a header) and passes every
// other header (Host, Origin) through unchanged; prints the checks as one JSON line.

import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const HERE = dirname(fileURLToPath(import.meta.url));
const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);

function errorData(error) {
  return {
    name: error?.constructor?.name ?? typeof error,
    code: error?.code ?? null,
    message: String(error?.message ?? error),
    data: error?.data ?? null,
  };
}

function transportFor(scenario) {
  if (scenario.transport === 'stdio') {
    const [command, ...args] = scenario.command;
    return new StdioClientTransport({
      command,
      args,
      env: scenario.env,
      cwd: scenario.cwd,
      stderr: 'inherit', // the server's stderr: the Python test reads it from ours
    });
  }
  if (scenario.transport === 'http') {
    return new StreamableHTTPClientTransport(new URL(scenario.url), {
      requestInit: { headers: scenario.headers ?? {} },
    });
  }
  throw new Error(`unknown transport ${JSON.stringify(scenario.transport)}`);
}

function resolve(value, results) {
  if (Array.isArray(value)) return value.map((v) => resolve(v, results));
  if (value === null || typeof value !== 'object') return value;
  if ('$step' in value) return value.path.reduce((at, key) => at?.[key], results[value.$step]);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, resolve(v, results)]));
}

async function step(client, index, s, results) {
  switch (s.op) {
    case 'call': {
      const options = {
        onprogress: (p) => say({ event: 'progress', step: index, ...p }),
        resetTimeoutOnProgress: true,
        timeout: s.timeout_ms ?? 60_000,
      };
      const args = resolve(s.arguments ?? {}, results);
      return client.callTool({ name: s.tool, arguments: args }, undefined, options);
    }
    case 'list_tools':
      return client.listTools();
    case 'list_resources':
      return client.listResources();
    case 'read_resource':
      return client.readResource({ uri: s.uri });
    case 'list_prompts':
      return client.listPrompts();
    case 'get_prompt':
      return client.getPrompt({ name: s.name, arguments: s.arguments ?? {} });
    case 'ping':
      return client.ping();
    default:
      throw new Error(`unknown op ${JSON.stringify(s.op)}`);
  }
}

async function drive(scenario) {
  const client = new Client({ name: 'run-repl-interop', version: '1.0.0' }, { capabilities: {} });
  const transport = transportFor(scenario);
  let negotiated = null;
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setVersion?.(version);
  };
  try {
    await client.connect(transport);
    const { tools } = await client.listTools();
    say({
      event: 'connected',
      protocol_version: negotiated,
      server: client.getServerVersion(),
      capabilities: client.getServerCapabilities(),
      tools: tools.map((t) => ({ name: t.name, has_output_schema: t.outputSchema !== undefined })),
    });
  } catch (error) {
    say({ event: 'connect_error', error: errorData(error) });
    await client.close().catch(() => {});
    return;
  }
  const results = [];
  for (const [index, s] of (scenario.steps ?? []).entries()) {
    try {
      results[index] = await step(client, index, s, results);
      say({ event: 'result', step: index, ok: true, result: results[index] });
    } catch (error) {
      say({ event: 'result', step: index, ok: false, error: errorData(error) });
    }
  }
  await client.close();
}

// ------------------------------------------------------------------ conformance
function proxy(target, token) {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers };
    headers.authorization ??= `Bearer ${token}`;
    const out = http.request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    out.on('error', (error) => {
      res.writeHead(502);
      res.end(String(error));
    });
    req.pipe(out);
    res.on('close', () => out.destroy());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function checksUnder(dir) {
  const checks = {};
  for (const entry of readdirSync(dir)) {
    const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT.*$/, '');
    checks[scenario] = JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8'));
  }
  return checks;
}

async function conformance([url, token, outdir, scenario]) {
  const front = await proxy(url, token);
  const via = `http://127.0.0.1:${front.address().port}${new URL(url).pathname}`;
  const bin = join(HERE, 'node_modules', '.bin', 'conformance');
  // The whole active server suite in one run; its exit status only says some check
  // failed, and some cannot pass here (the test says which apply): the checks decide.
  const only = scenario ? ['--scenario', scenario] : [];
  await new Promise((resolve, reject) => {
    const child = spawn(bin, ['server', '--url', via, '-o', outdir, ...only], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    child.on('error', reject);
    child.on('exit', resolve);
  });
  front.close();
  say({ event: 'conformance', checks: checksUnder(outdir) });
}

const argv = process.argv.slice(2);
if (argv[0] === '--conformance') {
  await conformance(argv.slice(1));
} else {
  const scenario = JSON.parse(argv[0] ?? readFileSync(0, 'utf8'));
  await drive(scenario);
}
say({ event: 'done' });
