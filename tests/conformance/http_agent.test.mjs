// The real `@ag-ui/client` HttpAgent, unmodified, drives one thread of the live binary over
// AG-UI's HTTP transport (`POST /api/agui`): a text run, an interrupt answered with
// `resume`, a round trip through a tool the client declares and runs itself, and a
// restart of Tandem between a pause and its answer. Each run's `RUN_STARTED.runId` is the
// `runId` the client sent. A page viewer's socket, open on the session before the first
// run, sees live exactly the events the agent received (reconnecting after the restart
// from the last seq it had, as the page does), and those pass the AG-UI packages' own
// checks.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { HttpAgent } from '@ag-ui/client';

import { SessionSocket } from '../support/socket.mjs';
import { startTandem } from '../support/tandem.mjs';
import * as check from './checks.mjs';

const requestInput = (args) => ({ name: 'request_input', arguments: args });
const CARD_TOOL = {
  name: 'show_card',
  description: 'Shows the person a card with a title',
  parameters: { type: 'object', properties: { title: { type: 'string' } }, required: ['title'] },
};

// One turn per model call of the thread, in the order the tests drive them.
const SCRIPT = {
  turns: [
    { text: 'Hello over HTTP.' },
    { toolCalls: [requestInput({ prompt: 'Which city?', kind: 'choice', choices: ['Lisbon', 'Kyoto'] })] },
    { text: 'Lisbon it is.' },
    { text: 'Here is your card.', toolCalls: [{ name: 'show_card', arguments: { title: 'Lisbon' } }] },
    { text: 'The card is on your screen.' },
    { toolCalls: [requestInput({ prompt: 'Your name?', kind: 'text' })] },
    { text: 'Welcome back, Ada.' },
    { text: 'The log’s story goes on.' },
  ],
};

const scriptPath = path.join(mkdtempSync(path.join(tmpdir(), 'tandem-agui-')), 'script.json');
writeFileSync(scriptPath, JSON.stringify(SCRIPT));

let tandem;
let agent;
/** Every event the agent received, in order, over all its runs. */
const received = [];
/** What each run's `RUN_FINISHED` said, in order. */
const finishes = [];
/** Each run's `[runId the client sent, RUN_STARTED.runId]`. */
const runIds = [];
/** The page viewer's sockets on the thread: the first, then one per reconnection. */
const viewers = [];

const newAgent = (threadId) => {
  const next = new HttpAgent({ url: `${tandem.url}/api/agui`, threadId: agent?.threadId ?? threadId });
  if (agent) next.setMessages(agent.messages);
  next.subscribe({
    onEvent: ({ event }) => {
      received.push(event);
    },
    onRunFinishedEvent: ({ event }) => {
      finishes.push(event.outcome);
    },
    onRunStartedEvent: ({ event, input }) => {
      runIds.push([input.runId, event.runId]);
    },
  });
  return next;
};

const say = (text) => agent.addMessage({ id: randomUUID(), role: 'user', content: text });
const lastAssistantText = () =>
  agent.messages.filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content).at(-1)?.content;

