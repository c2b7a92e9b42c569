// Proves, in headless Chromium against the real binary, that the page never eats what a
// person types and behaves like a finished chat product around it: a new conversation is
// only created by its first message (typed right after "+ New session", or an example
// prompt clicked); the composer has the focus when it should, stays usable during a run
// (the text waits and the page says why), and every character typed on the bare page lands
// in it whole, after any click (shortcuts take a modifier; Space still presses a focused
// button), as does what is typed the moment a first message is sent; the
// transcript opens at the newest message, follows the stream, and offers "Jump to latest"
// once the person scrolls up; a deleted session can be brought back with Undo; a session
// that cannot be loaded says so and loads once the server is back.
// Screenshots: target/browser/8N-*-{light,dark}-{desktop,phone}.png.

import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  assistantSaying, byId, connection, idle, launchBrowser, newContext, pending, shots,
  startSession, typeKeys,
} from '../support/browser.mjs';
import { artefactDir, freePort, startTandem, webDir } from '../support/tandem.mjs';

/** A long answer: sixty paragraphs, so the transcript scrolls on any screen. */
const LONG = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of a long answer.`).join('\n\n');

let demo;
let scripted;
let browser;
const errorLists = [];

async function freshPage(viewport) {
  const { context, errors } = await newContext(browser, viewport ? { viewport } : {});
  errorLists.push(errors);
  return context.newPage();
}

/** The ids of the sessions the server lists for this page's user. */
async function listed(page) {
  return page.evaluate(async () => (await (await fetch('/api/sessions')).json()).sessions.map((s) => s.id));
}

const composerValue = (page) => byId(page, 'composer').inputValue();
const composerFocused = (page) => page.waitForFunction(
  () => document.activeElement?.dataset.testid === 'composer',
);

before(async () => {
  const dir = artefactDir('browser-fixtures');
  const script = path.join(dir, 'typing-script.json');
  writeFileSync(script, JSON.stringify({ turns: [{ text: LONG }, { text: 'Short one.' }, { text: LONG }] }));
  demo = await startTandem({
    port: await freePort(),
    args: ['--engine', 'demo', '--token-delay-ms', '15', '--web-dir', webDir()],
  });
  scripted = await startTandem({
    port: await freePort(),
    args: ['--engine', 'script', '--script', script, '--token-delay-ms', '3', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await demo?.stop('SIGKILL');
  await scripted?.stop('SIGKILL');
});

describe('typing, new conversations and following the stream', () => {
  it('keeps what is typed right after "+ New session": no session, no dialog, no jump', async () => {
    const page = await freshPage();
    await page.goto(demo.url);
    await page.getByRole('heading', { name: 'What shall we work on?' }).waitFor();
    const before = await listed(page);
    await page.getByRole('button', { name: '+ New session' }).click();
    await composerFocused(page);
    // Keys that are shortcuts on the bare page are text in the composer.
    await page.keyboard.type('n? w/ hello');
    assert.equal(await composerValue(page), 'n? w/ hello');
    assert.equal(await page.getByRole('dialog').count(), 0, 'no dialog opened');
    assert.deepEqual(await listed(page), before, 'no session was created');
    assert.equal(await page.evaluate(() => location.hash), '', 'still the new conversation');
    await shots(page, '81-new-conversation');
    assert.deepEqual(await seriousViolations(page), [], 'axe-core on the new conversation');

    // The first message creates the session; the run is already streaming there.
    await page.keyboard.press('Control+A');
    await page.keyboard.type('what time is it');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => location.hash.startsWith('#/sessions/'));
    await connection(page, 'live');
    await assistantSaying(page, "It's");
    assert.equal((await listed(page)).length, before.length + 1);
  });

  it('puts every character typed on the bare page into the message box, after any click', async () => {
    const page = await freshPage();
    await page.goto(demo.url);
    // Every class of key a reply may start with: the letters and signs that used to be
    // shortcuts, other letters, capitals, digits, punctuation, accents, other scripts,
    // symbols, and a space on the bare page.
    const replies = ['nice, thanks', 'why not?', '?really', '/help me', '[draft]', 'Yes please',
      '42 is it', '“quoted”', 'écoute', 'Жду ответа', '€5 max', ' spaced'];
    const typedAfter = async (where, reply) => {
      await byId(page, 'composer').fill('');
      await where();
      await typeKeys(page, reply);
      assert.equal(await composerValue(page), reply, `typed after ${where.name}`);
    };
    // After clicking an example card: the conversation starts, and typing lands in the box.
    const exampleCard = async function exampleCard() {
      await page.getByRole('button', { name: /Plan a trip/ }).click();
      await page.waitForFunction(() => location.hash.startsWith('#/sessions/'));
    };
    await typedAfter(exampleCard, 'nice, thanks');
    const question = pending(page);
    await question.waitFor();
    const before = await listed(page);
    const inTheTranscript = async function inTheTranscript() {
      await byId(page, 'transcript').click({ position: { x: 5, y: 5 } });
    };
    const onAButton = async function onAButton() {
      await page.getByRole('button', { name: 'Copy answer' }).first().click();
    };
    for (const reply of replies) {
      await typedAfter(inTheTranscript, reply);
      if (!reply.startsWith(' ')) await typedAfter(onAButton, reply);
    }
    assert.equal(await page.getByRole('dialog').count(), 0, 'no dialog opened');
    assert.deepEqual(await listed(page), before, 'no conversation was started');
    // Space on a focused button still presses it (the keyboard's way to press).
    await byId(page, 'composer').fill('');
    await page.getByRole('button', { name: 'Copy answer' }).first().focus();
    await page.keyboard.press(' ');
    await page.getByRole('button', { name: 'Copied' }).first().waitFor();
    assert.equal(await composerValue(page), '');
    // After answering a question, whose card then leaves the focus nowhere.
    const answered = async function afterAnswering() {
      await question.getByRole('button', { name: 'Lisbon' }).click();
      await question.waitFor({ state: 'detached' });
    };
    await typedAfter(answered, 'wait, one thing');
    // The next question took none of it either.
    const next = pending(page);
    await next.waitFor();
    const fields = await next.locator('input, textarea').evaluateAll((all) => all.map((f) => f.value));
    assert.ok(fields.every((value) => value === ''), `${fields}`);
    assert.equal(await composerValue(page), 'wait, one thing');
    await shots(page, '87-typed-on-the-page');
  });

  it('keeps what is typed the moment the first message is sent', async () => {
    const page = await freshPage();
    await page.goto(demo.url);
    await page.getByRole('heading', { name: 'What shall we work on?' }).waitFor();
    await byId(page, 'composer').fill('what time is it');
    await byId(page, 'composer').press('Enter');
    await page.keyboard.type('and the date');
    await page.waitForFunction(() => location.hash.startsWith('#/sessions/'));
    await page.locator('[data-testid=user-message]', { hasText: 'what time is it' }).waitFor();
    assert.equal(await composerValue(page), 'and the date', 'nothing typed after Enter is lost');
  });

  it('does what each shortcut says, each with its modifier', async () => {
    const page = await freshPage();
    await page.goto(demo.url);
    await startSession(page, 'plan a trip');
    await pending(page).waitFor();
    const session = await page.evaluate(() => location.hash);
    await page.keyboard.press('Control+Shift+O');
    await page.waitForFunction(() => location.hash === '');
    await composerFocused(page);
    await page.keyboard.press('Alt+W');
    await page.waitForFunction((open) => location.hash === open, session);
    await page.waitForFunction(() => document.activeElement?.closest('[data-testid=interrupt]'));
    await page.keyboard.press('Shift+Escape');
    await composerFocused(page);
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press('Control+/');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.getByText('Ctrl+Shift+O').waitFor();
    await shots(page, '88-shortcuts');
    await page.keyboard.press('Escape');
    await help.waitFor({ state: 'detached' });
  });

  it('starts a conversation from an example prompt', async () => {
    const page = await freshPage();
    await page.goto(demo.url);
    await page.getByRole('button', { name: /Sign me up for the newsletter/ }).click();
    await page.waitForFunction(() => location.hash.startsWith('#/sessions/'));
    await page.locator('[data-testid=user-message]', { hasText: 'Sign me up for the newsletter' }).waitFor();
    await pending(page).and(page.locator('[data-kind=form]')).waitFor();
  });

  it('keeps the composer usable during a run: Enter queues the message, sent when the agent has finished', async () => {
    const page = await freshPage();
    await page.goto(demo.url);
    await startSession(page, 'hello');
    await page.locator('[data-testid=assistant-message].streaming').waitFor();
    await composerFocused(page);
    await page.keyboard.type('and then what?');
    const hint = byId(page, 'composer-hint');
    assert.match(await hint.textContent(), /Enter queues it/);
    assert.equal(await page.getByRole('button', { name: 'Queue', exact: true }).isDisabled(), false);
    await shots(page, '82-text-waits');
    await page.keyboard.press('Enter');
    assert.equal(await composerValue(page), '', 'Enter during a run queues the text');
    await page.locator('[data-testid=user-message]', { hasText: 'and then what?' }).waitFor();
    await byId(page, 'queued-messages').waitFor({ state: 'detached' });
    await idle(page);
    await composerFocused(page);

    // Typing on the bare page goes into the composer; shortcuts take a modifier.
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.type('hi');
    await composerFocused(page);
    assert.equal(await composerValue(page), 'hi');
    await page.evaluate(() => document.activeElement?.blur());
    await page.keyboard.press('Control+/');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.getByText('Shortcuts take a modifier key, so they never take a letter you type.').waitFor();
    await page.keyboard.press('Escape');
    assert.equal(await composerValue(page), 'hi', 'a shortcut took nothing from the draft');

    // The rename field is wide enough for the title it edits.
    await page.getByRole('button', { name: 'Rename session' }).click();
    const field = page.getByRole('textbox', { name: 'Session title' });
    await field.fill('A title long enough to need some room');
    await shots(page, '86-rename');
    const fits = await field.evaluate((input) => [input.scrollWidth, input.clientWidth]);
    assert.ok(fits[0] <= fits[1], `the whole title shows in the field: ${fits}`);
    await field.press('Escape');
  });

  it('opens at the newest message, follows the stream, and offers to jump back after scrolling up', async () => {
    const page = await freshPage({ width: 1280, height: 700 });
    await page.goto(scripted.url);
    const session = await startSession(page, 'a long answer please');
    await assistantSaying(page, 'Line 60 of a long answer.');
    await idle(page);
    const atBottom = () => page.evaluate(() => {
      const t = document.querySelector('[data-testid=transcript]');
      return t.scrollHeight - t.scrollTop - t.clientHeight <= 48;
    });
    assert.equal(await atBottom(), true, 'the stream was followed to its end');

    // Reopened, the long session shows its newest message.
    await page.reload();
    await connection(page, 'live');
    await page.getByText('Line 60 of a long answer.').waitFor();
    await page.waitForFunction(() => {
      const t = document.querySelector('[data-testid=transcript]');
      return t.scrollHeight > t.clientHeight && t.scrollHeight - t.scrollTop - t.clientHeight <= 48;
    });

    // Scrolled up, the view stays put while more arrives, and offers to jump back.
    await page.locator('[data-testid=transcript]').evaluate((t) => { t.scrollTop = 0; });
    const jump = page.getByRole('button', { name: /Jump to latest/ });
    await jump.waitFor();
    await page.evaluate((id) => fetch(`/api/sessions/${id}/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: 'once more' }),
    }), session);
    await page.getByRole('button', { name: /Jump to latest · \d+ new/ }).waitFor();
    assert.equal(await page.locator('[data-testid=transcript]').evaluate((t) => t.scrollTop), 0, 'not pulled down');
    await shots(page, '83-jump-to-latest');
    await jump.click();
    await jump.waitFor({ state: 'detached' });
    assert.equal(await atBottom(), true);
    await idle(page);

    // Sending while scrolled up brings the new message into view.
    await page.locator('[data-testid=transcript]').evaluate((t) => { t.scrollTop = 0; });
    await jump.waitFor();
    await byId(page, 'composer').fill('and the third?');
    await byId(page, 'composer').press('Enter');
    await page.locator('[data-testid=user-message]', { hasText: 'and the third?' }).waitFor();
    await jump.waitFor({ state: 'detached' });
    await page.waitForFunction(() => {
      const t = document.querySelector('[data-testid=transcript]');
      return t.scrollHeight - t.scrollTop - t.clientHeight <= 48;
    });
    await idle(page);
  });

  it('deletes a session with a chance to undo it', async () => {
    const page = await freshPage();
    await page.goto(demo.url);
    const id = await startSession(page, 'what time is it');
    await idle(page);
    const item = page.locator(`[data-session-id="${id}"]`);
    await item.getByRole('button', { name: /Delete session/ }).click();
    await item.waitFor({ state: 'detached' });
    const toast = byId(page, 'undo-toast');
    assert.match(await toast.textContent(), /Deleted “what time is it”\./);
    assert.equal(await page.evaluate(() => location.hash), '', 'the open session closed');
    await shots(page, '84-undo-delete');
    await toast.getByRole('button', { name: 'Undo' }).click();
    await item.waitFor();
    await page.waitForFunction((open) => location.hash.endsWith(open), id);
    assert.ok((await listed(page)).includes(id), 'the server still has it');

    await item.getByRole('button', { name: /Delete session/ }).click();
    await toast.waitFor({ state: 'detached', timeout: 15_000 });
    await page.waitForFunction(async (gone) => {
      const sessions = (await (await fetch('/api/sessions')).json()).sessions;
      return !sessions.some((s) => s.id === gone);
    }, id);
  });

  it('says a session cannot be loaded while the server is down, and loads it once it is back', async () => {
    const page = await freshPage();
    await page.goto(scripted.url);
    await page.getByRole('heading', { name: 'What shall we work on?' }).waitFor();
    const [long] = await listed(page);
    await scripted.stop('SIGTERM');
    await page.evaluate((id) => { location.hash = `#/sessions/${id}`; }, long);
    const unavailable = page.getByRole('alert').filter({ hasText: "can't be loaded right now" });
    await unavailable.waitFor();
    assert.equal(await page.getByText('What shall we work on?').count(), 0, 'not shown as empty');
    await shots(page, '85-cannot-load');
    await scripted.restart();
    await page.getByText('Line 60 of a long answer.').first().waitFor();
    await unavailable.waitFor({ state: 'detached' });
  });

  it('raised no page errors', () => {
    assert.deepEqual(errorLists.flat(), []);
  });
});
