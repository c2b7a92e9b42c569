// Headless Chromium for the browser tests (playwright-core, the system's /usr/bin/chromium,
// never a downloaded browser) plus the few page moves every story needs: type a message,
// wait for the socket to be live, wait for the agent to be idle, take a named screenshot.
// All waits are Playwright's own (locators, waitForFunction); timeouts are safety nets.

import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';

import { artefactDir, freePort, startTandem, webDir } from './tandem.mjs';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];
/** Safety net for any single wait in a story. */
export const WAIT_MS = 20_000;

export async function launchBrowser() {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install chromium, or set CHROMIUM_BIN`);
  }
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, headless: true });
}

/**
 * A new context with a desktop viewport (unless `options` say otherwise); page errors are
 * collected in `errors`.
 */
export async function newContext(browser, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  context.setDefaultTimeout(WAIT_MS);
  const errors = [];
  context.on('page', (page) => watchErrors(page, errors));
  return { context, errors };
}

function watchErrors(page, errors) {
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/WebSocket|ERR_CONNECTION_REFUSED|Failed to load resource/.test(m.text())) {
      errors.push(`console: ${m.text()}`);
    }
  });
}

/** Saves `target/browser/<name>.png`. */
export async function shot(page, name) {
  await page.screenshot({ path: path.join(artefactDir('browser'), `${name}.png`) });
}

export const byId = (page, id) => page.getByTestId(id);
export const pending = (page) => page.locator('[data-testid=interrupt][data-state=pending]');

/**
 * Types `text` as a keyboard that has a key for each character does: a `keydown` with the
 * character, then the character into whatever has the focus by then. Playwright types a
 * character it has no key for (`é`, `ж`, `“`) as text alone, with no `keydown`, which no
 * keyboard does; such characters go through the DevTools protocol's key events instead.
 */
export async function typeKeys(page, text) {
  let session;
  for (const character of text) {
    if (/^[\x20-\x7e]$/.test(character)) {
      await page.keyboard.type(character);
      continue;
    }
    session ??= await page.context().newCDPSession(page);
    await session.send('Input.dispatchKeyEvent', {
      type: 'keyDown', key: character, text: character, unmodifiedText: character,
    });
    await session.send('Input.dispatchKeyEvent', { type: 'keyUp', key: character });
  }
  await session?.detach();
}

/**
 * A header item by its test id, where it is now: standing in the header's row, or, when
 * the row has no room for it, in the "More" menu (opened for it). The header moves items
 * between the two as what it shows changes, so this waits until the item is in one place
 * it can be used from.
 */
export async function headerItem(page, id) {
  const where = await page.waitForFunction((testId) => {
    // The header marks its row fitted once a measure at its present width moved nothing
    // (as headerSettled), and names the items its menu holds (built only when it opens).
    const row = document.querySelector('.header-row');
    if (!row || row.dataset.fitted !== 'true' || Number(row.dataset.fittedWidth) !== row.clientWidth) {
      return false;
    }
    const menu = document.querySelector('[data-testid=more]');
    const held = (menu?.dataset.holds ?? '').split(' ').includes(testId);
    if (held && !menu.open) return 'menu';
    const item = document.querySelector(`header [data-testid="${testId}"]`);
    return item && item.getClientRects().length > 0 ? 'shown' : false;
  }, id);
  if ((await where.jsonValue()) === 'menu') await page.getByTestId('more').locator('summary').click();
  const item = page.locator(`header [data-testid="${id}"]`);
  await item.waitFor();
  return item;
}

/**
 * Waits until the header has fitted its items at its present width: a measure moved
 * nothing, and it measured at the width the row has now (right after a resize the last
 * measure was at the old one until the row's resize is observed).
 */
export function headerSettled(page) {
  return page.waitForFunction(() => {
    const row = document.querySelector('.header-row');
    return row?.dataset.fitted === 'true' && Number(row.dataset.fittedWidth) === row.clientWidth;
  });
}

/** Opens the header's "More" menu (⋯) and returns it. */
export async function moreMenu(page) {
  const menu = page.getByTestId('more');
  // Not while the row's items move (the button would move under the click).
  await headerSettled(page);
  if ((await menu.getAttribute('open')) === null) await menu.locator('summary').click();
  // Its entries come with a module fetched the first time it opens.
  await menu.getByRole('button', { name: 'Keyboard shortcuts' }).waitFor();
  return menu;
}

/** Waits for the connection indicator to show `state` (live, reconnecting, …). */
export function connection(page, state) {
  return page.locator(`[data-testid=connection][data-state=${state}]`).waitFor();
}

/** The viewports every page change is looked at in. */
export const VIEWPORTS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } };

/**
 * Saves `target/browser/<name>-<light|dark>-<desktop|phone>.png`: the page as it is now in
 * both colour schemes and both viewports, then puts the page back as it was (light unless
 * the test chose otherwise, its own viewport).
 */
export async function shots(page, name) {
  const viewport = page.viewportSize();
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    for (const [device, size] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(size);
      await page.screenshot({ path: path.join(artefactDir('browser'), `${name}-${colorScheme}-${device}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: null });
  if (viewport) await page.setViewportSize(viewport);
}

