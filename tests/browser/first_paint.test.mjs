// Proves, in headless Chromium against the real binary (demo model), that a session opened
// by its address paints its transcript before the page's code has loaded: the server's
// rendering of it (`GET /api/sessions/{id}/preview`), in the page's layout, with the
// person's question, the tool call and the answer; that the page's own transcript takes
// its place once drawn and works as ever; and that the layer goes when the person opens
// something else before the page is ready; and that a long session's layer holds its newest
// 40 messages, opened at their end. axe-core checks the painted layer.
// Screenshots: target/browser/95-first-paint-<light|dark>-<desktop|phone>.png and
// 95-first-paint-long-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';

import { HttpAgent } from '@ag-ui/client';

import { axeBothSchemes } from '../support/axe.mjs';
import {
  VIEWPORTS, assistantSaying, byId, connection, idle, newContext, say, shot, shots, startSession,
  tandemWithPage,
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

/** Where the first paint's layer stands: its scroll position, visible and whole height. */
function layerScroll(page) {
  return page.evaluate(() => {
    const scroller = document.querySelector('#first-paint .transcript');
    return { top: scroller.scrollTop, seen: scroller.clientHeight, height: scroller.scrollHeight };
  });
}

/**
 * Waits, frame by frame (at most 5 s), for the first paint's layer to be styled (its rows
 * overflow) and scrolled to its end; whether it got there, and where its scroller stands.
 */
async function layerAtEnd(page) {
  const atEnd = await page
    .waitForFunction(() => {
      const scroller = document.querySelector('#first-paint .transcript');
      return scroller.scrollHeight > scroller.clientHeight
        && scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 1;
    }, undefined, { timeout: 5000, polling: 'raf' })
    .then(() => true, () => false);
  return { atEnd, end: await layerScroll(page) };
}

describe('first paint of a long session', () => {
  const TURNS = 45;
  let t;
  let session;
  before(async () => {
    // The `bench` model answers "run tokens=N" with N tokens at once. Each turn is one run
    // through AG-UI's HTTP transport, which ends with the run: one question, one answer.
    t = await tandemWithPage(['--engine', 'bench', '--messages-per-minute', '100000']);
    const created = await fetch(`${t.tandem.url}/api/sessions`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
    });
    ({ id: session } = await created.json());
    const agent = new HttpAgent({ url: `${t.tandem.url}/api/agui`, threadId: session });
    for (let turn = 1; turn <= TURNS; turn += 1) {
      agent.addMessage({ id: randomUUID(), role: 'user', content: `run tokens=${(turn % 5) * 12 + 3} delay_ms=0` });
      await agent.runAgent();
    }
  });
  after(async () => t?.stop());

  it('holds the newest 40 messages, opened at their end, on desktop and phone', async () => {
    for (const [device, viewport] of Object.entries(VIEWPORTS)) {
      for (const colorScheme of ['light', 'dark']) {
        const { context, errors } = await newContext(t.browser, { viewport, colorScheme });
        try {
          await context.route('**/*.wasm', () => {}); // never answered: only the layer paints
          const page = await context.newPage();
          await page.goto(`${t.tandem.url}/#/sessions/${session}`);
          const layer = byId(page, 'first-paint');
          await layer.locator('.bubble-user').first().waitFor();
          // 90 messages: the newest 40 are the last 20 turns, asked and answered.
          assert.equal(await layer.locator('.bubble-user').count(), 20);
          assert.equal(await layer.locator('.bubble-assistant').count(), 20);
          await layer.getByText(`run tokens=${(TURNS % 5) * 12 + 3} delay_ms=0`).last().waitFor();
          // The stylesheet may be applied after the rows are in (see the next story).
          const { atEnd, end } = await layerAtEnd(page);
          assert.ok(end.height > end.seen, `the rows overflow the screen: ${JSON.stringify(end)}`);
          assert.ok(atEnd, `opened at the end: ${JSON.stringify(end)}`);
          await shot(page, `95-first-paint-long-${colorScheme}-${device}`);
          assert.deepEqual(errors, []);
        } finally {
          await context.close();
        }
      }
    }
  });

  it('stays at its end when the stylesheet arrives after the rows, on desktop and phone', async () => {
    for (const [device, viewport] of Object.entries(VIEWPORTS)) {
      const { context, errors } = await newContext(t.browser, { viewport, colorScheme: 'light' });
      try {
        await context.route('**/*.wasm', () => {});
        // The stylesheet is held until the layer's rows are in, then let through.
        let heldStylesheet;
        const stylesheetAsked = new Promise((resolve) => {
          context.route('**/*.css', (route) => { heldStylesheet = route; resolve(); });
        });
        const page = await context.newPage();
        // Not until `load`: that waits for the held stylesheet.
        await page.goto(`${t.tandem.url}/#/sessions/${session}`, { waitUntil: 'commit' });
        const layer = byId(page, 'first-paint');
        await layer.getByText(`run tokens=${(TURNS % 5) * 12 + 3} delay_ms=0`).last().waitFor();
        await stylesheetAsked;
        const unstyled = await layerScroll(page);
        assert.equal(unstyled.height > unstyled.seen, false, 'without its stylesheet the layer does not scroll yet');
        await heldStylesheet.continue();
        const { atEnd, end } = await layerAtEnd(page);
        assert.ok(atEnd, `at the end once styled: ${JSON.stringify(end)}`);
        await shot(page, `101-first-paint-late-stylesheet-${device}`);
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    }
  });
});
