// Proves, in headless Chromium against the real binary, that the sidebar follows the server
// live with no polling: a conversation started in another tab appears in this one; when it
// pauses for its person, this hidden tab says so at once (the row's badge, a notification,
// the counted tab title); its answer, a rename and a deletion made elsewhere show too. The
// page never asks for the list on a timer: after the stream's snapshot it makes no
// `GET /api/sessions` at all. axe-core checks the screen in both colour schemes.
// Screenshots: target/browser/4N-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  byId, idle, launchBrowser, newContext, pending, shots, startSession,
} from '../support/browser.mjs';
import { artefactDir, freePort, startTandem, webDir } from '../support/tandem.mjs';

const TURNS = [
  { toolCalls: [{ name: 'request_input', arguments: { prompt: 'Which city first?', kind: 'text' } }] },
  { text: 'Lisbon it is.' },
];

let tandem;
let browser;
let context;
let watcher;
let other;
const errors = [];
/** `GET /api/sessions` (the whole list, not a search) the watching tab asked for. */
const listRequests = [];

/** The sidebar's row of session `id`, in `status` if given. */
const row = (page, id, status) => page.locator(
  `[data-testid=session-item][data-session-id="${id}"]${status ? `[data-status=${status}]` : ''}`,
);

before(async () => {
  const dir = artefactDir('browser-fixtures');
  const script = path.join(dir, 'list-script.json');
  writeFileSync(script, JSON.stringify({ turns: TURNS }));
  tandem = await startTandem({
    port: await freePort(),
    args: ['--engine', 'script', '--script', script, '--token-delay-ms', '5', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
  let contextErrors;
  ({ context, errors: contextErrors } = await newContext(browser, { permissions: ['notifications'] }));
  errors.push(contextErrors);
  // Each tab controls whether it counts as hidden, and records its notifications.
  await context.addInitScript(() => {
    window.__hidden = false;
    Object.defineProperty(Document.prototype, 'hidden', { get: () => window.__hidden });
    window.__notes = [];
    const Real = window.Notification;
    class Recorded extends Real {
      constructor(title, options) {
        super(title, options);
        window.__notes.push({ title, body: options?.body });
      }
    }
    Object.defineProperty(Recorded, 'permission', { get: () => Real.permission });
    window.Notification = Recorded;
  });
  watcher = await context.newPage();
  watcher.on('request', (request) => {
    const url = new URL(request.url());
    if (request.method() === 'GET' && url.pathname === '/api/sessions' && !url.searchParams.has('q')) {
      listRequests.push(url.href);
    }
  });
  await watcher.goto(tandem.url);
  await watcher.getByRole('heading', { name: 'What shall we work on?' }).waitFor();
  other = await context.newPage();
  await other.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

describe('the session list, live', () => {
  let id;

  it('shows a conversation another tab starts, and tells this hidden tab the moment it needs you', async () => {
    await watcher.evaluate(() => { window.__hidden = true; });
    const asked = Date.now();
    id = await startSession(other, 'Plan the trip');
    await pending(other).waitFor();
    await row(watcher, id, 'awaiting_input').waitFor();
    await watcher.waitForFunction(() => window.__notes.length === 1);
    const took = Date.now() - asked;
    const [note] = await watcher.evaluate(() => window.__notes);
    assert.equal(note.title, 'The agent needs you — Tandem');
    assert.match(note.body, /Plan the trip is waiting for your answer/);
    await watcher.waitForFunction(() => document.title === '(1) Tandem — needs you');
    console.log(`list: from the first message in one tab to the notification in the other: ${took} ms`);
    await watcher.evaluate(() => { window.__hidden = false; });
    await shots(watcher, '41-needs-you-from-another-tab');
    for (const colorScheme of ['light', 'dark']) {
      await watcher.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousViolations(watcher), [], `axe-core, ${colorScheme}`);
    }
    await watcher.emulateMedia({ colorScheme: null });
  });

  it('follows the answer, a rename and a deletion made in the other tab', async () => {
    await pending(other).getByTestId('interrupt-text').fill('Lisbon');
    await pending(other).getByTestId('interrupt-submit').click();
    await idle(other);
    await row(watcher, id, 'idle').waitFor();
    await watcher.waitForFunction(() => document.title === 'Tandem');

    await byId(other, 'rename').click();
    await byId(other, 'title-input').fill('Lisbon weekend');
    await byId(other, 'title-input').press('Enter');
    await row(watcher, id).getByText('Lisbon weekend').waitFor();

    const status = await other.evaluate(
      async (session) => (await fetch(`/api/sessions/${session}`, { method: 'DELETE' })).status,
      id,
    );
    assert.equal(status, 204);
    await row(watcher, id).waitFor({ state: 'detached' });
    await shots(watcher, '42-deleted-elsewhere');
  });

  it('never polled for the list', async () => {
    assert.deepEqual(listRequests, [], 'the list came only from its stream');
    assert.deepEqual(errors.flat(), []);
  });
});
