// Proves, in headless Chromium against the real binary (`--auth token`, script engine), how
// the page looks (issue 25, items 5 and 7's header): it follows the system's dark
// preference until the person picks a theme in the header; the pick (light, dark or
// system) is reached by keyboard, applies at once, is remembered across a reload and is
// applied by index.html's inline line before the page's code runs (under the real CSP);
// the demo model's hint for developers sits in the dialog the model chip opens, not in the
// header, which stays one line on a desktop and never cuts the chip off. axe-core finds
// nothing serious, contrast included, on every screen in light and in dark: sign-in,
// welcome, the info dialog, a session with Markdown, highlighted code, a tool card, an
// approval, a question and a form, the shortcuts and share dialogs, a shared read-only
// view and the phone's drawer.
// Screenshots: target/browser/9N-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  assistantSaying, byId, connection, headerItem, idle, launchBrowser, moreMenu, newContext,
  pending, say, sessionIdOf, shots, startSession, VIEWPORTS,
} from '../support/browser.mjs';
import { artefactDir, freePort, startTandem, tandemBin, webDir } from '../support/tandem.mjs';

const MARKDOWN = [
  '## Palette check',
  '',
  'Here is **bold**, `inline code`, a [link](https://example.com/docs) and a quote:',
  '',
  '> Quiet colours, in both themes.',
  '',
  '| Theme | Follows |',
  '|---|---|',
  '| System | your computer |',
  '| Dark | you |',
  '',
  '```rust',
  '// Every highlight class once.',
  '#[derive(Debug)]',
  'struct Point { x: i32 }',
  'fn main() { let p = Point { x: 42 }; println!("{:?}", p); }',
  '```',
  '',
  '```html',
  '<a href="/docs" class="link">Docs</a>',
  '```',
].join('\n');

const ask = (args) => ({ toolCalls: [{ name: 'request_input', arguments: args }] });
const TURNS = [
  {
    reasoning: 'Show every colour the page has.',
    text: MARKDOWN,
    toolCalls: [{ name: 'clock', arguments: {} }],
  },
  ask({ prompt: 'Which `theme` do you prefer?', kind: 'choice', choices: ['Light', 'Dark', 'System'] }),
  ask({
    prompt: 'Your details',
    kind: 'form',
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string', title: 'Name', minLength: 1 },
        plan: { type: 'string', title: 'Plan', enum: ['Free', 'Pro'] },
        newsletter: { type: 'boolean', title: 'Send me the newsletter' },
      },
      required: ['name', 'plan'],
    },
  }),
  ask({ prompt: 'Delete the old drafts?', kind: 'confirm' }),
  { text: 'Okay, I kept them.' },
];
const MODEL = `script (${TURNS.length} turns)`;

let tandem;
let browser;
let page;
const errorLists = [];

/** Creates a user with the real CLI; returns their token. */
function addUser(server, name) {
  const out = execFileSync(tandemBin(), ['--database-url', server.databaseUrl, 'users', 'add', name]);
  return out.toString().split('\n').find((line) => line.startsWith('tdm_'));
}

/**
 * Waits for the colour transitions a theme switch starts (buttons fade their background):
 * axe-core must measure the colours the page settles on, not a frame halfway.
 */
function settled(p) {
  return p.evaluate(() => Promise.all(document.getAnimations()
    .filter((animation) => animation instanceof CSSTransition)
    .map((animation) => animation.finished.catch(() => {}))));
}

/** axe-core's serious violations in `colorScheme`, once the page has settled in it. */
async function violationsIn(p, colorScheme) {
  await p.emulateMedia({ colorScheme });
  await settled(p);
  return seriousViolations(p);
}

/** axe-core finds nothing serious in either theme. */
async function accessibleInBoth(p, where) {
  for (const colorScheme of ['light', 'dark']) {
    assert.deepEqual(await violationsIn(p, colorScheme), [], `axe-core on ${where}, ${colorScheme}`);
  }
  await p.emulateMedia({ colorScheme: null });
}

/** Screenshots of `p` in both themes and sizes, and axe-core in both themes. */
async function look(p, name, where) {
  await shots(p, name);
  await accessibleInBoth(p, where);
}

/** Whether the page's background is dark (its relative luminance, roughly). */
async function darkBackground(p) {
  const colour = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [r, g, b] = colour.match(/\d+/g).map(Number);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b < 80;
}

const theme = (p) => p.evaluate(() => document.documentElement.getAttribute('data-theme'));
const stored = (p) => p.evaluate(() => localStorage.getItem('tandem.theme'));
const picker = (p) => p.getByRole('combobox', { name: 'Theme' });

/** Asserts the element is wholly on screen and its text not cut short. */
async function wholeOnScreen(locator, what) {
  const box = await locator.boundingBox();
  const width = locator.page().viewportSize().width;
  assert.ok(box && box.x >= 0 && box.x + box.width <= width, `${what} ends at ${box?.x + box?.width} of ${width}px`);
  const cut = await locator.evaluate((el) => el.scrollWidth > el.clientWidth);
  assert.equal(cut, false, `${what} shows its whole text`);
}