describe('an unmodified @ag-ui/client HttpAgent against Tandem', () => {
  before(async () => {
    tandem = await startTandem({ args: ['--engine', 'script', '--script', scriptPath, '--token-delay-ms', '0'] });
    // The thread is a session made first, so a viewer can watch it before the first run: a
    // `threadId` that is one of the caller's sessions is that session (a fresh thread id
    // gets a session of its own, named by the response's `Tandem-Session-Id`), so
    // `agent.threadId` is the session the viewers open, and the events they see carry the
    // same `threadId` as the ones the agent receives.
    const created = await fetch(`${tandem.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(created.status, 201);
    const { id } = await created.json();
    agent = newAgent(id);
    const viewer = await SessionSocket.open(tandem.url, id, 0);
    await viewer.waitFor((f) => f.kind === 'caught_up', { what: 'caught_up' });
    viewers.push(viewer);
  });
  after(() => tandem?.stop());

  it('runs a text turn and keeps the person’s message once', async () => {
    say('Hi');
    const { newMessages } = await agent.runAgent();
    assert.equal(lastAssistantText(), 'Hello over HTTP.');
    assert.equal(agent.messages.filter((m) => m.role === 'user').length, 1);
    assert.equal(agent.messages[0].content, 'Hi', 'the message is not echoed into itself');
    assert.ok(newMessages.some((m) => m.role === 'assistant'));
    assert.deepEqual(finishes.at(-1), { type: 'success' });
  });

  it('pauses on an interrupt and resumes with `resume`', async () => {
    say('Pick a city for me');
    await agent.runAgent();
    assert.equal(finishes.at(-1).type, 'interrupt');
    const [interrupt] = agent.pendingInterrupts;
    assert.equal(interrupt.reason, 'input_required');
    assert.equal(interrupt.message, 'Which city?');
    await agent.runAgent({
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { choice: 'Lisbon' } }],
    });
    assert.equal(lastAssistantText(), 'Lisbon it is.');
    assert.deepEqual(agent.pendingInterrupts, []);
  });

  it('hands a call of the client’s own tool back and takes its result', async () => {
    say('Show me a card');
    await agent.runAgent({ tools: [CARD_TOOL] });
    const finished = finishes.at(-1);
    assert.equal(finished.type, 'success');
    assert.equal(finished.pendingToolCallIds.length, 1);
    const [callId] = finished.pendingToolCallIds;
    const call = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.id === callId);
    assert.equal(call.function.name, 'show_card');
    assert.deepEqual(JSON.parse(call.function.arguments), { title: 'Lisbon' });

    // The client "runs" the tool and sends its result with the next run.
    agent.addMessage({ id: randomUUID(), role: 'tool', toolCallId: callId, content: 'card shown' });
    await agent.runAgent({ tools: [CARD_TOOL] });
    assert.equal(lastAssistantText(), 'The card is on your screen.');
    const results = agent.messages.filter((m) => m.role === 'tool' && m.toolCallId === callId);
    assert.equal(results.length, 1, 'the result is held once');
  });

  it('answers an interrupt across a restart of Tandem', async () => {
    say('Ask my name');
    await agent.runAgent();
    const [interrupt] = agent.pendingInterrupts;
    assert.equal(interrupt.message, 'Your name?');
    const viewer = viewers.at(-1);
    await viewer.waitFor((f) => f.kind === 'event' && f.seq === received.length, { what: 'the pause, live' });
    await tandem.restart();
    await viewer.closed;
    viewers.push(await SessionSocket.open(tandem.url, agent.threadId, viewer.lastSeq));
    // A new client object, as after a page reload: the thread and messages it kept.
    agent = newAgent();
    agent.pendingInterrupts = [interrupt];
    await agent.runAgent({
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { text: 'Ada' } }],
    });
    assert.equal(lastAssistantText(), 'Welcome back, Ada.');
  });

  it('gives a page viewer on the socket, live, exactly the events the agent received', async () => {
    const [first, again] = viewers;
    await again.waitFor((f) => f.kind === 'event' && f.seq === received.length, { what: 'the last run' });
    again.ws.close();
    const caughtUp = first.frames.findIndex((f) => f.kind === 'caught_up');
    assert.ok(
      first.frames.slice(0, caughtUp).every((f) => f.kind !== 'event'),
      'the first viewer had nothing to replay: every event it got came live',
    );
    const rows = [...first.events, ...again.events];
    assert.deepEqual(rows.map((r) => r.event), received);
    assert.deepEqual(rows.map((r) => r.seq), rows.map((_, i) => i + 1), 'gap-free seqs');
    assert.deepEqual(check.schemaProblems(rows), []);
    assert.deepEqual(await check.verifyProblems(rows), []);
    assert.equal(received.filter((e) => e.type === 'RUN_STARTED').length, 7);
  });

  it('names each run by the runId its client sent', () => {
    assert.equal(runIds.length, 7);
    for (const [sent, started] of runIds) assert.equal(started, sent);
    assert.equal(new Set(runIds.map(([sent]) => sent)).size, 7, 'one id per run');
  });

  it('runs a fresh thread in a session of its own, which `Tandem-Session-Id` names', async () => {
    const thread = randomUUID();
    const fresh = new HttpAgent({ url: `${tandem.url}/api/agui`, threadId: thread });
    const seen = [];
    let input;
    fresh.subscribe({
      onEvent: ({ event }) => {
        seen.push(event);
      },
      onRunStartedEvent: ({ input: sent }) => {
        input = sent;
      },
    });
    fresh.addMessage({ id: randomUUID(), role: 'user', content: 'Hi' });
    await fresh.runAgent();
    assert.equal(fresh.messages.at(-1).content, 'Hello over HTTP.', 'its own first model call');
    // One plain fetch of the same input (a retry) streams the run again, with the header.
    const again = await fetch(`${tandem.url}/api/agui`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(input),
    });
    assert.equal(again.status, 200);
    await again.text();
    const session = again.headers.get('tandem-session-id');
    assert.ok(session && session !== thread, `a session of its own: ${session}`);
    const logged = await (await fetch(`${tandem.url}/api/sessions/${session}/events?after=0`)).json();
    const events = logged.events.map(({ event }) => event);
    assert.equal(events[0].threadId, session, 'the log keeps the session’s id');
    assert.equal(events[0].input.threadId, thread);
    const asStreamed = events.map((e) =>
      e.type === 'RUN_STARTED' || e.type === 'RUN_FINISHED' ? { ...e, threadId: thread } : e,
    );
    assert.deepEqual(seen, asStreamed, 'the agent got the log’s events, under its threadId');
  });
  it('reads a client’s edited history against the log: what the log holds stands', async () => {
    // The client changes its first message in place (same id) and sends a new one. The log
    // holds the first as it was sent; only what is new runs (branching is the REST edit's).
    const [first, ...rest] = agent.messages;
    agent.setMessages([{ ...first, content: 'An edited first question' }, ...rest]);
    say('And now?');
    const before = received.length;
    await agent.runAgent();
    const started = received.slice(before).find((e) => e.type === 'RUN_STARTED');
    assert.deepEqual(started.input.messages.map((m) => m.content), ['And now?']);
    assert.equal(lastAssistantText(), 'The log’s story goes on.', 'the log’s eighth model call');
    const page = await (await fetch(`${tandem.url}/api/sessions/${agent.threadId}/events?after=0&limit=10`)).json();
    const firstRun = page.events.find((e) => e.event.type === 'RUN_STARTED');
    assert.equal(firstRun.event.input.messages[0].content, 'Hi', 'the log keeps what was sent');
  });
});

// Long enough (at 5 ms a word) for a second client to send while it streams.
const LONG = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ');

describe('an HttpAgent that sends while a run of its thread is active', () => {
  let slow;
  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'tandem-agui-queue-'));
    const script = path.join(dir, 'script.json');
    writeFileSync(script, JSON.stringify({ turns: [{ text: LONG }, { text: 'Second in line.' }] }));
    slow = await startTandem({ args: ['--engine', 'script', '--script', script, '--token-delay-ms', '5'] });
  });
  after(() => slow?.stop());

  it('waits its turn (the default `queue`) and streams exactly its own run', async () => {
    const threadId = randomUUID();
    const first = new HttpAgent({ url: `${slow.url}/api/agui`, threadId });
    const firstMessage = { id: randomUUID(), role: 'user', content: 'Tell me everything' };
    first.addMessage(firstMessage);
    let streaming;
    const began = new Promise((resolve) => { streaming = resolve; });
    first.subscribe({ onTextMessageContentEvent: () => streaming() });
    const firstRun = first.runAgent();
    await began;

    const second = new HttpAgent({ url: `${slow.url}/api/agui`, threadId });
    second.setMessages([firstMessage, { id: randomUUID(), role: 'user', content: 'And then?' }]);
    const seen = [];
    let sentRunId;
    second.subscribe({
      onEvent: ({ event }) => { seen.push(event); },
      onRunStartedEvent: ({ input }) => { sentRunId = input.runId; },
    });
    await second.runAgent();
    await firstRun;
    assert.equal(seen[0].type, 'RUN_STARTED');
    assert.equal(seen[0].runId, sentRunId, 'the run its input started, named by its runId');
    assert.equal(seen.filter((e) => e.type === 'RUN_STARTED').length, 1, 'one run, its own');
    assert.equal(seen.at(-1).type, 'RUN_FINISHED');
    const text = seen.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e) => e.delta).join('');
    assert.equal(text, 'Second in line.');
    assert.equal(first.messages.at(-1).content, LONG, 'the first run finished whole before it');
  });
});
