// Proves, in headless Chromium against the real binary (demo engine), that the page follows
// its address in one tab: a second share link pasted into the tab of a first shows its own
// session with what it hides hidden (no "Arguments" heading where arguments are hidden, no
// instructions unless the link shows them), Back and Forward go between the links and
// between sessions and a new conversation. And the instructions set from the page are the
// conversation's settings: kept by a branch, told to the model, hidden from a link.
// Screenshots: target/browser/12N-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  byId, headerItem, idle, moreMenu, newContext, sendAndWait, shots, startSession, tandemWithPage,
} from '../support/browser.mjs';

let server;
let page;
let first;
let second;

before(async () => {
  server = await tandemWithPage(['--engine', 'demo', '--token-delay-ms', '2']);
  page = server.page;
});

after(async () => {
  await server?.stop();
});

/** Opens the instructions dialog from the header's menu. */
async function instructionsDialog() {
  const menu = await moreMenu(page);
  await menu.getByRole('button', { name: 'Instructions…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Instructions' });
  await dialog.waitFor();
  return dialog;
}

/** A share link of the open session, made in its dialog with `options` ticked. */
async function shareLink(options) {
  await (await headerItem(page, 'share')).click();
  const dialog = page.getByRole('dialog', { name: 'Share a read-only link' });
  for (const option of options) await byId(page, option).check();
  await byId(page, 'create-link').click();
  const link = await byId(page, 'share-link').inputValue();
  await dialog.getByRole('button', { name: 'Close' }).click();
  await dialog.waitFor({ state: 'detached' });
  return link;
}

describe('instructions, set from the page', () => {
  it('sets the conversation’s and the person’s own, kept by a branch', async () => {
    first = await startSession(page, 'what time is it');
    await idle(page);
    const dialog = await instructionsDialog();
    const own = dialog.getByRole('textbox', { name: 'Instructions for this conversation' });
    await own.fill('Keep it short.');
    // Enter is a new line in a long box; Ctrl+Enter saves.
    await own.press('Enter');
    await own.pressSequentially('No jargon.');
    await own.press('Control+Enter');
    await dialog.getByText('Saved').first().waitFor();
    const mine = dialog.getByRole('textbox', { name: 'Your instructions for all your conversations' });
    await mine.fill('x'.repeat(8_001));
    await dialog.getByRole('alert').filter({ hasText: 'At most 8000 characters' }).waitFor();
    assert.equal(await byId(page, 'save-own-instructions').isDisabled(), true);
    await mine.fill('I am a nurse.');
    await byId(page, 'save-own-instructions').click();
    await dialog.getByText('Saved').nth(1).waitFor();
    await shots(page, '120-instructions');
    assert.deepEqual(await seriousViolations(page), [], 'axe-core on the instructions');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await page.getByText("You changed this conversation's instructions.").waitFor();

    // The next run is told them: it records the person's own before its model call.
    await sendAndWait(page, 'what time is it');
    const log = await page.evaluate(async (id) => (await (await fetch(`/api/sessions/${id}/events`)).json()).events
      .map((row) => row.event)
      .filter((event) => event.type === 'CUSTOM' && event.name === 'tandem.instructions')
      .map((event) => event.value), first);
    assert.deepEqual(log, [
      { scope: 'conversation', text: 'Keep it short.\nNo jargon.' },
      { scope: 'person', text: 'I am a nurse.' },
    ]);

    // A branch keeps them: editing the last message makes one that parts after them.
    await page.getByRole('button', { name: 'Edit this message' }).last().click();
    const editor = page.getByRole('textbox', { name: 'Edit your message' });
    await editor.fill('what is 12 * (3 + 4)');
    await editor.press('Enter');
    await page.waitForFunction((old) => !location.hash.endsWith(old), first);
    await idle(page);
    second = await page.evaluate(() => location.hash.split('/').pop());
    const branch = await instructionsDialog();
    assert.equal(
      await branch.getByRole('textbox', { name: 'Instructions for this conversation' }).inputValue(),
      'Keep it short.\nNo jargon.',
    );
    await branch.getByRole('button', { name: 'Close' }).click();
  });
});

describe('the page follows its address', () => {
  it('opens a second share link in the same tab, and Back and Forward go between them', async () => {
    await page.goto(`${server.tandem.url}/#/sessions/${first}`);
    await byId(page, 'assistant-message').first().waitFor();
    const everything = await shareLink(['show-instructions']);
    const hiding = await shareLink(['hide-arguments']);
    const { context } = await newContext(server.browser);
    const viewer = await context.newPage();
    await viewer.goto(everything);
    const clock = viewer.locator('[data-testid=tool-call][data-tool-name=clock]').first();
    await clock.getByText('Arguments').waitFor();
    await byId(viewer, 'shared-instructions').getByText('Keep it short.').waitFor({ state: 'attached' });
    await shots(viewer, '121-link-showing-everything');

    // The second link, pasted into the same tab: its own view, its own hiding.
    await viewer.evaluate((url) => { location.hash = new URL(url).hash; }, hiding);
    await byId(viewer, 'shared-hidden').filter({ hasText: 'tool arguments' }).waitFor();
    await clock.waitFor();
    assert.equal(await clock.getByText('Arguments').count(), 0, 'no heading over hidden arguments');
    // Nor over a result: such a link shows how the call ended, never what it said.
    await byId(viewer, 'tool-result-hidden').first().waitFor();
    assert.equal(await clock.getByText('Result', { exact: true }).count(), 0);
    assert.equal(await byId(viewer, 'shared-instructions').count(), 0, 'no instructions');
    await shots(viewer, '122-link-hiding-arguments');
    assert.deepEqual(await seriousViolations(viewer), [], 'axe-core on the second link');

    await viewer.goBack();
    await clock.getByText('Arguments').waitFor();
    assert.equal(await byId(viewer, 'shared-hidden').count(), 0);
    await viewer.goForward();
    await byId(viewer, 'shared-hidden').filter({ hasText: 'tool arguments' }).waitFor();
    await context.close();
  });

  it('goes Back and Forward between sessions and a new conversation', async () => {
    const third = await startSession(page, 'hello');
    await idle(page);
    await page.goto(server.tandem.url);
    await page.getByRole('heading', { name: 'What shall we work on?' }).waitFor();
    // The list shows a conversation by its latest line: the branch made above.
    for (const [id, said] of [[second, 'what is 12'], [third, 'hello']]) {
      await page.locator(`[data-session-id="${id}"] a`).click();
      await page.waitForFunction((open) => location.hash.endsWith(open), id);
      await byId(page, 'user-message').filter({ hasText: said }).waitFor();
    }
    await page.goBack();
    await page.waitForFunction((open) => location.hash.endsWith(open), second);
    await byId(page, 'user-message').filter({ hasText: 'what is 12' }).waitFor();
    await page.goBack();
    await page.getByRole('heading', { name: 'What shall we work on?' }).waitFor();
    await page.goForward();
    await page.waitForFunction((open) => location.hash.endsWith(open), second);
    await byId(page, 'user-message').filter({ hasText: 'what is 12' }).waitFor();
    await page.goForward();
    await byId(page, 'user-message').filter({ hasText: 'hello' }).waitFor();
  });

  it('raised no page errors', () => {
    assert.deepEqual(server.errors, []);
  });
});
