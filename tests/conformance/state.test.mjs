// The shared state through the real, unmodified `@ag-ui/client` HttpAgent: the client's
// own `state` goes in with its input and comes back as the run's `STATE_SNAPSHOT`; the
// model's `update_state` calls arrive as `STATE_DELTA`s the client applies itself (with
// fast-json-patch); a person's change made over REST between runs reaches the client in
// the next run's snapshot. After every run the client's `agent.state` equals the server's
// `GET /api/sessions/{id}/state`, and the whole log passes the AG-UI packages' own checks.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { HttpAgent } from '@ag-ui/client';

import { startTandem } from '../support/tandem.mjs';
import * as check from './checks.mjs';

const update = (patch) => ({ name: 'update_state', arguments: { patch } });

const SCRIPT = {
  turns: [
    { text: 'A plan, then.', toolCalls: [update([
      { op: 'add', path: '/plan', value: [{ step: 'Pack', status: 'pending' }, { step: 'Fly', status: 'pending' }] },
    ])] },
    { toolCalls: [update([
      { op: 'replace', path: '/plan/0/status', value: 'done' },
      { op: 'add', path: '/plan/-', value: { step: 'Rest', status: 'pending' } },
    ])] },
    { text: 'Packed; two steps to go.' },
    { text: 'Noted.' },
    { toolCalls: [update([{ op: 'remove', path: '/budget' }])] },
    { text: 'The budget is gone from the plan.' },
  ],
};

const scriptPath = path.join(mkdtempSync(path.join(tmpdir(), 'tandem-state-')), 'script.json');
writeFileSync(scriptPath, JSON.stringify(SCRIPT));

let tandem;
let agent;
const received = [];

const serverState = async (session) => {
  const response = await fetch(`${tandem.url}/api/sessions/${session}/state`);
  assert.equal(response.status, 200);
  return (await response.json()).state;
};

describe('the shared state through an unmodified @ag-ui/client HttpAgent', () => {
  before(async () => {
    tandem = await startTandem({ args: ['--engine', 'script', '--script', scriptPath, '--token-delay-ms', '0'] });
    const created = await fetch(`${tandem.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { id } = await created.json();
    agent = new HttpAgent({ url: `${tandem.url}/api/agui`, threadId: id, initialState: { budget: 900 } });
    agent.subscribe({ onEvent: ({ event }) => { received.push(event); } });
  });
  after(() => tandem?.stop());

  it('sends its state, applies every delta, and ends with the server’s state', async () => {
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'Plan a trip' });
    await agent.runAgent();
    const types = received.map((e) => e.type);
    assert.deepEqual(types.slice(0, 2), ['RUN_STARTED', 'STATE_SNAPSHOT'], types.join(' '));
    assert.deepEqual(received[1].snapshot, { budget: 900 }, 'the client’s own state, adopted');
    assert.equal(types.filter((t) => t === 'STATE_DELTA').length, 2);
    const expected = {
      budget: 900,
      plan: [{ step: 'Pack', status: 'done' }, { step: 'Fly', status: 'pending' }, { step: 'Rest', status: 'pending' }],
    };
    assert.deepEqual(agent.state, expected);
    assert.deepEqual(await serverState(agent.threadId), expected);
  });

  it('takes a person’s change made between runs over the client’s older state', async () => {
    const patched = await fetch(`${tandem.url}/api/sessions/${agent.threadId}/state`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json-patch+json' },
      body: JSON.stringify([{ op: 'replace', path: '/plan/1/status', value: 'done' }]),
    });
    assert.equal(patched.status, 200);
    assert.equal(agent.state.plan[1].status, 'pending', 'the client has not seen it yet');
    // The client sends the state it last had, which the thread held before: stale, not an
    // edit, so the run starts from the server's and tells the client so.
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'Anything new?' });
    await agent.runAgent();
    assert.equal(agent.state.plan[1].status, 'done');
    assert.deepEqual(agent.state, await serverState(agent.threadId));
  });

  it('adopts a state the client changed itself, then the model’s change of it', async () => {
    agent.setState({ ...agent.state, budget: 500 });
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'Drop the budget' });
    const before = received.length;
    await agent.runAgent();
    const snapshot = received.slice(before).find((e) => e.type === 'STATE_SNAPSHOT');
    assert.equal(snapshot.snapshot.budget, 500);
    const expected = {
      plan: [{ step: 'Pack', status: 'done' }, { step: 'Fly', status: 'done' }, { step: 'Rest', status: 'pending' }],
    };
    assert.deepEqual(agent.state, expected);
    assert.deepEqual(await serverState(agent.threadId), expected);
  });

  it('leaves a log that passes the AG-UI packages’ checks', async () => {
    const response = await fetch(`${tandem.url}/api/sessions/${agent.threadId}/events?after=0&limit=10000`);
    const rows = (await response.json()).events;
    assert.deepEqual(check.schemaProblems(rows), []);
    assert.deepEqual(await check.enforceProblems(rows), []);
    assert.deepEqual(await check.verifyProblems(rows), []);
    assert.deepEqual(check.nullProblems(rows), []);
  });
});
