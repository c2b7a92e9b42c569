// Proves the main user story in headless Chromium against the real binary (demo engine,
// built page): a person plans a trip, watches reasoning, text and a tool call stream in,
// answers a choice while a second tab follows live, the server restarts while a confirm
// waits, and after a reload the whole history is there and the trip completes in both tabs
// without duplicated text. Screenshots go to target/browser/0N-*.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  assistantSaying, byId, connection, idle, launchBrowser, newContext, pending, say,
  sessionIdOf, shot, startSession, textsOf,
} from '../support/browser.mjs';
import { freePort, startTandem, webDir } from '../support/tandem.mjs';

let tandem;
let browser;
let context;
let errors;
let tab1;
let tab2;
let sessionId;

const choiceCard = (page) => page.locator('[data-testid=interrupt][data-kind=choice]');
const confirmCard = (page) => page.locator('[data-testid=interrupt][data-kind=confirm]');
const transcriptText = (page) => byId(page, 'transcript').evaluate((e) => e.textContent);

/** Records, inside the page, each length the first streamed assistant message reaches. */
function recordAssistantGrowth(page) {
  return page.evaluate(() => {
    window.__lengths = [];
    new MutationObserver(() => {
      window.__tracked ??= document.querySelector('[data-testid=assistant-message].streaming');
      const length = window.__tracked?.textContent.length ?? 0;
      if (length > 0 && window.__lengths.at(-1) !== length) window.__lengths.push(length);
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
}

/** What a person sees of the story so far, in a form two tabs can be compared on. */
async function transcriptSummary(page) {
  return {
    users: await textsOf(page, 'user-message'),
    assistants: await textsOf(page, 'assistant-message'),
    tools: await page.getByTestId('tool-call').evaluateAll((els) => els.map((e) => e.dataset.toolName)),
    interrupts: await page.getByTestId('interrupt').evaluateAll((els) => els.map((e) => `${e.dataset.kind}:${e.dataset.state}`)),
  };
}

before(async () => {
  const port = await freePort();
  tandem = await startTandem({
    port,
    args: ['--engine', 'demo', '--token-delay-ms', '10', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
  ({ context, errors } = await newContext(browser));
  tab1 = await context.newPage();
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

describe('planning a trip with a restart in the middle', () => {
  it('opens the page on the demo model and starts a session', async () => {
    await tab1.goto(tandem.url);
    assert.match(await byId(tab1, 'model-label').textContent(), /demo model/i);
    await shot(tab1, '01-welcome');
    await recordAssistantGrowth(tab1);
    sessionId = await startSession(tab1, 'plan a trip');
    await tab1.locator('[data-testid=user-message]', { hasText: 'plan a trip' }).waitFor();
  });

  it('streams reasoning, then text that grows, then a clock call that finishes', async () => {
    await tab1.waitForFunction(() => document.querySelector('[data-testid=reasoning] .reasoning-text')?.textContent.trim());
    await tab1.waitForFunction(() => window.__lengths.length >= 2);
    const first = tab1.getByTestId('assistant-message').first();
    await tab1.locator('[data-testid=assistant-message]:not(.streaming)').first().waitFor();
    const lengths = await tab1.evaluate(() => window.__lengths);
    assert.ok(lengths.every((n, i) => i === 0 || n > lengths[i - 1]), `lengths grow: ${lengths}`);
    assert.equal(lengths.at(-1), (await first.textContent()).length, 'the last length seen is the full text');
    const clock = tab1.locator('[data-testid=tool-call][data-tool-name=clock][data-status=done]');
    await clock.waitFor();
    assert.match(await clock.getByTestId('tool-result').textContent(), /"date"/);
    await shot(tab1, '02-streamed-clock');
  });

  it('asks where to go, and a second tab shows the same transcript', async () => {
    await pending(tab1).and(choiceCard(tab1)).waitFor();
    assert.deepEqual(await pending(tab1).getByTestId('interrupt-choice').allTextContents(),
      ['Lisbon', 'Kyoto', 'Reykjavík', 'Mexico City']);
    await shot(tab1, '03-choice');
    tab2 = await context.newPage();
    await tab2.goto(`${tandem.url}/#/sessions/${sessionId}`);
    await connection(tab2, 'live');
    await pending(tab2).and(choiceCard(tab2)).waitFor();
    assert.deepEqual(await transcriptSummary(tab2), await transcriptSummary(tab1));
  });

  it('takes the answer "Kyoto" in tab 1, and both tabs follow to the confirm', async () => {
    await pending(tab1).getByTestId('interrupt-choice').filter({ hasText: 'Kyoto' }).click();
    for (const page of [tab1, tab2]) {
      const answered = choiceCard(page).and(page.locator('[data-state=answered]'));
      await answered.waitFor();
      assert.match(await answered.getByTestId('interrupt-answer').textContent(), /Kyoto/);
      await pending(page).and(confirmCard(page)).waitFor();
      assert.match(await pending(page).getByTestId('interrupt-prompt').textContent(), /Kyoto/);
    }
    await shot(tab2, '04-second-tab-confirm');
  });

  it('shows the connection is lost when the server stops', async () => {
    await tandem.stop('SIGTERM');
    for (const page of [tab1, tab2]) {
      await page.locator('[data-testid=connection]:not([data-state=live])').waitFor();
    }
    await shot(tab1, '05-server-down');
  });

  it('after a restart and a reload, the whole history is there and the confirm still waits', async () => {
    await tandem.restart();
    await tab1.reload();
    await connection(tab1, 'live');
    await pending(tab1).and(confirmCard(tab1)).waitFor();
    assert.deepEqual(await textsOf(tab1, 'user-message'), ['plan a trip']);
    assert.ok((await byId(tab1, 'reasoning').count()) >= 2, 'reasoning blocks are kept');
    await tab1.locator('[data-testid=tool-call][data-tool-name=clock][data-status=done]').waitFor();
    const choice = choiceCard(tab1).and(tab1.locator('[data-state=answered]'));
    assert.match(await choice.getByTestId('interrupt-answer').textContent(), /Kyoto/);
    await shot(tab1, '06-after-restart');
  });

  it('approving completes the trip: itinerary, no stop button, session idle', async () => {
    await pending(tab1).getByTestId('interrupt-approve').click();
    const plan = await assistantSaying(tab1, 'Have a wonderful time!');
    assert.match(plan, /Kyoto/);
    assert.match(plan, /Day 1/);
    await idle(tab1);
    await tab1.locator(`[data-testid=session-item][data-session-id="${sessionId}"][data-status=idle]`).waitFor();
    await shot(tab1, '07-itinerary');
  });

  it('the second tab reconnects by itself and shows the same text, nothing doubled', async () => {
    await connection(tab2, 'live');
    await assistantSaying(tab2, 'Have a wonderful time!');
    await idle(tab2);
    assert.deepEqual(await transcriptSummary(tab2), await transcriptSummary(tab1));
    assert.equal(await transcriptText(tab2), await transcriptText(tab1));
    await shot(tab2, '08-second-tab-final');
  });

  it('raised no page errors', () => {
    assert.deepEqual(errors, []);
  });
});
