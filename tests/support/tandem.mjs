// Starts the real `tandem` binary as a child process for a test: a fresh database (a temp
// SQLite file, or with TANDEM_TEST_BACKEND=postgres a scratch PostgreSQL database on the
// server TANDEM_TEST_POSTGRES names, dropped when the test process ends), the given flags, and a promise that resolves once the binary prints its listening line
// (never a sleep). `restart()` brings it back on the same port and database, so a browser
// keeps the same origin. Every child is killed when the test process ends, even on failure.
//
// Env: TANDEM_BIN (default <repo>/target/debug/tandem), TANDEM_WEB_DIR (default <repo>/dist),
// TEST_LOG=1 echoes the server's log lines to stderr.

import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Safety net only: how long a start may take before the test fails. */
const START_TIMEOUT_MS = 30_000;
/** Safety net only: how long a stopped child may take to exit before it is SIGKILLed. */
const EXIT_TIMEOUT_MS = 10_000;

const live = new Set();
const tempDirs = new Set();
const scratchDatabases = new Set();

const onPostgres = process.env.TANDEM_TEST_BACKEND === 'postgres';
const postgresServer =
  process.env.TANDEM_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Runs one statement on the PostgreSQL server (psql, synchronously). */
function onServer(statement) {
  execFileSync('psql', [postgresServer, '-qAtc', statement], { stdio: ['ignore', 'ignore', 'inherit'] });
}

/** A fresh database for one server: a SQLite file in `dir`, or a scratch PostgreSQL one. */
function freshDatabase(dir) {
  if (!onPostgres) return `sqlite://${path.join(dir, 'tandem.db')}`;
  const prefix = process.env.TANDEM_SCRATCH_PREFIX ?? 'tandem_scratch';
  const name = `${prefix}_${randomUUID().replaceAll('-', '')}`;
  onServer(`CREATE DATABASE "${name}"`);
  scratchDatabases.add(name);
  const url = new URL(postgresServer);
  url.pathname = `/${name}`;
  return url.toString();
}

