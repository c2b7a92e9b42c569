// Proves that one Tandem session, driven through every kind of run the server has (plain
// answer, tools, interrupts answered and declined, a stop, a REST cancel, a crash and
// restart, an engine error), produces an event log that the real AG-UI 1.0 npm packages
// accept: each event passes `EventSchemas` unchanged, the whole stream passes
// `verifyEvents`, no nulls, integer timestamps, gap-free seqs, every run closed, and the
// socket delivered exactly the log. The log is written to target/agui/session.json.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { SessionSocket, isTerminal } from '../support/socket.mjs';
import { artefactDir, startTandem } from '../support/tandem.mjs';
import * as check from './checks.mjs';
import { CHOICES, REASONING, SCRIPT, TEXT } from './script.mjs';

const scriptPath = path.join(mkdtempSync(path.join(tmpdir(), 'tandem-script-')), 'script.json');
const flags = (delayMs) => ['--engine', 'script', '--script', scriptPath, '--token-delay-ms', String(delayMs)];

let tandem;
let sessionId;
const sockets = [];
const socket = () => sockets[sockets.length - 1];
const seen = () => Math.max(0, ...sockets.map((s) => s.lastSeq));

async function api(method, route, body) {
  const res = await fetch(`${tandem.url}/api${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Opens a socket replaying after everything seen so far and waits for `caught_up`. */
async function connect() {
  const after = seen();
  const next = await SessionSocket.open(tandem.url, sessionId, after);
  sockets.push(next);
  const caughtUp = await next.waitFor((f) => f.kind === 'caught_up', { what: 'caught_up' });
  assert.ok(caughtUp.seq >= after, `caught_up seq ${caughtUp.seq} is behind after=${after}`);
}

/** Runs `start`, then awaits the run's terminal event; returns the run's events. */
async function run(start) {
  const from = seen();
  await start();
  const end = await socket().waitForEvent(from, isTerminal, 'the end of the run');
  return socket().events.filter((f) => f.seq > from && f.seq <= end.seq);
}

const send = (text) => socket().send({ kind: 'user_message', text, clientMessageId: `c-${text}` });
const say = (text) => () => send(text);
const types = (rows) => rows.map((r) => r.event.type);
const last = (rows) => rows[rows.length - 1].event;
const contentOf = (rows, toolCallId) =>
  JSON.parse(rows.find((r) => r.event.type === 'TOOL_CALL_RESULT' && r.event.toolCallId === toolCallId).event.content);
const interruptOf = (rows) => {
  const end = last(rows);
  assert.equal(end.type, 'RUN_FINISHED');
  assert.equal(end.outcome?.type, 'interrupt', `outcome ${JSON.stringify(end.outcome)}`);
  assert.equal(end.outcome.interrupts.length, 1);
  return end.outcome.interrupts[0];
};
const assertSuccess = (rows) => assert.deepEqual(last(rows).outcome, { type: 'success' });
const resume = (interrupt, status, payload) => () =>
  socket().send({ kind: 'resume', interruptId: interrupt.id, status, ...(payload && { payload }) });

before(async () => {
  writeFileSync(scriptPath, JSON.stringify(SCRIPT));
  tandem = await startTandem({ args: flags(0) });
  const created = await api('POST', '/sessions', { title: 'AG-UI conformance' });
  assert.equal(created.status, 201);
  sessionId = created.body.id;
  await connect();
});

after(async () => {
  await Promise.all(sockets.map((s) => s.close()));
  await tandem?.stop('SIGKILL');
  rmSync(path.dirname(scriptPath), { recursive: true, force: true });
});

describe('one session through every kind of run', () => {
  it('(a) answers a plain message with streamed text', async () => {
    const rows = await run(say('hi'));
    assert.equal(types(rows)[0], 'RUN_STARTED');
    assert.equal(rows[0].event.threadId, sessionId);
    assert.deepEqual(check.assistantTexts(rows), [TEXT.plain]);
    assertSuccess(rows);
  });

  it('(b) reasons, calls the calculator and an unknown tool, then answers', async () => {
    const rows = await run(say('what is 12*7?'));
    const reasoning = [...check.messageTexts(rows, 'REASONING_MESSAGE_CONTENT').values()];
    assert.deepEqual(reasoning, [REASONING.tools, REASONING.afterTools]);
    assert.deepEqual(check.assistantTexts(rows), [TEXT.beforeTools, TEXT.afterTools]);
    const starts = rows.filter((r) => r.event.type === 'TOOL_CALL_START').map((r) => r.event);
    assert.deepEqual(starts.map((e) => e.toolCallName), ['calculator', 'teleport']);
    assert.equal(contentOf(rows, starts[0].toolCallId).result, 84);
    assert.match(contentOf(rows, starts[1].toolCallId).error, /unknown tool/);
    assert.equal(types(rows).filter((t) => t === 'STEP_STARTED').length, 2);
    assertSuccess(rows);
  });

  it('(c) pauses for a choice and a confirm, resumes over the socket, and goes on', async () => {
    const first = await run(say('book me a trip'));
    const choice = interruptOf(first);
    assert.deepEqual(choice.metadata, { kind: 'choice', choices: CHOICES });
    const call = first.find((r) => r.event.type === 'TOOL_CALL_START' && r.event.toolCallId === choice.toolCallId);
    assert.equal(call?.event.toolCallName, 'request_input');

    const second = await run(resume(choice, 'resolved', { choice: 'Kyoto' }));
    assert.deepEqual(types(second).slice(0, 2), ['RUN_STARTED', 'TOOL_CALL_RESULT']);
    assert.deepEqual(contentOf(second, choice.toolCallId), { status: 'resolved', payload: { choice: 'Kyoto' } });
    const confirm = interruptOf(second);
    assert.equal(confirm.metadata.kind, 'confirm');

    const repeat = await api('POST', `/sessions/${sessionId}/interrupts/${choice.id}`, {
      status: 'resolved', payload: { choice: 'Kyoto' },
    });
    assert.deepEqual([repeat.status, repeat.body.duplicate], [200, true]);
    const changed = await api('POST', `/sessions/${sessionId}/interrupts/${choice.id}`, {
      status: 'resolved', payload: { choice: 'Lisbon' },
    });
    assert.deepEqual([changed.status, changed.body.error.code], [409, 'interrupt_already_answered']);

    const third = await run(resume(confirm, 'cancelled'));
    assert.equal(third[1].event.type, 'TOOL_CALL_RESULT');
    assert.deepEqual(contentOf(third, confirm.toolCallId), { status: 'cancelled' });
    assert.deepEqual(check.assistantTexts(third), [TEXT.declined]);
    assertSuccess(third);
  });

  it('restarts with a token delay and replays the socket from where it stopped', async () => {
    await socket().close();
    await tandem.restart(flags(5));
    await connect();
    assert.equal(socket().events.length, 0, 'nothing new should be replayed');
  });

  it('(d) stops a streaming answer on a cancel frame', async () => {
    const from = seen();
    const rows = await run(async () => {
      send('talk at length');
      await socket().waitForEvent(from, (e) => /stop\d/.test(e.delta ?? ''), 'the long text');
      socket().send({ kind: 'cancel' });
    });
    assert.deepEqual(last(rows).outcome, { type: 'cancelled' });
    const [text] = check.assistantTexts(rows);
    assert.ok(text.length < TEXT.longStop.length && TEXT.longStop.startsWith(text), 'text cut short');
  });

  it('(e) declines a pending question on POST /cancel', async () => {
    const asked = await run(say('ask me something'));
    const question = interruptOf(asked);
    assert.equal(question.metadata.kind, 'text');
    const rows = await run(async () => {
      const res = await api('POST', `/sessions/${sessionId}/cancel`);
      assert.equal(res.status, 202);
    });
    assert.deepEqual(contentOf(rows, question.toolCallId), { status: 'cancelled' });
    assert.deepEqual(last(rows).outcome, { type: 'cancelled' });
    const summary = await api('GET', `/sessions/${sessionId}`);
    assert.deepEqual(summary.body.pendingInterrupts, []);
  });

  it('(g) continues a run cut by SIGKILL by itself after the restart, then runs again', async () => {
    const from = seen();
    send('talk until I pull the plug');
    await socket().waitForEvent(from, (e) => /kill\d/.test(e.delta ?? ''), 'the long text');
    await tandem.stop('SIGKILL');
    await socket().closed;
    await tandem.restart(flags(0));
    await connect();
    const end = await socket().waitForEvent(from, isTerminal, 'the recovered run end');
    assert.equal(end.event.type, 'RUN_FINISHED');
    const after = socket().events.filter((r) => r.seq > from);
    const marker = after.find((r) => r.event.type === 'CUSTOM' && r.event.name === 'tandem.run_recovered');
    assert.ok(marker, 'a marker says the run was recovered');
    assert.equal(marker.event.value.attempt, 1);
    const started = after.filter((r) => r.event.type === 'RUN_STARTED');
    assert.deepEqual(started, [], 'the same run went on: no new RUN_STARTED');
    assert.deepEqual(check.assistantTexts(after.filter((r) => r.seq > marker.seq)), [TEXT.continued]);

    let runId;
    const rows = await run(async () => {
      const res = await api('POST', `/sessions/${sessionId}/messages`, { text: 'are you back?' });
      assert.equal(res.status, 202);
      runId = res.body.runId;
    });
    assert.equal(rows[0].event.runId, runId);
    assert.deepEqual(check.assistantTexts(rows), [TEXT.afterRestart]);
    assertSuccess(rows);
  });

  it('(f) ends with RUN_ERROR script_exhausted when the script runs out', async () => {
    const rows = await run(say('one more?'));
    assert.deepEqual([last(rows).type, last(rows).code], ['RUN_ERROR', 'script_exhausted']);
  });
});

describe('the whole log', () => {
  let rows;
  before(async () => {
    const res = await api('GET', `/sessions/${sessionId}/events?after=0&limit=10000`);
    assert.equal(res.status, 200);
    rows = res.body.events;
    assert.equal(res.body.lastSeq, rows.length);
    const file = path.join(artefactDir('agui'), 'session.json');
    writeFileSync(file, `${JSON.stringify(rows, null, 2)}\n`);
  });

  const none = (problems) => assert.deepEqual(problems, [], problems.join('\n'));

  it('passes EventSchemas, event by event, unchanged', () => none(check.schemaProblems(rows)));
  it('passes the client\'s enforceEvents with no key stripped and no warning', async () =>
    none(await check.enforceProblems(rows)));
  it('passes verifyEvents from @ag-ui/client as one stream', async () => none(await check.verifyProblems(rows)));
  it('contains no null anywhere', () => none(check.nullProblems(rows)));
  it('has integer millisecond timestamps', () => none(check.timestampProblems(rows)));
  it('numbers events 1..N without gaps', () => none(check.seqProblems(rows)));
  it('ends every run with exactly one RUN_FINISHED or RUN_ERROR', () => none(check.terminalProblems(rows)));

  it('made every model call the script planned (10 turns + the exhausted one)', () => {
    assert.equal(types(rows).filter((t) => t === 'STEP_STARTED').length, SCRIPT.turns.length + 1);
  });

  it('was delivered over the sockets exactly, once each, in order', () => {
    const frames = sockets.flatMap((s) => s.events).map(({ seq, event }) => ({ seq, event }));
    assert.deepEqual(frames, rows);
  });

  it('got no error frames on any socket', () => {
    const errors = sockets.flatMap((s) => s.frames).filter((f) => f.kind === 'error');
    assert.deepEqual(errors, []);
  });
});
