#!/usr/bin/env node
// Drives a teaagent server with the official TypeScript MCP SDK's client
// (`@modelcontextprotocol/sdk`, pinned in .ci/sdk-clients/package.json).
//
//   node drive.mjs --client ts-sdk --transport stdio|http --era auto|legacy --scenario SCENARIO
//                  [--root ROOT] [--verbose] (--url URL | -- SERVER_CMD...)
//
// Scenarios: serve (`teaagent mcp serve --permission-mode allow`), prompt-approval
// (`--permission-mode prompt`), cancel (`allow`), notes (the `notes` example with
// TEAAGENT_GRANTS=delete_note), author (the tests' `author` server: `profile`, a Json<T> with
// optional, skipped, defaulted, flattened and enum fields, validated by the SDK; `mislabeled`,
// output that breaks its own schema, surfaced as a clear isError). The harness prepares ROOT (notes.txt, src/lib.rs, docs/guide.md)
// and the server's environment: a stdio server gets this process's whole environment
// (TEAAGENT_HOME, TEAAGENT_GRANTS, ...), not the SDK's short default list.
//
// Eras: SDK 1.32.2 speaks only the `initialize` era (protocol 2024-10-07 .. 2025-11-25; it
// offers 2025-11-25 and accepts any of those back). It has no `server/discover`, no per-request
// `_meta` protocol version and no `input_required`: protocol 2026-07-28 is out of its reach, so
// `auto` (the SDK's own choice) and `legacy` both run the initialize handshake. `--era modern`
// is refused with exit 2.
//
// Prints `ok <client> <transport> <era> <scenario> (protocol <version>): N steps` and exits 0,
// or `FAIL <client> <transport> <era> <scenario> step <step>: <error>` on stderr and exits 1
// (followed by the stdio server's last stderr lines, indented). Exit 2: bad usage.
// `--verbose` (or DRIVE_VERBOSE=1) prints each step, its time and notes on stderr.
// `--keep-going` (diagnosis only) reports a failed step, skips it and goes on (one FAIL line
// for each; exit 1 at the end); the harness should not use it.
//
// The modules come from .ci/sdk-clients/node_modules (or $SDK_CLIENTS_NODE_MODULES); run this
// with the Node 22 installed there (.ci/sdk-clients/node_modules/.bin/node).

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const PINNED_SDK = '1.32.2';
const MODULES =
  process.env.SDK_CLIENTS_NODE_MODULES ??
  fileURLToPath(new URL('../../../.ci/sdk-clients/node_modules/', import.meta.url));
const SDK_DIR = path.join(MODULES, '@modelcontextprotocol', 'sdk');

function usage(message) {
  process.stderr.write(
    `${message}\nusage: node drive.mjs --client ts-sdk --transport stdio|http --era auto|legacy ` +
      `--scenario serve|prompt-approval|cancel|notes|author [--root ROOT] [--protocol-version V] [--verbose] [--keep-going] (--url URL | -- SERVER_CMD...)\n`,
  );
  process.exit(2);
}

function parseArgs(argv) {
  const opts = { verbose: process.env.DRIVE_VERBOSE === '1', command: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') {
      opts.command = argv.slice(i + 1);
      break;
    }
    const value = () => {
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    switch (a) {
      case '--client': opts.client = value(); break;
      case '--transport': opts.transport = value(); break;
      case '--era': opts.era = value(); break;
      case '--scenario': opts.scenario = value(); break;
      case '--url': opts.url = value(); break;
      case '--root': opts.root = value(); break;
      case '--protocol-version': opts.offer = value(); break;
      case '--verbose': opts.verbose = true; break;
      case '--keep-going': opts.keepGoing = true; break;
      default: usage(`unknown argument: ${a}`);
    }
  }
  if (opts.client !== 'ts-sdk') usage(`--client must be ts-sdk (got ${opts.client})`);
  if (!['stdio', 'http'].includes(opts.transport)) usage(`--transport must be stdio or http (got ${opts.transport})`);
  if (opts.era === 'modern') {
    usage(`--era modern: @modelcontextprotocol/sdk ${PINNED_SDK} speaks only the initialize era (up to 2025-11-25), not 2026-07-28`);
  }
  if (!['auto', 'legacy'].includes(opts.era)) usage(`--era must be auto or legacy (got ${opts.era})`);
  if (opts.offer && opts.era !== 'legacy') usage('--protocol-version goes with --era legacy');
  if (!SCENARIOS[opts.scenario]) usage(`--scenario must be one of ${Object.keys(SCENARIOS).join(', ')} (got ${opts.scenario})`);
  if (opts.transport === 'stdio' && opts.command.length === 0) usage('--transport stdio needs -- SERVER_CMD...');
  if (opts.transport === 'http' && !opts.url) usage('--transport http needs --url URL');
  if (!opts.root && opts.command.length > 0) {
    const at = opts.command.indexOf('--root');
    if (at >= 0 && at + 1 < opts.command.length) opts.root = opts.command[at + 1];
  }
  return opts;
}

