// Proves, in headless Chromium against the real binary (demo engine, built page), issue 25's
// items on answers, approvals and questions as a person meets them: an answer's single line
// breaks show as lines; Copy puts a whole answer's Markdown on the clipboard; after Stop,
// Continue (on the stopped answer only, only while nothing runs) goes on with that answer
// in place (no message of the person's, one answer, one usage line); an approval card scrolls into view when it appears, its tool card says it waits for
// the person, its prompt's Markdown renders; a rejection is a warning, not a success; a form's
// answer reads in the schema's titles and Yes/No; and an answer cut off by a crash (the
// server killed mid-answer and restarted) is marked "Interrupted by a restart", collapsed,
// with the recovered run's answer as the answer. axe-core checks each screen in both colour
// schemes. Screenshots: target/browser/7N-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  assistantSaying, byId, connection, idle, launchBrowser, newContext, pending, say,
  sessionIdOf, shots, VIEWPORTS,
} from '../support/browser.mjs';
import { freePort, startTandem, webDir } from '../support/tandem.mjs';

/** The start of the demo's reply to anything it does not recognise, and its last line. */
const GREETING = "Hi! I'm Tandem's offline demo model.";
const GREETING_END = '"ask me a question" — I ask you for some text';

let tandem;
let browser;
let errors;
let page;

const transcript = () => byId(page, 'transcript');
const answers = () => byId(page, 'assistant-message');
const lastAnswer = () => page.locator('.answer').last();
const continueButton = () => page.getByRole('button', { name: 'Continue', exact: true });

/** Asserts axe-core finds nothing serious or critical, in the light and the dark scheme. */
async function accessible(where) {
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    assert.deepEqual(await seriousViolations(page), [], `axe-core on ${where} (${colorScheme})`);
  }
  await page.emulateMedia({ colorScheme: null });
}

/** Starts a fresh session and says `text` in it; returns the session's id. */
async function newSessionSaying(text) {
  await byId(page, 'new-session').click();
  await page.getByTestId('user-message').first().waitFor({ state: 'detached' });
  await say(page, text);
  const id = await sessionIdOf(page);
  await connection(page, 'live');
  return id;
}

/** Resolves once `locator` lies wholly inside the transcript's visible area. */
async function inView(locator) {
  const element = await locator.elementHandle();
  await page.waitForFunction((el) => {
    const box = el.getBoundingClientRect();
    const view = document.querySelector('[data-testid=transcript]').getBoundingClientRect();
    return box.height > 0 && box.top >= view.top && box.bottom <= view.bottom;
  }, element);
}

/** The computed colour of an element, and of one of the theme's colour variables. */
const colorOf = (locator) => locator.evaluate((el) => getComputedStyle(el).color);
const themeColor = (name) => page.evaluate((variable) => {
  const probe = document.createElement('span');
  probe.style.color = `var(${variable})`;
  document.body.append(probe);
  const color = getComputedStyle(probe).color;
  probe.remove();
  return color;
}, name);