/** Types `text` into the composer the way a person does and presses Enter. */
export async function say(page, text) {
  const composer = byId(page, 'composer');
  await composer.click();
  await composer.pressSequentially(text);
  await composer.press('Enter');
}

/**
 * Starts a new conversation the way a person does: "+ New session", then the first
 * message, which creates the session; waits until the new session's socket is live and
 * returns its id.
 */
export async function startSession(page, text) {
  const before = await page.evaluate(() => location.hash);
  await byId(page, 'new-session').click();
  await say(page, text);
  await page.waitForFunction(
    (previous) => location.hash.startsWith('#/sessions/') && location.hash !== previous,
    before,
  );
  const id = await sessionIdOf(page);
  await connection(page, 'live');
  return id;
}

/**
 * Sends `text` from the composer and waits for the run it starts to end: a new answer
 * first, then the composer idle (`idle` alone may look before the run has begun, and
 * pass at once).
 */
export async function sendAndWait(page, text) {
  const answered = '[data-testid=assistant-message]:not(.streaming)';
  const before = await page.locator(answered).count();
  await byId(page, 'composer').fill(text);
  await byId(page, 'composer').press('Enter');
  await page.waitForFunction(
    ([selector, count]) => document.querySelectorAll(selector).length > count,
    [answered, before],
  );
  await idle(page);
}

/** The session id from the page's `#/sessions/<id>` route. */
export async function sessionIdOf(page) {
  await page.waitForFunction(() => location.hash.startsWith('#/sessions/'));
  return page.evaluate(() => location.hash.split('/').pop());
}

/** Waits until no run is active: the stop button is gone and the composer is enabled. */
export async function idle(page) {
  await byId(page, 'stop').waitFor({ state: 'detached' });
  await page.waitForFunction(() => !document.querySelector('[data-testid=composer]')?.disabled);
}

/** The texts of every element with this test id, in page order (hidden text included). */
export function textsOf(page, id) {
  return page.getByTestId(id).evaluateAll((els) => els.map((e) => e.textContent.trim()));
}

/** Waits for an assistant message containing `text`; returns its full text. */
export async function assistantSaying(page, text) {
  const message = page.locator('[data-testid=assistant-message]:not(.streaming)', { hasText: text });
  await message.last().waitFor();
  return message.last().textContent();
}

/**
 * Starts Tandem with `args` (serving the built page) and opens the page in a fresh
 * Chromium: `{tandem, browser, page, errors}`, the page's errors collected in `errors`.
 * `stop()` closes both.
 */
export async function tandemWithPage(args) {
  const tandem = await startTandem({ port: await freePort(), args: [...args, '--web-dir', webDir()] });
  const browser = await launchBrowser();
  const { context, errors } = await newContext(browser);
  const page = await context.newPage();
  await page.goto(tandem.url);
  const stop = async () => {
    await browser.close();
    await tandem.stop('SIGKILL');
  };
  return { tandem, browser, page, errors, stop };
}
