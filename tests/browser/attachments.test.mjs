// Proves, in headless Chromium against the real binary on the demo model, that files and
// images go in the way a person puts them in: the paperclip opens the file picker (a new
// conversation's first message uploads them once it creates the session), an image pasted
// into the message box and a PDF dropped on it upload with a chip each (name, size,
// progress, remove), a message of files alone is sent, the demo model says what it
// received, and the transcript shows images as thumbnails that open full size and other
// files as downloads, all from the same origin. Driven by roles and visible text; axe-core
// checks the screen in both colour schemes. Screenshots:
// target/browser/6N-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { seriousViolations } from '../support/axe.mjs';
import {
  assistantSaying, byId, connection, idle, launchBrowser, newContext, sessionIdOf, shots,
} from '../support/browser.mjs';
import { freePort, startTandem, webDir } from '../support/tandem.mjs';

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../fixtures/attachments');
const PICTURE = path.join(FIXTURES, 'picture.png');
const PDF = path.join(FIXTURES, 'three_pages.pdf');

let tandem;
let browser;
let page;
const errors = [];

before(async () => {
  tandem = await startTandem({
    port: await freePort(),
    // Slow enough (a few seconds an answer) for a message to be queued while one streams.
    args: ['--engine', 'demo', '--token-delay-ms', '60', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
  let context;
  let contextErrors;
  ({ context, errors: contextErrors } = await newContext(browser));
  errors.push(contextErrors);
  page = await context.newPage();
  await page.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

const composer = () => page.getByRole('textbox', { name: 'Message' });
const tray = () => page.getByRole('list', { name: 'Attached files' }).first();
const chip = (name) => byId(page, 'attach-chip').filter({ hasText: name });

/** Puts files into the page as a paste into the message box or a drop on the composer. */
async function hand(kind, files) {
  const payload = files.map(([name, type, file]) => ({ name, type, bytes: [...readFileSync(file)] }));
  await page.evaluate(({ kind, payload }) => {
    const data = new DataTransfer();
    for (const { name, type, bytes } of payload) {
      data.items.add(new File([new Uint8Array(bytes)], name, { type }));
    }
    if (kind === 'paste') {
      const box = document.querySelector('[data-testid=composer]');
      box.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
    } else {
      const zone = document.querySelector('.composer');
      zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }));
      zone.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
    }
  }, { kind, payload });
}

describe('files and images in the conversation', () => {
  it('attaches a picture with the paperclip to a new conversation, and the model describes it', async () => {
    await byId(page, 'new-session').click();
    await page.getByRole('button', { name: 'Attach files' }).waitFor();
    await byId(page, 'attach-input').setInputFiles(PICTURE);
    await chip('picture.png').getByText('Sent with the message').waitFor();
    await composer().fill('What is this?');
    await composer().press('Enter');
    await sessionIdOf(page);
    await connection(page, 'live');
    await assistantSaying(page, 'an image, 640×480 PNG');
    await idle(page);
    assert.equal(await byId(page, 'attach-chip').count(), 0, 'the tray empties once sent');
    const thumbnail = page.getByRole('img', { name: 'picture.png' });
    await thumbnail.waitFor();
    await page.waitForFunction(() => document.querySelector('.attached-image img')?.naturalWidth === 640);
    const link = page.getByRole('link', { name: 'picture.png' });
    assert.equal(await link.getAttribute('target'), '_blank');
    const full = await page.request.get(new URL(await link.getAttribute('href'), tandem.url).href);
    assert.equal(full.status(), 200);
    assert.equal(full.headers()['content-type'], 'image/png');
  });

  it('takes a pasted image and a dropped PDF, shows their upload, and sends files alone', async () => {
    await hand('paste', [['pasted.png', 'image/png', PICTURE]]);
    await hand('drop', [['report.pdf', 'application/pdf', PDF], ['extra.pdf', 'application/pdf', PDF]]);
    await tray().waitFor();
    await chip('pasted.png').getByText('18 KB').waitFor();
    await chip('report.pdf').getByText('1 KB').waitFor();
    await chip('extra.pdf').getByRole('button', { name: 'Remove extra.pdf' }).click();
    await chip('extra.pdf').waitFor({ state: 'detached' });
    await shots(page, '61-attach-tray');
    for (const colorScheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousViolations(page), [], `axe-core, ${colorScheme}`);
    }
    await page.emulateMedia({ colorScheme: null });

    assert.equal(await composer().inputValue(), '');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    const said = await assistantSaying(page, 'a PDF, 3 pages');
    assert.match(said, /pasted\.png: an image, 640×480 PNG/);
    assert.doesNotMatch(said, /extra\.pdf/);
    await idle(page);
    const download = page.getByRole('link', { name: /report\.pdf \(1 KB\)/ });
    assert.equal(await download.getAttribute('download'), 'report.pdf');
    await shots(page, '62-attached-in-transcript');
    for (const colorScheme of ['light', 'dark']) {
      await page.emulateMedia({ colorScheme });
      assert.deepEqual(await seriousViolations(page), [], `axe-core, ${colorScheme}`);
    }
    await page.emulateMedia({ colorScheme: null });
  });

  it('opens images in a viewer over the page: zoom, next and previous, download, Escape', async () => {
    const thumbnails = page.locator('[data-testid=transcript] a.attached-image');
    const count = await thumbnails.count();
    assert.ok(count >= 2, `${count} images in the session`);
    await thumbnails.first().click();
    const viewer = page.getByRole('dialog', { name: 'Image: picture.png' });
    await viewer.waitFor();
    assert.equal(await byId(page, 'viewer-place').textContent(), `1 of ${count}`);
    assert.equal(page.url().includes('/api/attachments/'), false, 'the raw file did not open');
    const image = viewer.getByRole('img', { name: 'picture.png' });
    const fitted = await image.evaluate((img) => img.getBoundingClientRect().width);
    await viewer.getByRole('button', { name: 'Zoom in' }).click();
    await viewer.getByRole('button', { name: 'Zoom in' }).click();
    await page.waitForFunction((before) => {
      const img = document.querySelector('[data-testid=image-viewer] img');
      return img.getBoundingClientRect().width > before;
    }, fitted);
    await shots(page, '63-image-viewer');
    assert.deepEqual(await seriousViolations(page), [], 'axe-core on the viewer');
    await page.keyboard.press('ArrowRight');
    await page.getByRole('dialog', { name: 'Image: pasted.png' }).waitFor();
    assert.equal(await byId(page, 'viewer-place').textContent(), `2 of ${count}`);
    await page.keyboard.press('ArrowLeft');
    await viewer.waitFor();
    const download = viewer.getByRole('link', { name: 'Download' });
    assert.equal(await download.getAttribute('download'), 'picture.png');
    await page.keyboard.press('Escape');
    await viewer.waitFor({ state: 'detached' });
    await page.waitForFunction(() => document.activeElement?.classList.contains('attached-image'));
  });

  it('shows the files of a message queued while the agent answers', async () => {
    await hand('paste', [['first.png', 'image/png', PICTURE]]);
    await chip('first.png').getByText('18 KB').waitFor();
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await byId(page, 'stop').waitFor();
    await hand('drop', [['later.pdf', 'application/pdf', PDF]]);
    await chip('later.pdf').getByText('1 KB').waitFor();
    await composer().press('Enter');
    const queued = byId(page, 'queued-message');
    await queued.getByRole('link', { name: /later\.pdf \(1 KB\)/ }).waitFor();
    await assistantSaying(page, 'later.pdf: a PDF, 3 pages');
    await idle(page);
    await queued.waitFor({ state: 'detached' });
    assert.deepEqual(errors.flat(), []);
  });
});
