// Proves, in headless Chromium against the real binary (script engine, built page), how a
// question with a deadline looks and ends: the card counts down, turns amber under a minute
// and, when nobody answers, the server expires it — the card records
// `Expired — the agent went on without your answer` and the agent goes on. Two tabs answering
// the same question end with the winner's answer in both and no page-wide error, also when
// the losing tab's answer reaches the server first-hand and is refused (409). The page's own
// clock running out locks the card before the server's event, and an answer that arrives
// after the deadline (410) leaves the card read-only until the expiry settles it.
//
// Two servers run: `quick` asks with a 3 s deadline, `slow` with 120 s. Where a test needs
// the losing side of a race, the tab's socket goes through a valve that holds back event
// frames (never error frames) until released, and the page's clock is Playwright's. No test
// sleeps: every wait is for something on screen or on the socket. Screenshots go to
// target/browser/3N-*.png.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  assistantSaying, byId, connection, launchBrowser, newContext, pending, say, sessionIdOf, shot, startSession,
} from '../support/browser.mjs';
import { freePort, startTandem, webDir } from '../support/tandem.mjs';

const QUESTION_EXPIRED = 'Expired — the agent went on without your answer';
const SESSION_SOCKET = /\/api\/sessions\/[^/]+\/ws/;

/** A script that asks one text question with this deadline, then says `then`. */
const script = (prompt, timeoutSeconds, then) => ({
  turns: [
    { toolCalls: [{ name: 'request_input', arguments: { prompt, kind: 'text', timeoutSeconds } }] },
    { text: then },
  ],
});

let scriptDir;
let quick;
let slow;
let browser;
/** Every context's page errors (live arrays, read at the end). */
const errorLists = [];

const answeredCard = (p) => p.locator('[data-testid=interrupt][data-state=answered]');
const answerText = async (p) => (await answeredCard(p).getByTestId('interrupt-answer').textContent()).trim();
const noticeCount = (p) => byId(p, 'notice').count();

/** A new page in a new context (optionally with Playwright's clock installed first). */
async function freshPage(clock) {
  const { context, errors } = await newContext(browser);
  errorLists.push(errors);
  if (clock) await context.clock.install(clock);
  const page = await context.newPage();
  return { page, context };
}

/** Opens the server's page, starts a session, asks the scripted question; returns the id. */
async function askIn(page, server) {
  await page.goto(server.url);
  const id = await startSession(page, 'hi');
  await pending(page).waitFor();
  return id;
}

/** Opens a session in another tab and waits for its pending card. */
async function follow(page, server, id) {
  await page.goto(`${server.url}/#/sessions/${id}`);
  await connection(page, 'live');
  await pending(page).waitFor();
}

/**
 * Routes a page's session sockets through a valve: while it holds, event frames from the
 * server wait (in order) instead of reaching the page; every other frame passes. Set up
 * before the page opens its socket.
 */
async function valve(page) {
  const state = { holding: false, held: [], waiters: [] };
  await page.routeWebSocket(SESSION_SOCKET, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((message) => {
      const text = message.toString();
      if (!state.holding || JSON.parse(text).kind !== 'event') {
        ws.send(message);
        return;
      }
      state.held.push([ws, message]);
      state.waiters = state.waiters.filter(({ test, resolve }) => !(test(text) && (resolve(), true)));
    });
  });
  return {
    hold() {
      state.holding = true;
    },
    /** Resolves once a held frame's text passes `test`. */
    heldFrame(test) {
      if (state.held.some(([, message]) => test(message.toString()))) return Promise.resolve();
      return new Promise((resolve) => state.waiters.push({ test, resolve }));
    },
    release() {
      state.holding = false;
      for (const [ws, message] of state.held.splice(0)) ws.send(message);
    },
  };
}

/** The tool result a socket frame carries, if any. */
const resultOf = (text) => {
  const { event } = JSON.parse(text);
  return event?.type === 'TOOL_CALL_RESULT' ? JSON.parse(event.content) : undefined;
};
const isResult = (text) => resultOf(text) !== undefined;
const isExpiredResult = (text) => resultOf(text)?.status === 'expired';

/** The seconds a countdown shows (`Answer within 0:03` → 3). */
const secondsOf = (text) => {
  const [, minutes, seconds] = /(\d+):(\d\d)$/.exec(text);
  return Number(minutes) * 60 + Number(seconds);
};

