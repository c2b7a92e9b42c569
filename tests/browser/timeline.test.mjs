// Proves, in headless Chromium against the real binary (the demo model), that a run's
// Timeline shows where its time went: under the usage line, a button opens a waterfall with
// the model calls (model, time to the first token, tokens, cost), the tool call and, for a
// run that asked a question, the wait for the person's answer; a share link's viewer gets
// it too. Driven by roles and visible text; axe-core checks both colour schemes.
// Screenshots: target/browser/103-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { axeBothSchemes } from '../support/axe.mjs';
import {
  byId, headerItem, idle, newContext, pending, shots, startSession, tandemWithPage,
} from '../support/browser.mjs';

let app;
let page;

before(async () => {
  app = await tandemWithPage(['--engine', 'demo', '--token-delay-ms', '0']);
  ({ page } = app);
});

after(() => app?.stop());

/** The rows of the open timeline, as their visible words. */
async function rows(timeline) {
  return (await timeline.getByRole('listitem').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim());
}

describe('a run’s timeline', () => {
  it('shows the model calls and the tool call of a run, on the run’s scale', async () => {
    await startSession(page, 'what is 12 * (3 + 4)');
    await idle(page);
    const toggle = page.getByRole('button', { name: 'Timeline' }).last();
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    await toggle.click();
    const timeline = page.getByRole('list', { name: 'Where this run’s time went' }).last();
    await timeline.waitFor();
    assert.equal(await page.getByRole('button', { name: 'Hide timeline' }).last().getAttribute('aria-expanded'), 'true');
    const seen = await rows(timeline);
    assert.equal(seen.length, 3, seen.join('\n'));
    assert.match(seen[0], /^Model demo .*first token .* in · .* out/);
    assert.match(seen[1], /^Tool calculator \d/);
    assert.match(seen[2], /^Model demo/);
    assert.match(await byId(page, 'run-timeline').last().getByText(/^Run /).textContent(), /models .* · tools /);
    await shots(page, '103-timeline-tool');
    await axeBothSchemes(page);
  });

  it('shows the wait for the person’s answer in the run that asked, also to a share link', async () => {
    await startSession(page, 'ask me a question');
    const card = pending(page);
    await card.getByText("What's your name?").waitFor();
    await card.getByPlaceholder('Type your answer…').fill('Ada');
    await card.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Nice to meet you, Ada!').waitFor();
    await idle(page);
    // The run that asked is the first of the two: its timeline holds the wait.
    await page.getByRole('button', { name: 'Timeline' }).first().click();
    const timeline = page.getByRole('list', { name: 'Where this run’s time went' }).first();
    const wait = timeline.getByRole('listitem').filter({ hasText: 'Waited for your answer' });
    await wait.waitFor();
    assert.match(await wait.innerText(), /resolved/);
    assert.match(await byId(page, 'run-timeline').first().getByText(/^Run /).textContent(), /waiting for you/);
    await shots(page, '103-timeline-wait');
    await axeBothSchemes(page);

    await (await headerItem(page, 'share')).click();
    const dialog = page.getByRole('dialog', { name: 'Share a read-only link' });
    await byId(page, 'create-link').click();
    const link = await byId(page, 'share-link').inputValue();
    await dialog.getByRole('button', { name: 'Close' }).click();
    const { context } = await newContext(app.browser);
    const viewer = await context.newPage();
    await viewer.goto(link);
    await viewer.getByText('Nice to meet you, Ada!').waitFor();
    await viewer.getByRole('button', { name: 'Timeline' }).first().click();
    await viewer.getByRole('list', { name: 'Where this run’s time went' }).first()
      .getByRole('listitem').filter({ hasText: 'Waited for your answer' }).waitFor();
    await shots(viewer, '103-timeline-shared');
    await context.close();
    assert.deepEqual(app.errors, []);
  });
});
