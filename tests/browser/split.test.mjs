// Proves, in headless Chromium against the real binary, that the page's rarely opened panels
// are not part of its first load (scripts/build.sh splits them into their own WASM modules):
// opening the page fetches the main module and its JS only; the controls of a question that
// waits for the person come once a run starts (it may ask); the Share dialog, the server's
// details, the keyboard shortcuts and the shared state each fetch their module the first
// time they open (Share's as soon as the pointer is over its button), and work as before; a
// module that cannot be fetched (the server was updated, or is gone) leaves the panel closed
// with a notice that says to reload, and the next try fetches it again. Driven by roles and
// visible text. Screenshots: target/browser/100-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  byId, headerItem, idle, launchBrowser, newContext, pending, shots, startSession,
} from '../support/browser.mjs';
import { freePort, startTandem, webDir } from '../support/tandem.mjs';

let tandem;
let browser;
let page;
let errors;
/** The page's own modules fetched so far, by file name, in order. */
const fetched = [];

before(async () => {
  tandem = await startTandem({ port: await freePort(), args: ['--engine', 'demo', '--web-dir', webDir()] });
  browser = await launchBrowser();
  let context;
  ({ context, errors } = await newContext(browser));
  page = await context.newPage();
  page.on('request', (request) => {
    const file = /\/pkg-[0-9a-f]+\/([^/?]+)$/.exec(new URL(request.url()).pathname);
    if (file) fetched.push(file[1]);
  });
  await page.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

const panelModules = () => fetched.filter((file) => /^split_.*\.wasm$/.test(file));
const fetchedOnce = (file) => fetched.filter((name) => name === file).length;

describe('the panels a session opens now and then load on first use', () => {
  it('opens the page on the main module alone; a run brings the question controls', async () => {
    await page.getByRole('textbox', { name: 'Message' }).waitFor();
    assert.deepEqual([...new Set(fetched)].sort(), ['__wasm_split.js', 'tandem-web.js', 'tandem-web_bg.wasm']);
    const controls = page.waitForResponse((response) => response.url().endsWith('/split_interrupt_controls.wasm'));
    await startSession(page, 'Hello');
    await controls;
    await idle(page);
    assert.deepEqual(panelModules(), ['split_interrupt_controls.wasm'], 'no panel module before a panel opens');
  });

  it('answers a question with the controls from their module', async () => {
    await startSession(page, 'ask me a question');
    const card = pending(page);
    await card.getByText("What's your name?").waitFor();
    await card.getByPlaceholder('Type your answer…').fill('Ada');
    await card.getByRole('button', { name: 'Submit' }).click();
    await page.getByText('Answered: Ada').waitFor();
    await page.getByText('Nice to meet you, Ada!').waitFor();
    await idle(page);
    assert.equal(fetchedOnce('split_interrupt_controls.wasm'), 1, 'a module is fetched once for the page’s life');
  });

  it('fetches the Share dialog’s module when the pointer comes over its button, once', async () => {
    const share = await headerItem(page, 'share');
    // Listening before the hover: the module may be in before a later listener would start.
    const loaded = page.waitForResponse((response) => response.url().endsWith('/split_share_dialog.wasm'));
    await share.hover();
    await loaded;
    await share.click();
    const dialog = page.getByRole('dialog', { name: 'Share a read-only link' });
    await dialog.getByRole('button', { name: 'Create link' }).waitFor();
    await shots(page, '100-share-loaded');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    await share.click();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Close' }).click();
    assert.equal(fetchedOnce('split_share_dialog.wasm'), 1, 'a module is fetched once for the page’s life');
  });

  it('fetches the shortcuts list’s module on Ctrl+/', async () => {
    assert.equal(fetchedOnce('split_shortcuts_dialog.wasm'), 0);
    await page.keyboard.press('Control+/');
    const list = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await list.getByText('Jump to the question waiting for you').waitFor();
    assert.equal(fetchedOnce('split_shortcuts_dialog.wasm'), 1);
    await list.getByRole('button', { name: 'Close' }).click();
    await list.waitFor({ state: 'detached' });
  });

  it('says to reload when a module cannot be fetched, and fetches it again on the next try', async () => {
    // As after a server update: this page's modules are gone.
    await page.route('**/split_info_dialog.wasm', (route) => route.fulfill({ status: 404, body: 'Not Found' }));
    await (await headerItem(page, 'model-label')).click();
    const notice = byId(page, 'notice').filter({ hasText: 'This part of the page could not be loaded' });
    await notice.waitFor();
    assert.match(await notice.textContent(), /Reload the page/);
    assert.equal(await page.getByRole('dialog', { name: 'About this server' }).count(), 0, 'no half-made dialog');
    await shots(page, '100-module-missing');
    await notice.getByRole('button', { name: 'Dismiss' }).click();
    const failed = fetchedOnce('split_info_dialog.wasm');
    assert.ok(failed >= 1);

    await page.unroute('**/split_info_dialog.wasm');
    await (await headerItem(page, 'model-label')).click();
    const dialog = page.getByRole('dialog', { name: 'About this server' });
    await dialog.getByText('TANDEM_ENGINE').waitFor();
    assert.ok(fetchedOnce('split_info_dialog.wasm') > failed, 'the failed fetch was not kept');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
    // The only errors are the two the split loader logs for the failed fetch.
    const unexpected = errors.filter((error) => !/split_info_dialog|WebAssembly|Failed to load/.test(error));
    assert.deepEqual(unexpected, []);
    errors.length = 0;
  });

  it('fetches the shared state’s module when the state first holds something', async () => {
    assert.equal(fetchedOnce('split_state_panel.wasm'), 0);
    await startSession(page, 'make a plan');
    const panel = page.getByRole('complementary', { name: 'Shared state' });
    await panel.getByRole('region', { name: 'Plan' }).getByText('3 of 3 done').waitFor();
    await idle(page);
    assert.equal(fetchedOnce('split_state_panel.wasm'), 1);
    await shots(page, '100-state-loaded');
  });

  it('raised no page errors', () => {
    assert.deepEqual(errors, []);
  });
});
