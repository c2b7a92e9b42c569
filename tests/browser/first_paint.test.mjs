// Proves, in headless Chromium against the real binary (demo model), that a session opened
// by its address paints its transcript before the page's code has loaded: the server's
// rendering of it (`GET /api/sessions/{id}/preview`), in the page's layout, with the
// person's question, the tool call and the answer; that the page's own transcript takes
// its place once drawn and works as ever; and that the layer goes when the person opens
// something else before the page is ready. axe-core checks the painted layer.
// Screenshots: target/browser/95-first-paint-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { axeBothSchemes } from '../support/axe.mjs';
import {
  assistantSaying, byId, connection, idle, newContext, say, shots, startSession, tandemWithPage,
} from '../support/browser.mjs';

const QUESTION = 'what is 12 * (3 + 4)';

/** A fresh visitor whose page code (the WASM) waits until `release()` is called. */
async function visitorWithCodeHeld(browser) {
  const { context, errors } = await newContext(browser);
  let release;
  const held = new Promise((resolve) => { release = resolve; });
  await context.route('**/*.wasm', async (route) => {
    await held;
    await route.continue();
  });
  return { page: await context.newPage(), errors, release, close: () => context.close() };
}

describe('first paint', () => {
  let t;
  let session;
  before(async () => {
    t = await tandemWithPage([]);
    session = await startSession(t.page, QUESTION);
    await assistantSaying(t.page, '12 * (3 + 4) = 84');
    await idle(t.page);
  });
  after(async () => t?.stop());

  it('paints the transcript the server rendered until the page draws its own', async () => {
    const visitor = await visitorWithCodeHeld(t.browser);
    try {
      const { page } = visitor;
      await page.goto(`${t.tandem.url}/#/sessions/${session}`);
      const layer = byId(page, 'first-paint');
      await layer.getByText(QUESTION, { exact: true }).waitFor();
      await layer.getByText('12 * (3 + 4) = 84').waitFor();
      await layer.locator('.tool-name', { hasText: 'calculator' }).waitFor();
      // Only the server's rendering is there: the page's code has not run.
      assert.equal(await byId(page, 'user-message').count(), 0);
      await shots(page, '95-first-paint');
      await axeBothSchemes(page);

      visitor.release();
      await byId(page, 'user-message').getByText(QUESTION).waitFor();
      await layer.waitFor({ state: 'detached' });
      await connection(page, 'live');
      // The page is the page: the person carries on.
      await say(page, 'what time is it');
      await assistantSaying(page, 'UTC');
      assert.deepEqual(visitor.errors, []);
    } finally {
      await visitor.close();
    }
  });

  it('takes the layer away when the person opens something else first', async () => {
    const visitor = await visitorWithCodeHeld(t.browser);
    try {
      const { page } = visitor;
      await page.goto(`${t.tandem.url}/#/sessions/${session}`);
      await byId(page, 'first-paint').getByText(QUESTION, { exact: true }).waitFor();
      await page.evaluate(() => { location.hash = '#/'; });
      visitor.release();
      await byId(page, 'empty-state').waitFor();
      await byId(page, 'first-paint').waitFor({ state: 'detached' });
      assert.deepEqual(visitor.errors, []);
    } finally {
      await visitor.close();
    }
  });
});
