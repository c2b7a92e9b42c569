// Proves, in headless Chromium against the real binary (demo engine, a budget), that the
// header is one row on a desktop and on a phone, whatever it holds (a long title, a plan,
// branches, usage, a budget): the title keeps a readable width, and every item with no room
// in the row is in the "More" menu, from which it works. The sidebar is in order of each
// conversation's last activity, which a rating of an answer is not, and says when that was.
// Screenshots: target/browser/11N-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  byId, headerItem, idle, moreMenu, pending, shots, startSession, tandemWithPage, VIEWPORTS,
} from '../support/browser.mjs';

/** Every optional item of the header, by test id. */
const ITEMS = ['share', 'state-button', 'export', 'budget-left', 'session-usage', 'model-label',
  'conversation-usage'];

let server;
let page;

before(async () => {
  server = await tandemWithPage(['--engine', 'demo', '--token-delay-ms', '2',
    '--budget-daily-usd', '5']);
  page = server.page;
});

after(async () => {
  await server?.stop();
});

/**
 * The header as it stands now, read in one go (a later re-fit cannot tear it): whether it
 * has settled, its rows, its height, the title's widths, and where each of `ids` stands.
 */
function snapshot(ids) {
  const row = document.querySelector('.header-row');
  const title = document.querySelector('.header-title');
  const tops = [...row.children]
    .filter((child) => child.getClientRects().length > 0)
    .map((child) => Math.round(child.getBoundingClientRect().top + child.offsetHeight / 2));
  const held = (document.querySelector('[data-testid=more]')?.dataset.holds ?? '').split(' ');
  const places = Object.fromEntries(ids.map((id) => [id, {
    row: row.querySelectorAll(`:scope > .header-item [data-testid="${id}"]`).length,
    menu: held.includes(id) ? 1 : 0,
  }]));
  return {
    // A measure at the row's present width moved nothing (right after a resize the last
    // measure was at the old width), and the row overflows no more.
    fitted: row.dataset.fitted === 'true' && Number(row.dataset.fittedWidth) === row.clientWidth
      && row.scrollWidth <= row.clientWidth + 1,
    placed: Object.values(places).every(({ row: inRow, menu }) => inRow + menu === 1),
    rows: new Set(tops.map((middle) => Math.round(middle / 8))).size,
    height: document.querySelector('.header').offsetHeight,
    shown: title.clientWidth,
    whole: title.scrollWidth,
    places,
  };
}

/** Asserts the header is one row with a readable title, at `viewport`. */
async function oneRow(viewport) {
  await page.setViewportSize(viewport);
  // The header fits its items once it sees the row's new width, and may move them over a
  // few frames (an item that leaves the row goes to the menu on the next), or again when
  // what an item shows changes (what is left of the budget, read again after a run): it is
  // settled once a measure at the present width changes nothing, the row overflows no
  // more and each item is in one place. The assertions read that one settled state, not
  // parts read at moments apart.
  const settled = await page.waitForFunction(
    `(() => { const found = (${snapshot})(${JSON.stringify(ITEMS)}); return found.fitted && found.placed && found; })()`,
    undefined, { timeout: 10_000 },
  ).then((handle) => handle.jsonValue()).catch(() => null);
  const { rows, height, shown, whole, places } = settled ?? await page.evaluate(snapshot, ITEMS);
  assert.equal(rows, 1, `one row at ${viewport.width} px (${height} px high)`);
  assert.ok(height <= 64, `${height} px high at ${viewport.width} px`);
  assert.ok(shown >= Math.min(whole, 150), `the title shows ${shown} of ${whole} px at ${viewport.width} px`);
  // Every item is somewhere: in the row, or in the menu.
  for (const id of ITEMS) {
    const { row: inRow, menu: inMenu } = places[id];
    assert.ok(inRow + inMenu === 1, `${id} at ${viewport.width} px: ${inRow} in the row, ${inMenu} in the menu`);
  }
}