async function pressKey(p, key) {
  await p.evaluate(() => document.activeElement?.blur());
  await p.keyboard.press(key);
}

before(async () => {
  const script = path.join(artefactDir('browser-fixtures'), 'look-script.json');
  writeFileSync(script, JSON.stringify({ turns: TURNS }));
  tandem = await startTandem({
    port: await freePort(),
    args: ['--auth', 'token', '--engine', 'script', '--script', script, '--token-delay-ms', '2',
      '--require-approval', 'clock', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
  const { context, errors } = await newContext(browser, { viewport: VIEWPORTS.desktop });
  errorLists.push(errors);
  page = await context.newPage();
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

describe('light and dark, and a header that fits', () => {
  let link;

  it('follows the system\'s dark preference before anyone picks a theme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(tandem.url);
    await page.getByRole('heading', { name: 'Sign in to Tandem' }).waitFor();
    assert.equal(await theme(page), null, 'no theme picked yet');
    assert.equal(await darkBackground(page), true, 'dark when the system prefers dark');
    await page.emulateMedia({ colorScheme: 'light' });
    assert.equal(await darkBackground(page), false, 'light when it prefers light');
    await page.emulateMedia({ colorScheme: null });
    await look(page, '90-sign-in', 'the sign-in screen');

    await page.getByLabel('API token').fill(addUser(tandem, 'ada'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'What shall we work on?' }).waitFor();
    await look(page, '91-welcome', 'the welcome screen');
  });

  it('switches theme from the header\'s menu by keyboard, and remembers it across a reload', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    // The menu opens from the keyboard; Tab reaches the picker; the arrow keys pick.
    await page.getByTestId('more').locator('summary').focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('more').locator('.more-items').waitFor();
    assert.equal(await picker(page).inputValue(), 'system');
    while (!(await picker(page).evaluate((el) => el === document.activeElement))) {
      await page.keyboard.press('Tab');
    }
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => document.documentElement.getAttribute('data-theme') === 'light');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => document.documentElement.getAttribute('data-theme') === 'dark');
    assert.equal(await darkBackground(page), true, 'dark although the system prefers light');
    assert.equal(await stored(page), 'dark');

    await page.reload();
    await moreMenu(page);
    await picker(page).waitFor();
    assert.equal(await picker(page).inputValue(), 'dark');
    assert.equal(await theme(page), 'dark');
    assert.equal(await darkBackground(page), true);

    await page.emulateMedia({ colorScheme: 'dark' });
    await picker(page).selectOption('light');
    assert.equal(await theme(page), 'light');
    assert.equal(await darkBackground(page), false, 'light although the system prefers dark');
    await picker(page).selectOption('system');
    assert.equal(await theme(page), null);
    assert.equal(await stored(page), null, 'following the system is the default: nothing stored');
    assert.equal(await darkBackground(page), true, 'the system again');
    await page.keyboard.press('Escape');
    await page.emulateMedia({ colorScheme: null });
  });

  it('applies a remembered theme before the page\'s code runs, under the page\'s CSP', async () => {
    const { context } = await newContext(browser);
    await context.addInitScript(() => localStorage.setItem('tandem.theme', 'dark'));
    const bare = await context.newPage();
    const refused = [];
    bare.on('console', (m) => { if (/Content Security Policy/.test(m.text())) refused.push(m.text()); });
    // Without its WASM the page never starts: what shows is index.html and the stylesheet.
    await bare.route('**/*.wasm', (route) => route.abort());
    await bare.goto(tandem.url);
    await bare.waitForLoadState('load');
    assert.equal(await bare.locator('.header, .sign-in').count(), 0, 'the page\'s code did not run');
    assert.equal(await theme(bare), 'dark');
    assert.equal(await darkBackground(bare), true);
    assert.deepEqual(refused, []);
    await context.close();
  });

  it('puts the developer hint in the model chip\'s dialog, not in the header', async () => {
    const demo = await startTandem({
      port: await freePort(),
      args: ['--engine', 'demo', '--token-delay-ms', '2', '--web-dir', webDir()],
    });
    const { context, errors } = await newContext(browser, { viewport: VIEWPORTS.desktop });
    errorLists.push(errors);
    const p = await context.newPage();
    await p.goto(demo.url);
    const chip = p.getByRole('button', { name: 'Demo model' });
    await chip.waitFor();
    assert.equal(await p.locator('header').getByText('TANDEM_ENGINE').count(), 0);
    await chip.click();
    const dialog = p.getByRole('dialog', { name: 'About this server' });
    await dialog.waitFor();
    await dialog.getByText('TANDEM_ENGINE').waitFor();
    await dialog.getByText('demo', { exact: true }).waitFor();
    assert.equal(await dialog.getByRole('button', { name: 'Close' }).evaluate((el) => el === document.activeElement), true,
      'focus moves into the dialog');
    await look(p, '92-info', 'the info dialog');
    await p.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await chip.evaluate((el) => el === document.activeElement), true, 'focus returns to the chip');
    await context.close();
    await demo.stop('SIGKILL');
  });

  it('shows a session in both themes: Markdown, code, a tool card, an approval, questions and a form', async () => {
    await startSession(page, 'Show me the palette');
    const approval = pending(page).and(page.locator('[data-kind=tool_approval]'));
    await approval.waitFor();
    const answer = byId(page, 'assistant-message').first();
    await answer.getByRole('heading', { name: 'Palette check' }).waitFor();
    assert.ok(await answer.locator('.hl-comment, .hl-keyword, .hl-string, .hl-tag').count() >= 4);

    // The header holds one line on a desktop and a phone, and the model chip (in the row
    // or in the menu) is whole on any screen.
    const header = page.locator('header');
    assert.ok((await header.boundingBox()).height < 70, 'the header is one line tall');
    await wholeOnScreen(await headerItem(page, 'model-label'), 'the model chip on a desktop');
    await page.keyboard.press('Escape');
    await page.setViewportSize(VIEWPORTS.phone);
    assert.ok((await header.boundingBox()).height < 70, 'the header is one line tall on a phone');
    await wholeOnScreen(await headerItem(page, 'model-label'), 'the model chip on a phone');
    await moreMenu(page);
    await wholeOnScreen(picker(page), 'the theme picker on a phone');
    await page.keyboard.press('Escape');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the phone`);
    await page.setViewportSize(VIEWPORTS.desktop);
    await answer.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await look(page, '93-approval', 'an answer with code, a tool card and an approval');

    await approval.getByRole('button', { name: 'Approve' }).click();
    const question = pending(page).and(page.locator('[data-kind=choice]'));
    await question.waitFor();
    await page.locator('[data-testid=tool-call][data-tool-name=clock][data-status=done]').waitFor();
    await question.scrollIntoViewIfNeeded();
    await look(page, '94-question', 'a question');

    await question.getByRole('button', { name: 'Dark' }).click();
    const form = pending(page).and(page.locator('[data-kind=form]'));
    await form.waitFor();
    await form.getByLabel('Name').fill('Ada');
    await form.getByLabel('Plan').selectOption('Pro');
    await form.scrollIntoViewIfNeeded();
    await look(page, '95-form', 'a form');

    await form.getByRole('button', { name: 'Submit' }).click();
    const confirm = pending(page).and(page.locator('[data-kind=confirm]'));
    await confirm.waitFor();
    await confirm.getByTestId('interrupt-comment').fill('keep them');
    await confirm.getByRole('button', { name: 'Reject' }).click();
    await assistantSaying(page, 'Okay, I kept them.');
    await idle(page);
    await accessibleInBoth(page, 'the answered cards');
  });

  it('shows the shortcuts and share dialogs in both themes', async () => {
    await pressKey(page, 'Control+/');
    const shortcuts = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await shortcuts.waitFor();
    await look(page, '96-shortcuts', 'the shortcuts dialog');
    await page.keyboard.press('Escape');
    await shortcuts.waitFor({ state: 'detached' });

    await (await headerItem(page, 'share')).click();
    const share = page.getByRole('dialog', { name: 'Share a read-only link' });
    await share.waitFor();
    await byId(page, 'create-link').click();
    link = await byId(page, 'share-link').inputValue();
    await look(page, '97-share', 'the share dialog');
    await share.getByRole('button', { name: 'Close' }).click();
  });

  it('shows a shared read-only view in both themes, with the picker in its header', async () => {
    const { context, errors } = await newContext(browser, { viewport: VIEWPORTS.desktop });
    errorLists.push(errors);
    const viewer = await context.newPage();
    await viewer.goto(link);
    await viewer.getByText('Okay, I kept them.').waitFor();
    // The script has no turn left: the owner's next message ends in an error card.
    await say(page, 'One more thing');
    await byId(viewer, 'run-error').waitFor();
    await picker(viewer).selectOption('dark');
    assert.equal(await darkBackground(viewer), true);
    await picker(viewer).selectOption('system');
    await byId(viewer, 'run-error').scrollIntoViewIfNeeded();
    await look(viewer, '98-shared-view', 'the shared view');
    await context.close();
  });

  it('shows the phone\'s drawer in both themes', async () => {
    await page.setViewportSize(VIEWPORTS.phone);
    await page.getByRole('button', { name: 'Sessions' }).click();
    await page.locator('.sidebar').waitFor({ state: 'visible' });
    await look(page, '99-phone-drawer', 'the phone drawer');
    await page.keyboard.press('Escape');
    await page.setViewportSize(VIEWPORTS.desktop);
  });

  it('raised no page errors', () => {
    assert.deepEqual(errorLists.flat(), []);
  });
});
