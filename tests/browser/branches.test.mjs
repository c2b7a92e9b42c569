// Proves, in headless Chromium against the real binary, that a conversation can be steered:
// Edit on the person's message makes a branch that runs the new text, Regenerate on an
// answer makes a branch that runs its message again, and `‹ n / m ›` steps between the
// conversation's lines without a reload, each showing its own history; the sidebar keeps
// listing the conversation once. Driven by roles and visible text; axe-core checks the
// screen in both colour schemes. Screenshots: target/browser/3N-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  assistantSaying, byId, idle, launchBrowser, newContext, sessionIdOf, shots, startSession, textsOf,
} from '../support/browser.mjs';
import { artefactDir, freePort, startTandem, webDir } from '../support/tandem.mjs';

const USAGE = { model: 'tandem', inputTokens: 10, outputTokens: 3 };
const TURNS = [{ text: 'Lisbon is lovely.', usage: USAGE }, { text: 'Porto is lovely too.', usage: USAGE }];

let tandem;
let browser;
let page;
const errors = [];

before(async () => {
  const dir = artefactDir('browser-fixtures');
  const script = path.join(dir, 'branches-script.json');
  writeFileSync(script, JSON.stringify({ turns: TURNS }));
  tandem = await startTandem({
    port: await freePort(),
    args: ['--engine', 'script', '--script', script, '--token-delay-ms', '5', '--models', 'tandem-alt',
      '--web-dir', webDir()],
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

/** The place the branch switcher shows, e.g. `Branch 2 / 3`. */
const place = () => page.getByRole('navigation', { name: 'Branches of this conversation' });

describe('a conversation you can steer', () => {
  let first;
  let edited;

  it('edits a sent message: a branch runs the new text, the first line stays', async () => {
    first = await startSession(page, 'Where should I go?');
    await assistantSaying(page, 'Lisbon is lovely.');
    await idle(page);
    await page.getByRole('button', { name: 'Edit this message' }).click();
    const editor = page.getByRole('textbox', { name: 'Edit your message' });
    await editor.fill('Where should I go in winter?');
    await editor.press('Enter');
    await page.waitForFunction((id) => !location.hash.endsWith(id), first);
    edited = await sessionIdOf(page);
    await byId(page, 'user-message').filter({ hasText: 'Where should I go in winter?' }).waitFor();
    await assistantSaying(page, 'Lisbon is lovely.');
    await idle(page);
    await place().getByText('Branch 2 / 2').waitFor();
    assert.deepEqual(await textsOf(page, 'user-message'), ['Where should I go in winter?']);
    assert.match(await place().evaluate((nav) => nav.nextElementSibling?.textContent ?? ''),
      /Where should I go in winter\?/, 'the switcher stands where the branches part');
    assert.equal(await byId(page, 'session-item').count(), 1, 'the conversation is listed once');
  });

  it('regenerates an answer into another branch and steps between the three', async () => {
    await page.getByRole('button', { name: 'Regenerate' }).click();
    await page.waitForFunction((id) => !location.hash.endsWith(id), edited);
    await place().getByText('Branch 3 / 3').waitFor();
    await assistantSaying(page, 'Lisbon is lovely.');
    await idle(page);
    assert.deepEqual(await textsOf(page, 'user-message'), ['Where should I go in winter?']);
    await byId(page, 'session-usage').getByText(/^10 in/).waitFor();
    await byId(page, 'conversation-usage').getByText(/^all branches: 30 in/).waitFor();
    await shots(page, '31-branches');
    for (const colorScheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousViolations(page), [], `axe-core, ${colorScheme}`);
    }
    await page.emulateMedia({ colorScheme: null });

    await place().getByRole('button', { name: 'Previous branch' }).click();
    await place().getByText('Branch 2 / 3').waitFor();
    await page.getByRole('button', { name: 'Previous branch' }).click();
    await place().getByText('Branch 1 / 3').waitFor();
    await byId(page, 'user-message').filter({ hasText: 'Where should I go?' }).waitFor();
    assert.deepEqual(await textsOf(page, 'user-message'), ['Where should I go?']);
    assert.equal(await sessionIdOf(page), first);
    await byId(page, 'session-title').getByText('Where should I go?').waitFor();
    assert.equal(await page.locator('[data-testid=session-item].active').count(), 1,
      'the conversation\'s row is the open one');
    assert.equal(await place().getByRole('button', { name: 'Previous branch' }).isDisabled(), true);
    await page.getByRole('button', { name: 'Edit this message' }).click();
    await page.getByRole('textbox', { name: 'Edit your message' }).press('Escape');
    await page.getByRole('textbox', { name: 'Edit your message' }).waitFor({ state: 'detached' });
    await shots(page, '32-first-line');
  });

  it('regenerates an answer on another model from its menu', async () => {
    await page.getByRole('combobox', { name: 'Regenerate with another model' }).selectOption('tandem-alt');
    await place().getByText('Branch 4 / 4').waitFor();
    await assistantSaying(page, 'Lisbon is lovely.');
    await idle(page);
    assert.equal(await byId(page, 'model-picker').inputValue(), 'tandem-alt',
      'the branch runs on the model picked');
    assert.deepEqual(await textsOf(page, 'user-message'), ['Where should I go?']);
    assert.deepEqual(errors.flat(), []);
  });
});
