// The real `@ag-ui/client` HttpAgent sends files the way AG-UI 1.0 describes them: an
// `image` part with its bytes inline (a `data` source) and a `document` part naming a file
// uploaded first (a `file` source). Tandem stores or finds them, the demo model says what
// it received, the recorded input names each by its stored id (no bytes in the log), and
// every event of the thread passes the AG-UI packages' own checks.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { HttpAgent } from '@ag-ui/client';

import { startTandem } from '../support/tandem.mjs';
import * as check from './checks.mjs';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/attachments');
const PICTURE = readFileSync(path.join(FIXTURES, 'picture.png'));
const PDF = readFileSync(path.join(FIXTURES, 'three_pages.pdf'));

let tandem;
before(async () => {
  tandem = await startTandem({ args: ['--engine', 'demo', '--token-delay-ms', '0'] });
});
after(() => tandem?.stop());

describe('files from an unmodified @ag-ui/client HttpAgent', () => {
  it('takes an inline image and an uploaded PDF, and the log names them by id', async () => {
    const created = await fetch(`${tandem.url}/api/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    const { id: session } = await created.json();
    const uploaded = await fetch(`${tandem.url}/api/sessions/${session}/attachments?name=report.pdf`, {
      method: 'POST',
      headers: { 'content-type': 'application/pdf' },
      body: PDF,
    });
    assert.equal(uploaded.status, 201);
    const pdf = await uploaded.json();

    const agent = new HttpAgent({ url: `${tandem.url}/api/agui`, threadId: session });
    agent.addMessage({
      id: randomUUID(),
      role: 'user',
      content: [
        { type: 'text', text: 'What are these?' },
        {
          type: 'image',
          source: { type: 'data', value: PICTURE.toString('base64'), mimeType: 'image/png' },
          metadata: { filename: 'picture.png' },
        },
        { type: 'document', source: { type: 'file', value: pdf.id, mimeType: 'application/pdf' } },
      ],
    });
    await agent.runAgent();
    const said = agent.messages.filter((m) => m.role === 'assistant').at(-1)?.content ?? '';
    assert.match(said, /`picture\.png`: an image, 640×480 PNG/);
    assert.match(said, /`report\.pdf`: a PDF, 3 pages/);

    const page = await (await fetch(`${tandem.url}/api/sessions/${session}/events?after=0&limit=1000`)).json();
    const rows = page.events;
    const started = rows.find((r) => r.event.type === 'RUN_STARTED').event;
    const parts = started.input.messages[0].content;
    assert.equal(parts[1].source.type, 'file');
    assert.equal(parts[1].source.provider, 'tandem');
    assert.equal(parts[2].source.value, pdf.id);
    assert.ok(!JSON.stringify(rows).includes(PICTURE.toString('base64').slice(0, 200)), 'no bytes in the log');
    assert.deepEqual(check.schemaProblems(rows), []);
    assert.deepEqual(await check.enforceProblems(rows), []);
    assert.deepEqual(await check.verifyProblems(rows), []);
    assert.deepEqual(check.nullProblems(rows), []);
  });
});