before(async () => {
  tandem = await startTandem({
    port: await freePort(),
    args: ['--engine', 'demo', '--token-delay-ms', '25', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
  let context;
  // The desktop size shots() uses first, so its first picture is the page as tested.
  ({ context, errors } = await newContext(browser, {
    viewport: VIEWPORTS.desktop, permissions: ['clipboard-read', 'clipboard-write'],
  }));
  page = await context.newPage();
  await page.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

describe('answers, approvals and questions (issue 25)', () => {
  it('shows an answer\'s single line breaks as lines and copies it whole as Markdown', async () => {
    await newSessionSaying('hello');
    await assistantSaying(page, GREETING_END);
    await idle(page);
    // What a person sees: each suggestion on a line of its own.
    const seen = await answers().last().evaluate((el) => el.innerText);
    const lines = seen.split('\n').map((line) => line.trim()).filter(Boolean);
    assert.equal(lines[0], `${GREETING} I can't understand free text, but I can show you how Tandem works. Try one of these:`);
    assert.equal(lines.length, 10, seen);
    assert.ok(lines.slice(1).every((line) => line.startsWith('• ')), seen);

    await lastAnswer().getByRole('button', { name: 'Copy answer' }).click();
    await lastAnswer().getByRole('button', { name: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.ok(copied.startsWith(`${GREETING} I can't`), copied);
    assert.match(copied, /Try one of these:\n• "what is 12 \* \(3 \+ 4\)"/, 'the Markdown source, newlines and all');
    assert.ok(copied.trimEnd().endsWith(GREETING_END), copied);
    await lastAnswer().getByRole('button', { name: 'Copy answer' }).waitFor();
    assert.equal(await continueButton().count(), 0, 'a finished run offers no Continue');
    await shots(page, '71-lines-and-copy');
    await accessible('an answer with its actions');
  });

  it('after Stop offers Continue on the stopped answer only, which goes on with that answer in place', async () => {
    await say(page, 'hello');
    await page.locator('[data-testid=assistant-message].streaming', { hasText: 'Hi!' }).waitFor();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByText('Run stopped').waitFor();
    await idle(page);
    await continueButton().waitFor();
    assert.equal(await continueButton().count(), 1, 'only on the last answer of the stopped run');
    assert.equal(await lastAnswer().getByRole('button', { name: 'Continue' }).count(), 1);
    assert.doesNotMatch(await answers().last().textContent(), /ask me a question/, 'it was cut short');
    await shots(page, '72-continue-offered');
    await accessible('a stopped answer offering Continue');

    const people = await byId(page, 'user-message').count();
    const said = await answers().count();
    const usage = await byId(page, 'run-usage').count();
    const stoppedText = await answers().last().evaluate((el) => el.innerText);
    await continueButton().click();
    await continueButton().waitFor({ state: 'detached' });
    await assistantSaying(page, GREETING_END);
    await idle(page);
    // One answer, written on in place: no message of the person's, no second bubble, no
    // "Run stopped" in between, one usage line for the whole answer.
    assert.equal(await byId(page, 'user-message').count(), people, 'no message of the person\'s');
    assert.equal(await answers().count(), said, 'the continuation joined the stopped answer');
    const whole = await answers().last().evaluate((el) => el.innerText);
    assert.ok(whole.startsWith(stoppedText.trimEnd().slice(0, 40)), whole);
    assert.equal(whole.split(GREETING).length, 2, `said once, not again: ${whole}`);
    assert.equal(await page.getByText('Run stopped').count(), 0, 'the stop mark is gone');
    // The stopped call's usage (when its model reported any) is counted in the one line.
    assert.ok(await byId(page, 'run-usage').count() <= usage + 1, 'one usage line for the answer');
    assert.equal(await continueButton().count(), 0, 'the continued run finished: nothing to continue');
    await shots(page, '73-continued');
  });

  it('brings an approval into view, says its call waits, renders its prompt; a rejection warns', async () => {
    // The person reads the top of a long session; the agent's request lands far below.
    await transcript().evaluate((el) => { el.scrollTop = 0; });
    await say(page, 'save a note that the demo works');
    const card = pending(page).and(page.locator('[data-kind=tool_approval]'));
    await card.waitFor();
    await inView(card.getByRole('button', { name: 'Reject' }));
    await inView(card.getByRole('button', { name: 'Approve' }));
    const toolCard = page.locator('[data-testid=tool-call][data-tool-name=write_file]');
    await toolCard.getByText('waiting for your approval').waitFor();
    assert.equal(await toolCard.getByText('running…').count(), 0);
    const prompt = card.getByTestId('interrupt-prompt');
    assert.equal(await prompt.textContent(), 'Allow write_file to run?', 'no literal backticks');
    assert.equal(await prompt.locator('code').textContent(), 'write_file');
    await shots(page, '74-approval-in-view');
    await accessible('a pending approval');

    await card.getByPlaceholder('Reason (optional)').fill('not now');
    await card.getByRole('button', { name: 'Reject' }).click();
    const answered = page.locator('[data-testid=interrupt][data-kind=tool_approval][data-state=answered]');
    const verdict = answered.getByTestId('interrupt-answer');
    await verdict.getByText('Rejected: not now').waitFor();
    assert.equal(await colorOf(verdict), await themeColor('--amber'), 'a warning');
    assert.notEqual(await colorOf(verdict), await themeColor('--green'), 'not a success');
    await toolCard.getByText('rejected', { exact: true }).waitFor();
    await assistantSaying(page, "I didn't save it");
    await idle(page);
    await shots(page, '75-rejected');
    await accessible('a rejected approval');
  });

  it('sums a form up in its titles and Yes/No, and shows a rejected confirm as a warning', async () => {
    await say(page, 'sign me up');
    const form = pending(page).and(page.locator('[data-kind=form]'));
    await form.waitFor();
    await form.getByLabel('Name').fill('Ada Lovelace');
    await form.getByLabel('Email').fill('ada@example.com');
    await form.getByLabel('Plan').selectOption({ label: 'Pro' });
    await form.getByLabel('Send me the newsletter').check();
    await form.getByRole('button', { name: 'Submit' }).click();
    const summary = page.locator('[data-testid=interrupt][data-kind=form][data-state=answered]')
      .getByTestId('interrupt-answer');
    await summary.waitFor();
    assert.equal((await summary.textContent()).trim(),
      'Answered: Name: Ada Lovelace, Email: ada@example.com, Plan: Pro, Send me the newsletter: Yes');
    assert.equal(await colorOf(summary), await themeColor('--green'), 'an answer is a success');
    await assistantSaying(page, "You're signed up");
    await idle(page);

    await say(page, 'delete my old files');
    const confirm = pending(page).and(page.locator('[data-kind=confirm]'));
    await confirm.waitFor();
    await confirm.getByPlaceholder('Comment (optional)').fill('keep them until Friday');
    await confirm.getByRole('button', { name: 'Reject' }).click();
    const rejected = page.locator('[data-testid=interrupt][data-kind=confirm][data-state=answered]')
      .getByTestId('interrupt-answer');
    await rejected.getByText('Rejected: keep them until Friday').waitFor();
    assert.equal(await colorOf(rejected), await themeColor('--amber'), 'a warning, not green');
    await assistantSaying(page, 'untouched');
    await idle(page);
    await shots(page, '76-form-and-confirm');
    await accessible('answered form and confirm');
  });

  it('marks an answer a crash cut off, collapsed, and shows the recovered run\'s answer', async () => {
    const id = await newSessionSaying('hello');
    await page.locator('[data-testid=assistant-message].streaming', { hasText: 'Hi!' }).waitFor();
    await tandem.stop('SIGKILL');
    await connection(page, 'reconnecting');
    await tandem.restart();
    await connection(page, 'live');

    const cut = page.locator('details', { hasText: 'Interrupted by a restart' });
    await cut.waitFor();
    await assistantSaying(page, GREETING_END);
    await idle(page);
    assert.equal(await cut.evaluate((el) => el.open), false, 'collapsed');
    // One answer to read: the continuation. The cut-off part is not a second answer.
    assert.equal(await answers().count(), 1);
    assert.equal(await page.getByText(GREETING_END).count(), 1);
    assert.ok((await answers().textContent()).startsWith(GREETING));
    await shots(page, '77-restart-marked');
    await accessible('an answer interrupted by a restart');

    // The same from the log alone, after a reload.
    await page.reload();
    await connection(page, 'live');
    assert.equal(await sessionIdOf(page), id);
    await cut.waitFor();
    assert.equal(await answers().count(), 1);
    await cut.getByText('Interrupted by a restart').click();
    const partial = cut.locator('.bubble');
    await partial.waitFor();
    assert.match(await partial.textContent(), /^Hi!/);
    assert.doesNotMatch(await partial.textContent(), /ask me a question/, 'only what was written before the crash');
    await shots(page, '78-restart-expanded');
    await accessible('an interrupted answer, expanded');
  });

  it('raised no page errors', () => {
    assert.deepEqual(errors, []);
  });
});