function killAll() {
  for (const child of live) child.kill('SIGKILL');
  live.clear();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
  for (const name of scratchDatabases) {
    try {
      onServer(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    } catch {
      // The test run's own clean-up drops what is left by its prefix.
    }
  }
  scratchDatabases.clear();
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

/** The binary to test, or a clear error saying how to build it. */
export function tandemBin() {
  const bin = process.env.TANDEM_BIN ?? path.join(repoRoot, 'target/debug/tandem');
  if (!existsSync(bin)) {
    throw new Error(
      `tandem binary not found at ${bin}: build it with \`cargo build -p tandem --bin tandem\` ` +
        'or point TANDEM_BIN at it',
    );
  }
  return bin;
}

/** The built page folder, or a clear error saying how to build it. */
export function webDir() {
  const dir = process.env.TANDEM_WEB_DIR ?? path.join(repoRoot, 'dist');
  if (!existsSync(path.join(dir, 'index.html'))) {
    throw new Error(
      `built page not found in ${dir}: run \`scripts/build.sh page\` ` +
        'or point TANDEM_WEB_DIR at it',
    );
  }
  return dir;
}

/**
 * The flags of a server with `run_python`: the interpreter scripts/setup.sh built, and a
 * module cache in target/ every test shares (the first start compiles it, later ones read it).
 */
export function pythonArgs() {
  const tools = process.env.TANDEM_TOOLS_DIR ?? path.join(homedir(), '.cache/tandem-tools');
  const interpreter = path.join(tools, 'rustpython.wasm');
  if (!existsSync(interpreter)) {
    throw new Error(`no Python interpreter at ${interpreter}: scripts/setup.sh builds it`);
  }
  const cache = path.join(repoRoot, 'target', 'python-wasm-cache');
  return ['--python-wasm', interpreter, '--wasm-cache-dir', cache];
}

/** A port that was free a moment ago (listen on 0, read it, close). */
export async function freePort() {
  const server = net.createServer();
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A folder under target/ for artefacts a person may want to look at. */
export function artefactDir(name) {
  const dir = path.join(repoRoot, 'target', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * Starts tandem. `args` are extra flags (engine, delay, …); `port` 0 lets the OS pick one,
 * which restarts then keep. Returns `{url, port, databaseUrl, log, stop(signal), restart(args?)}`.
 */
// The reference MCP server (`@modelcontextprotocol/server-everything`, npm) over stdio, as an
// `mcpServers` entry.
export const everythingServer = {
  command: 'node',
  args: [path.join(repoRoot, 'tests/node_modules/@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'],
};

// Writes the `script` engine's turns and an MCP config with `mcpServers` to a fresh
// directory; the flags that use both.
export function scriptWithMcp(turns, mcpServers) {
  const dir = mkdtempSync(path.join(tmpdir(), 'tandem-script-'));
  const script = path.join(dir, 'script.json');
  writeFileSync(script, JSON.stringify(turns));
  const mcp = path.join(dir, 'mcp.json');
  writeFileSync(mcp, JSON.stringify({ mcpServers }));
  return ['--engine', 'script', '--script', script, '--mcp-config', mcp];
}

export async function startTandem({ args = [], port = 0 } = {}) {
  const bin = tandemBin();
  const dir = mkdtempSync(path.join(tmpdir(), 'tandem-test-'));
  tempDirs.add(dir);
  const databaseUrl = freshDatabase(dir);
  // One name across restarts: a restarted server takes its runs back at once (PostgreSQL).
  const instance = `test-${randomUUID().slice(0, 8)}`;
  const log = [];
  const handle = { databaseUrl, log, port, url: undefined, child: undefined, args };

  const launch = async (flags) => {
    handle.args = flags;
    const argv = [
      '--bind', `127.0.0.1:${handle.port}`, '--database-url', databaseUrl,
      '--instance-name', instance,
      // Compiled WebAssembly modules (a person's tool uploaded) in the test's own folder;
      // a test's own flag wins (later flags win).
      '--wasm-cache-dir', path.join(dir, 'wasm-cache'), ...flags,
    ];
    const { child, address } = await spawnUntilListening(bin, argv, log);
    handle.child = child;
    handle.port = Number(address.split(':').pop());
    handle.url = `http://${address}`;
  };

  handle.stop = (signal = 'SIGTERM') => stopChild(handle.child, signal);
  handle.restart = async (flags = handle.args) => {
    await handle.stop('SIGTERM');
    await launch(flags);
    return handle;
  };
  await launch(args);
  return handle;
}

function spawnUntilListening(bin, argv, log) {
  const child = spawn(bin, argv, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', RUST_LOG: process.env.RUST_LOG ?? 'info' },
  });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`tandem did not print its listening line within ${START_TIMEOUT_MS} ms`)),
      START_TIMEOUT_MS,
    );
    const fail = (error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`${error.message}\n--- tandem log ---\n${log.slice(-40).join('\n')}`));
    };
    const onLine = (line) => {
      log.push(line);
      if (process.env.TEST_LOG) process.stderr.write(`[tandem] ${line}\n`);
      const match = /Tandem is listening: open http:\/\/([0-9.]+:[0-9]+)/.exec(line);
      if (match) {
        clearTimeout(timer);
        child.off('exit', onEarlyExit);
        resolve({ child, address: match[1] });
      }
    };
    const onEarlyExit = (code, signal) => fail(new Error(`tandem exited (${code ?? signal}) before listening`));
    child.once('exit', onEarlyExit);
    child.once('error', fail);
    splitLines(child.stdout, onLine);
    splitLines(child.stderr, onLine);
  });
}

function splitLines(stream, onLine) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const lines = (rest + chunk).split('\n');
    rest = lines.pop();
    // Strip ANSI colour codes so the listening line parses whatever the log format.
    for (const line of lines) onLine(line.replace(/\x1b\[[0-9;]*m/g, ''));
  });
}

/** Sends `signal` and resolves once the child has exited (SIGKILL after a safety timeout). */
function stopChild(child, signal) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), EXIT_TIMEOUT_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill(signal);
  });
}
