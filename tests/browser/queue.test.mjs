// Proves, in headless Chromium against the real binary, that a person can speak while the
// agent works: Enter queues a message while a question waits (it shows under the answer,
// can be edited and withdrawn, and runs after the answer), "Steer" from the menu beside
// Send joins the running answer at its next step, Ctrl+Enter stops the agent and sends at
// once, and the up arrow in an empty composer edits the last message. Driven by roles and
// visible text; axe-core checks the screen in both colour schemes. Screenshots:
// target/browser/5N-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  assistantSaying, byId, idle, launchBrowser, newContext, pending, say, shots, startSession, textsOf,
} from '../support/browser.mjs';
import { artefactDir, freePort, startTandem, webDir } from '../support/tandem.mjs';

// Long enough (at 5 ms a word) for a person to act while it streams.
const LONG = Array.from({ length: 1500 }, (_, i) => `word${i}`).join(' ');
const TURNS = [
  { toolCalls: [{ name: 'request_input', arguments: { prompt: 'Which city?', kind: 'text' } }] },
  { text: 'Noted, Lisbon.' },
  { text: 'A hotel by the sea, then.' },
  { text: LONG, toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] },
  { text: 'Steered answer: 6*7 = 42, shown step by step.' },
  { text: LONG },
  { text: 'The short version.' },
];

let tandem;
let browser;
let page;
const errors = [];

before(async () => {
  const dir = artefactDir('browser-fixtures');
  const script = path.join(dir, 'queue-script.json');
  writeFileSync(script, JSON.stringify({ turns: TURNS }));
  tandem = await startTandem({
    port: await freePort(),
    args: ['--engine', 'script', '--script', script, '--token-delay-ms', '5', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
  let context;
  let contextErrors;
  ({ context, errors: contextErrors } = await newContext(browser));
  errors.push(contextErrors);
  page = await context.newPage();
  await page.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

const composer = () => page.getByRole('textbox', { name: 'Message' });
const queued = (text) => byId(page, 'queued-message').filter({ hasText: text });

describe('speaking while the agent works', () => {
  it('queues messages while a question waits: edited, withdrawn, then sent after the answer', async () => {
    await startSession(page, 'Plan a trip');
    await pending(page).waitFor();
    await composer().fill('Also book a hotel');
    assert.match(await byId(page, 'composer-hint').textContent(), /Enter queues it until you answer/);
    await composer().press('Enter');
    await queued('Also book a hotel').getByText('Queued · sent once the question above is answered').waitFor();
    assert.equal(await composer().inputValue(), '', 'the box is free again');
    await composer().fill('and a car');
    await page.getByRole('button', { name: 'Queue', exact: true }).click();
    await queued('and a car').waitFor();

    await queued('Also book a hotel').getByRole('button', { name: 'Edit this queued message' }).click();
    const editor = page.getByRole('textbox', { name: 'Edit your queued message' });
    await editor.fill('Also book a hotel by the sea');
    await editor.press('Enter');
    await queued('Also book a hotel by the sea').waitFor();
    await queued('and a car').getByRole('button', { name: 'Withdraw this queued message' }).click();
    await queued('and a car').waitFor({ state: 'detached' });
    await shots(page, '51-queued');
    for (const colorScheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousViolations(page), [], `axe-core, ${colorScheme}`);
    }
    await page.emulateMedia({ colorScheme: null });

    await byId(page, 'interrupt-text').fill('Lisbon');
    await pending(page).getByTestId('interrupt-submit').click();
    await assistantSaying(page, 'Noted, Lisbon.');
    await assistantSaying(page, 'A hotel by the sea, then.');
    await idle(page);
    await byId(page, 'queued-messages').waitFor({ state: 'detached' });
    assert.deepEqual(await textsOf(page, 'user-message'), ['Plan a trip', 'Also book a hotel by the sea']);
  });

  it('steers the running answer from the menu beside Send', async () => {
    await say(page, 'Work out 6*7');
    await page.locator('[data-testid=assistant-message].streaming').waitFor();
    await composer().fill('Show your working');
    await page.getByRole('button', { name: 'More ways to send' }).click();
    const menu = page.getByRole('menu', { name: 'Send while the agent works' });
    await menu.waitFor();
    await menu.getByRole('menuitem', { name: /Steer/ }).click();
    await byId(page, 'user-message').filter({ hasText: 'Show your working' }).waitFor();
    await assistantSaying(page, 'Steered answer');
    await idle(page);
    assert.deepEqual((await textsOf(page, 'user-message')).slice(-2), ['Work out 6*7', 'Show your working']);
    const runs = await byId(page, 'tool-call').count();
    assert.equal(runs, 1, 'one run: the steering message joined it after its tool call');
  });

  it('sends at once with Ctrl+Enter, stopping the agent, and edits the last message with the up arrow', async () => {
    await say(page, 'Tell me a long story');
    await page.locator('[data-testid=assistant-message].streaming').waitFor();
    await composer().fill('Shorter, please');
    await page.getByRole('button', { name: 'More ways to send' }).click();
    await page.getByRole('menu', { name: 'Send while the agent works' }).waitFor();
    await shots(page, '52-send-menu');
    await page.keyboard.press('Escape');
    await page.getByRole('menu').waitFor({ state: 'detached' });
    await composer().press('Control+Enter');
    await byId(page, 'run-cancelled').waitFor();
    await assistantSaying(page, 'The short version.');
    await idle(page);
    assert.deepEqual((await textsOf(page, 'user-message')).slice(-2), ['Tell me a long story', 'Shorter, please']);

    await composer().focus();
    await composer().press('ArrowUp');
    const editor = page.getByRole('textbox', { name: 'Edit your message' });
    await editor.waitFor();
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-label') === 'Edit your message');
    assert.equal(await editor.inputValue(), 'Shorter, please');
    await editor.press('Escape');
    await editor.waitFor({ state: 'detached' });
    assert.deepEqual(errors.flat(), []);
  });
});