const sdk = (p) => import(pathToFileURL(path.join(SDK_DIR, 'dist', 'esm', p)).href);

// ---------------------------------------------------------------------------------------------
// Steps and checks

class StepError extends Error {}

function fail(message) {
  throw new StepError(message);
}

function check(condition, message) {
  if (!condition) fail(typeof message === 'function' ? message() : message);
}

function describe(err) {
  if (err instanceof StepError) return err.message;
  if (err && typeof err === 'object') {
    const parts = [];
    if (err.name && err.name !== 'Error' && err.name !== 'StepError') parts.push(err.name);
    if (err.code !== undefined) parts.push(`code ${err.code}`);
    let text = parts.length ? `${parts.join(', ')}: ${err.message}` : String(err.message ?? err);
    if (err.data !== undefined) text += ` data=${JSON.stringify(err.data)}`;
    if (err.cause) text += ` (cause: ${err.cause?.message ?? err.cause})`;
    return text;
  }
  return String(err);
}

const short = (v, n = 400) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > n ? `${s.slice(0, n)}…` : s;
};

/** The pids of the processes running `sleep DURATION`. */
function sleeping(duration) {
  const pids = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${duration}\0`) pids.push(pid);
    } catch {}
  }
  return pids;
}

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
}

// ---------------------------------------------------------------------------------------------
// The session

class Session {
  constructor(opts, mods) {
    this.opts = opts;
    this.mods = mods;
    this.steps = 0;
    this.protocol = undefined;
    this.tools = new Map();
    this.serverStderr = [];
    this.failures = [];
    this.label = `${opts.client} ${opts.transport} ${opts.era} ${opts.scenario}`;
  }

  log(line) {
    if (this.opts.verbose) process.stderr.write(`  ${line}\n`);
  }

  async step(name, body) {
    this.current = name;
    const started = performance.now();
    let note;
    try {
      note = await body();
    } catch (err) {
      // Connecting is never skipped; with --keep-going any later step is reported and skipped.
      if (!this.opts.keepGoing || !this.client) throw err;
      this.failures.push(name);
      process.stderr.write(`FAIL ${this.label} step ${name}: ${describe(err)}\n`);
      return undefined;
    }
    this.steps += 1;
    const ms = (performance.now() - started).toFixed(0);
    this.log(`step ${name}: ok (${ms} ms)${note ? ` — ${note}` : ''}`);
    return note;
  }

  async connect(capabilities = {}, beforeConnect = () => {}) {
    const { Client } = this.mods;
    const opts = this.opts;
    let transport;
    if (opts.transport === 'stdio') {
      const { StdioClientTransport } = this.mods;
      transport = new StdioClientTransport({
        command: opts.command[0],
        args: opts.command.slice(1),
        // The whole environment: the SDK's default passes only HOME, LOGNAME, PATH, SHELL,
        // TERM and USER, which would lose TEAAGENT_HOME and TEAAGENT_GRANTS.
        env: { ...process.env },
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (chunk) => {
        for (const line of String(chunk).split('\n')) {
          if (line) this.serverStderr.push(line);
        }
        if (this.serverStderr.length > 200) this.serverStderr.splice(0, this.serverStderr.length - 200);
      });
      // The stdio transport has no setProtocolVersion; the client calls it when present, which
      // is how the negotiated version is learned.
      transport.setProtocolVersion = (v) => {
        this.protocol = v;
      };
    } else {
      const { StreamableHTTPClientTransport } = this.mods;
      transport = new StreamableHTTPClientTransport(new URL(opts.url));
      const set = transport.setProtocolVersion.bind(transport);
      transport.setProtocolVersion = (v) => {
        this.protocol = v;
        set(v);
      };
    }
    if (opts.offer) {
      // The SDK always offers its latest version (2025-11-25); offer an older one instead.
      const send = transport.send.bind(transport);
      transport.send = (message, options) => {
        if (message.method === 'initialize') message = { ...message, params: { ...message.params, protocolVersion: opts.offer } };
        return send(message, options);
      };
    }
    this.transport = transport;
    this.client = new Client({ name: 'teaagent-sdk-drive', version: PINNED_SDK }, { capabilities });
    beforeConnect(this.client);
    await this.client.connect(transport);
    this.process = transport._process; // to check how the server ends (stdio)
    check(this.protocol, 'initialize: no protocol version was negotiated');
    check(!opts.offer || this.protocol === opts.offer, `initialize: offered ${opts.offer}, the server answered ${this.protocol}`);
    const server = this.client.getServerVersion();
    return `protocol ${this.protocol}, server ${server?.name} ${server?.version}`;
  }

  /** tools/list, every page; the SDK's output validators are (re)built for the whole list. */
  async listTools(expected) {
    const all = [];
    let cursor;
    let pages = 0;
    do {
      const page = await this.client.listTools(cursor ? { cursor } : undefined);
      all.push(...page.tools);
      cursor = page.nextCursor;
      pages += 1;
      check(pages < 100, 'tools/list: more than 100 pages');
    } while (cursor);
    // listTools() caches validators per page (each page clears the cache): cache the whole list.
    if (pages > 1) this.client.cacheToolMetadata(all);
    for (const tool of all) this.tools.set(tool.name, tool);
    const names = all.map((t) => t.name);
    for (const name of expected) check(this.tools.has(name), `tools/list has no \`${name}\` (it lists: ${names.join(', ')})`);
    // Output validation must really be on: a validator for every outputSchema, and it rejects a
    // value the schema does not allow.
    const withSchema = [];
    for (const tool of all) {
      check(tool.inputSchema?.type === 'object', `${tool.name}: inputSchema is not an object schema`);
      if (!tool.outputSchema) continue;
      withSchema.push(tool.name);
      const validate = this.client.getToolOutputValidator(tool.name);
      check(typeof validate === 'function', `${tool.name}: the SDK built no output validator`);
      if ((tool.outputSchema.required ?? []).length > 0) {
        check(!validate({}).valid, `${tool.name}: the output validator accepts {} although the schema requires ${tool.outputSchema.required}`);
      }
    }
    this.withOutputSchema = withSchema;
    return `${all.length} tools in ${pages} page(s); outputSchema on: ${withSchema.join(', ') || 'none'}`;
  }

  /** The arguments' names must be properties of the tool's inputSchema as tools/list gave it. */
  checkArgs(name, args) {
    const tool = this.tools.get(name);
    check(tool, `${name} is not in tools/list`);
    const props = Object.keys(tool.inputSchema?.properties ?? {});
    for (const key of Object.keys(args)) {
      check(props.includes(key), `${name} has no argument \`${key}\` in tools/list (its arguments: ${props.join(', ')})`);
    }
    for (const key of tool.inputSchema?.required ?? []) {
      check(key in args, `${name} requires \`${key}\`, which this call does not give`);
    }
  }

  /**
   * tools/call through the SDK's callTool, which validates structuredContent against the
   * tool's outputSchema (and requires structuredContent when there is one). Fails on isError.
   */
  async call(name, args, options) {
    this.checkArgs(name, args);
    const result = await this.client.callTool({ name, arguments: args }, undefined, options);
    check(!result.isError, () => `${name} ${short(args)} answered isError: ${short(textOf(result), 800)}`);
    const tool = this.tools.get(name);
    if (tool.outputSchema) {
      check(result.structuredContent, `${name}: no structuredContent although it declares an outputSchema`);
    }
    return result;
  }

  async close() {
    const proc = this.process;
    const session = this.transport.sessionId;
    if (this.opts.transport === 'http') {
      // End the legacy session (DELETE with Mcp-Session-Id); 405 is accepted by the SDK.
      await this.transport.terminateSession();
    }
    await this.client.close();
    if (proc) {
      // The SDK ends stdin and waits 2 s before SIGTERM: a server that exits on EOF is done by then.
      check(proc.signalCode === null, `the server did not exit on stdin EOF within 2 s (killed by ${proc.signalCode})`);
      check(proc.exitCode === 0, `the server exited with ${proc.exitCode} after stdin EOF`);
    }
    return proc ? `server exited ${proc.exitCode}` : `session ${session ?? '(none)'} terminated`;
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios

const NOTES = 'needle on the first line\nsecond line\nthird line\nneedle on the last line\n';
const LIB = 'pub fn answer() -> u32 {\n    42\n}\n';
const BUILTIN = [
  'read_file', 'list_directory', 'find_files', 'search_text', 'file_info', 'create_file',
  'write_file', 'edit_file', 'move_path', 'delete_path', 'shell_exec',
];

const SCENARIOS = {
  async serve(s) {
    await s.step('initialize', () => s.connect());
    await s.step('tools/list', () => s.listTools(BUILTIN));
    const called = new Set();
    const call = async (name, args, options) => {
      called.add(name);
      return s.call(name, args, options);
    };

    await s.step('read_file whole', async () => {
      const r = await call('read_file', { path: 'notes.txt' });
      check(textOf(r).includes(NOTES.trimEnd()), `read_file notes.txt: not the file's text: ${short(textOf(r))}`);
    });
    await s.step('read_file offset/limit', async () => {
      const r = await call('read_file', { path: 'notes.txt', offset: 2, limit: 2 });
      const t = textOf(r);
      check(t.includes('second line') && t.includes('third line'), `read_file offset 2 limit 2: ${short(t)}`);
      check(!t.includes('first line') && !t.includes('last line'), `read_file offset 2 limit 2 returned more: ${short(t)}`);
    });
    await s.step('list_directory', async () => {
      const r = await call('list_directory', { path: '.', depth: 2 });
      const paths = (r.structuredContent.entries ?? []).map((e) => e.path);
      for (const p of ['notes.txt', 'src', 'src/lib.rs', 'docs', 'docs/guide.md']) {
        check(paths.includes(p), `list_directory depth 2 has no ${p}: ${short(paths)}`);
      }
      return `${paths.length} entries`;
    });
    await s.step('find_files', async () => {
      const r = await call('find_files', { pattern: '**/*.rs' });
      check(JSON.stringify(r.structuredContent.files) === '["src/lib.rs"]', `find_files **/*.rs: ${short(r.structuredContent)}`);
    });
    await s.step('search_text literal', async () => {
      const r = await call('search_text', { pattern: 'needle', literal: true });
      const hits = r.structuredContent.matches.map((m) => `${m.path}:${m.line}`).sort();
      check(JSON.stringify(hits) === '["docs/guide.md:3","notes.txt:1","notes.txt:4"]', `search_text needle: ${short(hits)}`);
    });
    await s.step('search_text context 2', async () => {
      const r = await call('search_text', { pattern: 'needle', literal: true, glob: 'notes.txt', context: 2 });
      const m = r.structuredContent.matches;
      check(m.length === 2, `search_text context 2 in notes.txt: ${m.length} matches: ${short(m)}`);
      const [first, last] = [...m].sort((a, b) => a.line - b.line);
      check(first.line === 1 && JSON.stringify(first.after) === '["second line","third line"]', `the first line's match: ${short(first)}`);
      check(last.line === 4 && JSON.stringify(last.before) === '["second line","third line"]', `the last line's match: ${short(last)}`);
      check((first.before ?? []).length === 0 && (last.after ?? []).length === 0, `context beyond the file: ${short(m)}`);
    });
    await s.step('search_text regex', async () => {
      const r = await call('search_text', { pattern: 'fn \\w+\\(\\) -> u\\d+' });
      const m = r.structuredContent.matches;
      check(m.length === 1 && m[0].path === 'src/lib.rs' && m[0].line === 1, `search_text regex: ${short(m)}`);
    });
    await s.step('file_info', async () => {
      const r = await call('file_info', { path: 'src/lib.rs' });
      const info = r.structuredContent;
      check(info.kind === 'file' && info.size === LIB.length, `file_info src/lib.rs: ${short(info)}`);
      if ('lines' in info) check(info.lines === 3, `file_info src/lib.rs lines: ${info.lines}`);
    });
    await s.step('create_file', async () => {
      const r = await call('create_file', { path: 'made.txt', content: 'made\n' });
      return short(textOf(r), 120);
    });
    await s.step('write_file', async () => {
      await call('write_file', { path: 'made.txt', content: 'written once\nwritten twice\n' });
    });
    await s.step('edit_file', async () => {
      await call('edit_file', { path: 'made.txt', old_text: 'written twice', new_text: 'edited' });
      const r = await call('read_file', { path: 'made.txt' });
      check(textOf(r).includes('written once\nedited'), `made.txt after edit_file: ${short(textOf(r))}`);
    });
    await s.step('move_path', async () => {
      await call('move_path', { from: 'made.txt', to: 'docs/moved.txt' });
      const r = await call('file_info', { path: 'docs/moved.txt' });
      check(r.structuredContent.kind === 'file', `docs/moved.txt after move_path: ${short(r.structuredContent)}`);
    });
    await s.step('delete_path', async () => {
      await call('delete_path', { path: 'docs/moved.txt' });
      s.checkArgs('file_info', { path: 'docs/moved.txt' });
      const r = await s.client.callTool({ name: 'file_info', arguments: { path: 'docs/moved.txt' } });
      check(r.isError, `docs/moved.txt still there after delete_path: ${short(r)}`);
      if (s.opts.root) check(!existsSync(path.join(s.opts.root, 'docs/moved.txt')), 'docs/moved.txt still on disk');
    });
    await s.step('shell_exec', async () => {
      const r = await call('shell_exec', { command: 'echo hi' });
      check(/(^|\n)hi(\n|$)/.test(textOf(r)) || r.structuredContent?.stdout?.trim() === 'hi', `shell_exec echo hi: ${short(r)}`);
    });
    const missing = BUILTIN.filter((t) => !called.has(t));
    check(missing.length === 0, `not called: ${missing}`);

    await s.step('resources/list', async () => {
      const all = [];
      let cursor;
      do {
        const page = await s.client.listResources(cursor ? { cursor } : undefined);
        all.push(...page.resources);
        cursor = page.nextCursor;
      } while (cursor);
      s.resource = all.find((r) => r.uri.endsWith('/notes.txt'));
      check(s.resource, `resources/list has no notes.txt: ${short(all.map((r) => r.uri))}`);
      return `${all.length} resources, ${s.resource.uri}`;
    });
    await s.step('resources/read', async () => {
      const r = await s.client.readResource({ uri: s.resource.uri });
      const c = r.contents?.[0];
      check(c && c.text === NOTES, `resources/read ${s.resource.uri}: ${short(r)}`);
    });
    await s.step('bad arguments', async () => {
      try {
        const r = await s.client.callTool({ name: 'read_file', arguments: { path: 5 } });
        check(r.isError === true, `read_file {"path": 5} did not fail: ${short(r)}`);
        return `isError result: ${short(textOf(r), 300)}`;
      } catch (err) {
        if (err instanceof StepError) throw err;
        check(err instanceof s.mods.McpError, `read_file {"path": 5}: not an McpError: ${describe(err)}`);
        return `McpError ${err.code}: ${short(err.message, 300)}`;
      }
    });
    await s.step('close', () => s.close());
  },

  async 'prompt-approval'(s) {
    const asked = [];
    await s.step('initialize', () =>
      s.connect({ elicitation: { form: {} } }, (client) =>
        client.setRequestHandler(s.mods.ElicitRequestSchema, async (request) => {
          asked.push(request.params);
          return { action: 'accept', content: { decision: 'once' } };
        }),
      ),
    );
    await s.step('tools/list', () => s.listTools(['create_file', 'read_file']));
    await s.step('create_file approved', async () => {
      const r = await s.call('create_file', { path: 'approved.txt', content: 'approved\n' });
      check(asked.length === 1, `the elicitation handler ran ${asked.length} times`);
      const form = asked[0];
      check(form.requestedSchema?.properties?.decision, `the form asks no \`decision\`: ${short(form)}`);
      return `asked: ${short(form.message, 200)}; answered: ${short(textOf(r), 120)}`;
    });
    await s.step('the file exists', async () => {
      const r = await s.call('read_file', { path: 'approved.txt' });
      check(textOf(r).includes('approved'), `approved.txt: ${short(textOf(r))}`);
      check(asked.length === 1, 'read_file (read-only) was asked about');
      if (s.opts.root) {
        const disk = readFileSync(path.join(s.opts.root, 'approved.txt'), 'utf8');
        check(disk === 'approved\n', `approved.txt on disk: ${short(disk)}`);
      }
    });
    await s.step('close', () => s.close());
  },

  async cancel(s) {
    await s.step('initialize', () => s.connect());
    await s.step('tools/list', () => s.listTools(['shell_exec', 'read_file']));
    // A duration no other process has, to find the command's `sleep` in /proc afterwards.
    const duration = `30.${String(process.pid).padStart(7, '0')}${Math.floor(Math.random() * 1e6)}`;
    await s.step('shell_exec sleep 30, aborted after 1 s', async () => {
      const controller = new AbortController();
      const started = performance.now();
      let running = [];
      const timer = setTimeout(() => {
        if (existsSync('/proc/self/cmdline')) running = sleeping(duration);
        controller.abort(new Error('aborted by the driver'));
      }, 1000);
      let outcome;
      try {
        const r = await s.call('shell_exec', { command: `sleep ${duration}` }, { signal: controller.signal, timeout: 60_000 });
        outcome = `it answered instead: ${short(r)}`;
      } catch (err) {
        if (err instanceof StepError) throw err;
        outcome = err;
      } finally {
        clearTimeout(timer);
      }
      const secs = (performance.now() - started) / 1000;
      check(typeof outcome !== 'string', outcome);
      check(controller.signal.aborted, `the call failed before the abort: ${describe(outcome)}`);
      check(secs < 10, `the aborted call returned after ${secs.toFixed(1)} s`);
      check(running.length > 0 || !existsSync('/proc/self/cmdline'), `\`sleep ${duration}\` was not running when the call was aborted`);
      return `sleep pid ${running}; returned after ${secs.toFixed(2)} s: ${describe(outcome)}`;
    });
    await s.step('the command was killed', async () => {
      // The server got notifications/cancelled and killed the command (server on this machine).
      if (!existsSync('/proc/self/cmdline')) return 'no /proc: not checked';
      const started = performance.now();
      for (;;) {
        const alive = sleeping(duration);
        if (alive.length === 0) return `gone ${((performance.now() - started) / 1000).toFixed(2)} s after the abort returned`;
        check(performance.now() - started < 5000, `\`sleep ${duration}\` still runs 5 s after the abort (pid ${alive})`);
        await new Promise((r) => setTimeout(r, 50));
      }
    });
    await s.step('read_file after the cancel', async () => {
      const r = await s.call('read_file', { path: 'notes.txt', limit: 1 });
      check(textOf(r).includes('needle on the first line'), `read_file: ${short(textOf(r))}`);
    });
    await s.step('close', () => s.close());
  },

  async author(s) {
    await s.step('initialize', () => s.connect());
    await s.step('tools/list', () => s.listTools(['profile', 'mislabeled']));
    for (const full of [false, true]) {
      await s.step(`profile full=${full}`, async () => {
        const r = await s.call('profile', { full });
        const data = r.structuredContent;
        check(data.name === 'Ada' && data.city === 'London', `profile: ${short(data)}`);
        check(('nickname' in data) === full && ('tags' in data) === full, `profile full=${full}: ${short(data)}`);
      });
    }
    await s.step('mislabeled', async () => {
      // The server never sends output that breaks its own schema: a clear isError instead
      // (the SDK validates only results that are not errors).
      const r = await s.client.callTool({ name: 'mislabeled', arguments: {} });
      const text = textOf(r);
      check(r.isError === true && r.structuredContent === undefined, `mislabeled: ${short(r)}`);
      for (const part of ['mislabeled', 'outputSchema', '/count', 'Likely cause']) {
        check(text.includes(part), `mislabeled: \`${part}\` not in ${short(text, 800)}`);
      }
    });
    await s.step('close', () => s.close());
  },

  async notes(s) {
    await s.step('initialize', () => s.connect());
    await s.step('tools/list', () => s.listTools(['add_note', 'list_notes', 'read_note', 'search_notes', 'delete_note']));
    const text = async (name, args) => textOf(await s.call(name, args));
    await s.step('add_note', async () => {
      const t = await text('add_note', { title: 'groceries', text: 'Buy a Needle and thread' });
      check(t.includes('groceries'), `add_note: ${short(t)}`);
      await text('add_note', { title: 'todo', text: 'nothing sharp' });
    });
    await s.step('list_notes', async () => {
      const t = await text('list_notes', {});
      check(t.split('\n').sort().join(',') === 'groceries,todo', `list_notes: ${short(t)}`);
    });
    await s.step('read_note', async () => {
      const t = await text('read_note', { title: 'groceries' });
      check(t === 'Buy a Needle and thread', `read_note: ${short(t)}`);
    });
    await s.step('search_notes', async () => {
      const t = await text('search_notes', { word: 'needle' });
      check(t === 'groceries', `search_notes needle: ${short(t)}`);
    });
    await s.step('delete_note', async () => {
      const t = await text('delete_note', { title: 'groceries' });
      check(t.includes('deleted'), `delete_note: ${short(t)}`);
      const left = await text('list_notes', {});
      check(left === 'todo', `list_notes after delete_note: ${short(left)}`);
    });
    await s.step('close', () => s.close());
  },
};

// ---------------------------------------------------------------------------------------------

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const label = `${opts.client} ${opts.transport} ${opts.era} ${opts.scenario}`;
  let s;
  try {
    const version = JSON.parse(readFileSync(path.join(SDK_DIR, 'package.json'), 'utf8')).version;
    if (version !== PINNED_SDK) throw new StepError(`@modelcontextprotocol/sdk is ${version}, not ${PINNED_SDK} (${SDK_DIR})`);
    const [client, stdio, http, types] = await Promise.all([
      sdk('client/index.js'), sdk('client/stdio.js'), sdk('client/streamableHttp.js'), sdk('types.js'),
    ]);
    const mods = {
      Client: client.Client,
      StdioClientTransport: stdio.StdioClientTransport,
      StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
      ElicitRequestSchema: types.ElicitRequestSchema,
      McpError: types.McpError,
    };
    s = new Session(opts, mods);
    s.current = 'setup';
    if (opts.verbose) process.stderr.write(`${label}: node ${process.version}, sdk ${version}\n`);
    await SCENARIOS[opts.scenario](s);
    if (s.failures.length > 0) {
      for (const line of s.serverStderr.slice(-30)) process.stderr.write(`    server: ${line}\n`);
      process.exit(1);
    }
    process.stdout.write(`ok ${label} (protocol ${s.protocol}): ${s.steps} steps\n`);
    process.exit(0);
  } catch (err) {
    process.stderr.write(`FAIL ${label} step ${s?.current ?? 'setup'}: ${describe(err)}\n`);
    if (opts.verbose && err?.stack && !(err instanceof StepError)) process.stderr.write(`${err.stack}\n`);
    for (const line of (s?.serverStderr ?? []).slice(-30)) process.stderr.write(`    server: ${line}\n`);
    try {
      await Promise.race([s?.client?.close(), new Promise((r) => setTimeout(r, 3000))]);
    } catch {}
    process.exit(1);
  }
}

main();
