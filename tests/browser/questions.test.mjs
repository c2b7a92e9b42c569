// Proves, in headless Chromium against the real binary (demo engine, built page), the
// other ways a person answers the agent: filling in and submitting a form, rejecting a
// confirm with a comment, and stopping an answer while it streams. Screenshots go to
// target/browser/1N-*.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  assistantSaying, byId, connection, idle, launchBrowser, newContext, pending, say,
  sessionIdOf, shot, startSession,
} from '../support/browser.mjs';
import { freePort, startTandem, webDir } from '../support/tandem.mjs';

let tandem;
let browser;
let errors;
let page;

const field = (name) => pending(page).locator(`[data-testid=form-field][name=${name}]`);

before(async () => {
  tandem = await startTandem({
    port: await freePort(),
    args: ['--engine', 'demo', '--token-delay-ms', '10', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
  let context;
  ({ context, errors } = await newContext(browser));
  page = await context.newPage();
  await page.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

describe('answering forms and confirms, and stopping a run', () => {
  it('signs up through a form and the agent confirms the name', async () => {
    await startSession(page, 'sign me up');
    await pending(page).and(page.locator('[data-kind=form]')).waitFor();
    await field('name').fill('Ada Lovelace');
    await field('email').fill('ada@example.com');
    await field('plan').selectOption({ label: 'Pro' });
    await field('newsletter').check();
    await shot(page, '11-form-filled');
    await pending(page).getByTestId('interrupt-submit').click();
    const answered = page.locator('[data-testid=interrupt][data-kind=form][data-state=answered]');
    await answered.waitFor();
    assert.match(await answered.getByTestId('interrupt-answer').textContent(), /Ada Lovelace/);
    const reply = await assistantSaying(page, "You're signed up");
    assert.match(reply, /Ada Lovelace/);
    assert.match(reply, /Plan: Pro/);
    assert.match(reply, /ada@example\.com/);
    await idle(page);
    await shot(page, '12-signed-up');
  });

  it('rejects a deletion with a comment and the agent leaves the files alone', async () => {
    await say(page, 'delete my old files');
    const card = pending(page).and(page.locator('[data-kind=confirm]'));
    await card.waitFor();
    assert.match(await card.getByTestId('interrupt-prompt').textContent(), /Delete my old files\?/);
    await card.getByTestId('interrupt-comment').fill('keep them until Friday');
    await card.getByTestId('interrupt-reject').click();
    await page.locator('[data-testid=interrupt][data-kind=confirm][data-state=answered]').waitFor();
    const reply = await assistantSaying(page, 'untouched');
    assert.match(reply, /left my old files untouched/);
    assert.match(reply, /keep them until Friday/);
    await idle(page);
    await shot(page, '13-rejected');
  });

  it('stops a long answer mid-stream and marks the run stopped', async () => {
    await say(page, 'hello');
    const streaming = page.locator('[data-testid=assistant-message].streaming', { hasText: 'Hi!' });
    await streaming.waitFor();
    await byId(page, 'stop').click();
    await byId(page, 'run-cancelled').waitFor();
    await idle(page);
    const last = await page.getByTestId('assistant-message').last().textContent();
    assert.match(last, /^Hi!/);
    assert.doesNotMatch(last, /ask me a question/, 'the answer was cut short');
    await shot(page, '14-stopped');
  });

  it('raised no page errors', () => {
    assert.deepEqual(errors, []);
  });
});