describe('the header, one row', () => {
  it('holds a long title, a plan, branches, usage and a budget in one row, the rest in More', async () => {
    const session = await startSession(page, 'make a plan');
    await idle(page);
    // Out of the way: on a phone the plan's panel stands over the page.
    await page.getByRole('button', { name: 'Hide the shared state' }).click();
    // A branch: the answer again, in a line of its own.
    await page.getByRole('button', { name: 'Regenerate' }).first().click();
    await page.waitForFunction((first) => !location.hash.endsWith(first), session);
    await idle(page);
    await (await headerItem(page, 'conversation-usage')).waitFor();
    await byId(page, 'rename').click();
    await byId(page, 'title-input').fill('A plan for a long trip to the mountains with friends and family');
    await byId(page, 'title-input').press('Enter');
    await byId(page, 'session-title').filter({ hasText: 'A plan for a long trip' }).waitFor();
    for (const viewport of [VIEWPORTS.desktop, { width: 1100, height: 800 }, { width: 800, height: 800 },
      VIEWPORTS.phone]) {
      await oneRow(viewport);
    }
    await page.setViewportSize(VIEWPORTS.phone);
    await oneRow(VIEWPORTS.phone);
    await moreMenu(page);
    await shots(page, '111-header-more');
    assert.deepEqual(await seriousViolations(page), [], 'axe-core with the menu open');
    await page.keyboard.press('Escape');
    await page.setViewportSize(VIEWPORTS.desktop);
    await shots(page, '110-header');
  });

  it('works each item from the menu', async () => {
    await page.setViewportSize(VIEWPORTS.phone);
    // Share, from wherever it stands.
    await (await headerItem(page, 'share')).click();
    const share = page.getByRole('dialog', { name: 'Share a read-only link' });
    await share.waitFor();
    await share.getByRole('button', { name: 'Close' }).click();
    await share.waitFor({ state: 'detached' });
    // The server's details.
    await (await headerItem(page, 'model-label')).click();
    const about = page.getByRole('dialog', { name: 'About this server' });
    await about.getByText('TANDEM_ENGINE').waitFor();
    await about.getByRole('button', { name: 'Close' }).click();
    // The theme, from the menu.
    const menu = await moreMenu(page);
    await menu.getByRole('combobox', { name: 'Theme' }).selectOption('dark');
    await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
    await menu.getByRole('combobox', { name: 'Theme' }).selectOption('system');
    // The keyboard shortcuts.
    await menu.getByRole('button', { name: 'Keyboard shortcuts' }).click();
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await help.waitFor();
    await help.getByRole('button', { name: 'Close' }).click();
    // What is left of the budget says so in words.
    const budget = await headerItem(page, 'budget-left');
    assert.match(await budget.textContent(), /left/);
    await page.setViewportSize(VIEWPORTS.desktop);
  });
});

describe('the menu, as a run ends', () => {
  let slow;

  before(async () => {
    slow = await tandemWithPage(['--engine', 'demo', '--token-delay-ms', '40']);
  });

  after(async () => {
    await slow?.stop();
  });

  it('stays open with the focus in it: the composer takes the focus only from no menu or dialog', async () => {
    const { page: view } = slow;
    await startSession(view, 'make a plan');
    const menu = await moreMenu(view);
    assert.equal(await byId(view, 'stop').count(), 1, 'the run still works as the menu opens');
    await idle(view);
    // The run's end gives the composer the focus, unless the person is in a menu.
    await view.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    assert.notEqual(await menu.getAttribute('open'), null, 'the menu is still open');
    assert.equal(
      await view.evaluate(() => Boolean(document.activeElement?.closest('[data-testid=more]'))),
      true,
      'the focus is still in the menu',
    );
    await menu.getByRole('button', { name: 'Keyboard shortcuts' }).click();
    await view.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
  });
});

describe('the session list', () => {
  it('keeps its order when an answer is rated, and says when each conversation last moved', async () => {
    await startSession(page, 'what time is it');
    await idle(page);
    const older = await page.evaluate(() => location.hash.split('/').pop());
    await startSession(page, 'hello');
    await idle(page);
    const order = () => byId(page, 'session-item').evaluateAll(
      (items) => items.map((item) => item.dataset.sessionId),
    );
    const before = await order();
    assert.ok(before.indexOf(older) > 0, 'the older conversation is below the newer');
    const times = await byId(page, 'session-item').locator('.session-time').allTextContents();
    await page.goto(`${server.tandem.url}/#/sessions/${older}`);
    const answer = page.locator('.answer').filter({ hasText: "It's" }).last();
    await answer.getByRole('button', { name: 'Good answer' }).click();
    await answer.locator('button[aria-label="Good answer"][aria-pressed="true"]').waitFor();
    // The rating is in the log; the list, live, moved nothing.
    await page.reload();
    await byId(page, 'session-item').first().waitFor();
    assert.deepEqual(await order(), before, 'a rating is not activity of the conversation');
    assert.deepEqual(
      await byId(page, 'session-item').locator('.session-time').allTextContents(),
      times,
    );
    // A message is: the conversation comes first, with its time.
    await page.getByTestId('composer').fill('and the date?');
    await page.getByTestId('composer').press('Enter');
    await idle(page);
    await page.waitForFunction((first) => {
      const top = document.querySelector('[data-testid=session-item]');
      return top?.dataset.sessionId === first;
    }, older);
    assert.equal(await pending(page).count(), 0);
  });
});