before(async () => {
  scriptDir = mkdtempSync(path.join(tmpdir(), 'tandem-expiry-'));
  const start = async (name, body) => {
    const file = path.join(scriptDir, `${name}.json`);
    writeFileSync(file, JSON.stringify(body));
    return startTandem({
      port: await freePort(),
      args: ['--engine', 'script', '--script', file, '--token-delay-ms', '5', '--web-dir', webDir()],
    });
  };
  quick = await start('quick', script('Quick, your name?', 3, 'No answer, moving on.'));
  slow = await start('slow', script('Your name, when you have a moment?', 120, 'Thanks, noted.'));
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await quick?.stop('SIGKILL');
  await slow?.stop('SIGKILL');
  if (scriptDir) rmSync(scriptDir, { recursive: true, force: true });
});

describe('questions with a deadline', () => {
  it('counts down, expires unanswered, and the agent moves on', async () => {
    const { page} = await freshPage();
    await askIn(page, quick);
    const deadline = pending(page).getByTestId('interrupt-deadline');
    const first = (await deadline.textContent()).trim();
    assert.match(first, /^Answer within 0:0[23]$/);
    assert.match(await deadline.getAttribute('class'), /\bsoon\b/, 'amber under a minute');
    const next = await page.waitForFunction((before) => {
      const text = document.querySelector('[data-testid=interrupt-deadline]')?.textContent.trim();
      return text !== before && text;
    }, first);
    const second = await next.jsonValue();
    assert.match(second, /^Answer within 0:0[12]$/);
    assert.ok(secondsOf(second) < secondsOf(first), `${second} after ${first}`);
    await shot(page, '31-countdown');

    const expired = page.locator('[data-testid=interrupt][data-state=answered][data-outcome=expired]');
    await expired.waitFor();
    assert.equal(await answerText(page), QUESTION_EXPIRED);
    assert.equal(await expired.getByTestId('interrupt-deadline').count(), 0, 'no countdown left');
    await assistantSaying(page, 'No answer, moving on.');
    assert.equal(await noticeCount(page), 0);
    await shot(page, '32-expired');

    // The record is rebuilt from the log after a reload.
    await page.reload();
    await connection(page, 'live');
    await expired.waitFor();
    assert.equal(await answerText(page), QUESTION_EXPIRED);
  });

  it('two tabs answer: the other tab shows the winning answer and no page-wide error', async () => {
    const { page: tabA, context} = await freshPage();
    const id = await askIn(tabA, slow);
    const tabB = await context.newPage();
    await follow(tabB, slow, id);
    await pending(tabB).getByTestId('interrupt-text').fill('Bob');

    await pending(tabA).getByTestId('interrupt-text').fill('Ada');
    await pending(tabA).getByTestId('interrupt-submit').click();
    await answeredCard(tabA).waitFor();
    assert.equal(await answerText(tabA), 'Answered: Ada');

    // Tab B submits too, unless the winner's events have already settled its card (a
    // person cannot click a button that is gone). Checked and clicked in one step.
    const clicked = await tabB.evaluate(() => {
      const button = document.querySelector(
        '[data-testid=interrupt][data-state=pending] [data-testid=interrupt-submit]',
      );
      if (!button || button.disabled) return false;
      button.click();
      return true;
    });
    await answeredCard(tabB).waitFor();
    assert.equal(await answerText(tabB), 'Answered: Ada');
    if (clicked) {
      // Tab A's answer was committed before tab B's was sent, so the server refused it.
      await byId(tabB, 'interrupt-refusal').filter({ hasText: 'Already answered in another tab' }).waitFor();
    }
    await assistantSaying(tabB, 'Thanks, noted.');
    assert.equal(await noticeCount(tabB), 0, 'no page-wide error');
    assert.equal(await noticeCount(tabA), 0);
  });

  it('an answer that loses the race is refused on its card, which then shows the winner', async () => {
    const { page: tabA, context} = await freshPage();
    const id = await askIn(tabA, slow);
    const tabB = await context.newPage();
    const socketB = await valve(tabB);
    await follow(tabB, slow, id);

    // Tab B hears nothing of tab A's answer until it has sent its own.
    socketB.hold();
    await pending(tabA).getByTestId('interrupt-text').fill('Ada');
    await pending(tabA).getByTestId('interrupt-submit').click();
    await answeredCard(tabA).waitFor();
    await socketB.heldFrame(isResult);

    const cardB = pending(tabB);
    await cardB.getByTestId('interrupt-text').fill('Bob');
    await cardB.getByTestId('interrupt-submit').click();
    const refusal = byId(tabB, 'interrupt-refusal');
    await refusal.and(tabB.locator('[data-refusal=answered_elsewhere]')).waitFor();
    assert.equal((await refusal.textContent()).trim(), 'Already answered in another tab');
    assert.ok(await cardB.getByTestId('interrupt-submit').isDisabled(), 'read-only until settled');
    assert.ok(await cardB.getByTestId('interrupt-text').isDisabled());
    assert.equal(await noticeCount(tabB), 0, 'no page-wide error');
    await shot(tabB, '33-answered-elsewhere');

    socketB.release();
    await answeredCard(tabB).waitFor();
    assert.equal(await answerText(tabB), 'Answered: Ada');
    await assistantSaying(tabB, 'Thanks, noted.');
    assert.equal(await noticeCount(tabB), 0);
  });

  it("locks the card when the page's clock runs out before the server's expiry", async () => {
    const { page, context} = await freshPage({});
    await askIn(page, slow);
    const card = pending(page);
    const deadline = card.getByTestId('interrupt-deadline');
    assert.match((await deadline.textContent()).trim(), /^Answer within (2:00|1:59)$/);
    assert.doesNotMatch(await deadline.getAttribute('class'), /\bsoon\b/);
    await card.getByTestId('interrupt-text').fill('Ada');

    await context.clock.fastForward('01:35');
    await card.locator('[data-testid=interrupt-deadline].soon').waitFor();
    assert.match((await deadline.textContent()).trim(), /^Answer within 0:[12]\d$/);
    assert.ok(!(await card.getByTestId('interrupt-submit').isDisabled()), 'still answerable');

    await context.clock.fastForward('00:30');
    await card.locator('[data-testid=interrupt-deadline][data-state=up]').waitFor();
    assert.equal((await deadline.textContent()).trim(), 'Time is up…');
    for (const control of ['interrupt-text', 'interrupt-submit', 'interrupt-decline']) {
      assert.ok(await card.getByTestId(control).isDisabled(), `${control} is disabled`);
    }
    assert.equal(await card.getAttribute('data-state'), 'pending', 'the server has not expired it yet');
    assert.equal(await noticeCount(page), 0);
    await shot(page, '34-time-is-up');
  });

  it('an answer that arrives after the deadline is refused and the card settles as expired', async () => {
    // The page's clock runs a minute behind, so its countdown still allows an answer.
    const { page} = await freshPage({ time: Date.now() - 60_000 });
    const socket = await valve(page);
    await askIn(page, quick);
    const card = pending(page);
    assert.match((await card.getByTestId('interrupt-deadline').textContent()).trim(), /^Answer within 1:0\d$/);
    socket.hold();
    await socket.heldFrame(isExpiredResult);

    await card.getByTestId('interrupt-text').fill('Ada');
    await card.getByTestId('interrupt-submit').click();
    const refusal = byId(page, 'interrupt-refusal');
    await refusal.and(page.locator('[data-refusal=expired]')).waitFor();
    assert.equal((await refusal.textContent()).trim(), 'This question expired before your answer arrived');
    assert.ok(await card.getByTestId('interrupt-submit').isDisabled(), 'read-only');
    assert.ok(await card.getByTestId('interrupt-text').isDisabled());
    assert.equal(await card.getByTestId('interrupt-deadline').count(), 0, 'the refusal replaces the countdown');
    assert.equal(await noticeCount(page), 0, 'no page-wide error');
    await shot(page, '35-expired-before-the-answer');

    socket.release();
    await page.locator('[data-testid=interrupt][data-state=answered][data-outcome=expired]').waitFor();
    assert.equal(await answerText(page), QUESTION_EXPIRED);
    await assistantSaying(page, 'No answer, moving on.');
  });

  it('raised no page errors', () => {
    assert.deepEqual(errorLists.flat(), []);
  });
});
