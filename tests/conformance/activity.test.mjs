// A long tool call's progress through the real, unmodified `@ag-ui/client` HttpAgent: the
// reference MCP server (`@modelcontextprotocol/server-everything`, over stdio) reports each
// step of `trigger-long-running-operation`, Tandem streams them as `ACTIVITY_SNAPSHOT` and
// `ACTIVITY_DELTA`, and the client folds them into one `activity` message of its own, whose
// content follows the steps; the whole log passes the AG-UI packages' own checks.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { HttpAgent } from '@ag-ui/client';

import { everythingServer, scriptWithMcp, startTandem } from '../support/tandem.mjs';
import * as check from './checks.mjs';

const SCRIPT = {
  turns: [
    { toolCalls: [{ name: 'everything__trigger-long-running-operation', arguments: { duration: 1.5, steps: 3 } }] },
    { text: 'The long job is done.' },
  ],
};

let tandem;
let agent;
const received = [];

describe('a tool call’s progress through an unmodified @ag-ui/client HttpAgent', () => {
  before(async () => {
    tandem = await startTandem({
      args: [...scriptWithMcp(SCRIPT, { everything: everythingServer }), '--token-delay-ms', '0'],
    });
    const created = await fetch(`${tandem.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { id } = await created.json();
    agent = new HttpAgent({ url: `${tandem.url}/api/agui`, threadId: id });
    agent.subscribe({ onEvent: ({ event }) => { received.push(event); } });
  });
  after(() => tandem?.stop());

  it('folds the progress events into an activity message that follows the steps', async () => {
    agent.addMessage({ id: randomUUID(), role: 'user', content: 'Run the long job' });
    await agent.runAgent();
    const activity = received.filter((e) => e.type.startsWith('ACTIVITY_'));
    assert.equal(activity[0].type, 'ACTIVITY_SNAPSHOT', activity.map((e) => e.type).join(' '));
    assert.ok(activity.length >= 2, `a snapshot, then deltas: ${activity.length}`);
    const call = received.find((e) => e.type === 'TOOL_CALL_START');
    const message = agent.messages.find((m) => m.role === 'activity');
    assert.ok(message, JSON.stringify(agent.messages));
    assert.equal(message.id, activity[0].messageId);
    assert.equal(message.activityType, 'progress');
    assert.equal(message.content.toolCallId, call.toolCallId);
    assert.equal(message.content.total, 3);
    // The last step's report may be overtaken by the answer (it is the result that says
    // how the call ended), so the client holds the second step or the third.
    assert.ok([2, 3].includes(message.content.progress), JSON.stringify(message.content));
    const finished = received.at(-1);
    assert.equal(finished.type, 'RUN_FINISHED');
  });

  it('leaves a log that passes the AG-UI packages’ checks', async () => {
    const response = await fetch(`${tandem.url}/api/sessions/${agent.threadId}/events?after=0&limit=10000`);
    const rows = (await response.json()).events;
    assert.ok(rows.some((r) => r.event.type === 'ACTIVITY_DELTA'));
    assert.deepEqual(check.schemaProblems(rows), []);
    assert.deepEqual(await check.enforceProblems(rows), []);
    assert.deepEqual(await check.verifyProblems(rows), []);
    assert.deepEqual(check.nullProblems(rows), []);
  });
});
