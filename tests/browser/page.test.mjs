// Proves, in headless Chromium against the real binary (script engine, a price table), what a
// person expects of a chat page: the answer's Markdown rendered while it streams (a table, a
// highlighted code block with a working Copy button, safe links) with the model's HTML left
// inert; what each run used and cost; a notification and a counted tab title when a hidden
// tab is needed; keyboard shortcuts; rename, search and export; a read-only share link whose
// hidden reasoning never reaches the viewer; the phone layout; the reconnecting and caught-up
// states; a model picked for a session, kept across a reload. axe-core checks every screen
// for serious or critical violations.
// Screenshots: target/browser/6N-*.png.

import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { seriousViolations } from '../support/axe.mjs';
import {
  assistantSaying, byId, connection, idle, launchBrowser, newContext, pending, say,
  headerItem, sessionIdOf, shot, startSession,
} from '../support/browser.mjs';
import { artefactDir, freePort, startTandem, webDir } from '../support/tandem.mjs';

const MARKDOWN = [
  '# Trip report',
  '',
  'Here is **bold**, a [safe link](https://example.com/guide) and [a trap](javascript:alert(1)).',
  '',
  '| City | Days |',
  '|---|--:|',
  '| Lisbon | 3 |',
  '| Porto | 2 |',
  '',
  '| Option | Runs on | Cost per month | Notes |',
  '|---|---|---|---|',
  '| Kubernetes | any cloud provider | from seventy dollars | orchestration everywhere |',
  '| Serverless | managed platforms | pay per invocation | cold starts sometimes |',
  '',
  '- [x] book flights',
  '- [ ] pack',
  '',
  '```rust',
  'fn main() {',
  '    println!("Lisbon");',
  '}',
  '```',
  '',
  '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2"> stays text.',
].join('\n');

const usage = (input, output) => ({ model: 'tandem-test', inputTokens: input, outputTokens: output });
const TURNS = [
  { reasoning: 'The secret plan: tables first.', text: MARKDOWN, usage: usage(1200, 300) },
  {
    toolCalls: [{ name: 'request_input', arguments: { prompt: 'Which city next?', kind: 'text' } }],
    usage: usage(1500, 20),
  },
  { text: 'Porto it is.', usage: usage(1600, 10) },
];

let tandem;
let browser;
let page;
let context;
const errorLists = [];

/** Asserts axe-core finds nothing serious or critical on the page as it is now. */
async function accessible(where) {
  assert.deepEqual(await seriousViolations(page), [], `axe-core on ${where}`);
}

async function pressKey(key) {
  await page.evaluate(() => document.activeElement?.blur());
  await page.keyboard.press(key);
}

before(async () => {
  const dir = artefactDir('browser-fixtures');
  const script = path.join(dir, 'page-script.json');
  writeFileSync(script, JSON.stringify({ turns: TURNS }));
  const prices = path.join(dir, 'page-prices.json');
  writeFileSync(prices, JSON.stringify({ 'tandem-test': { input: 2, output: 10 } }));
  tandem = await startTandem({
    port: await freePort(),
    args: ['--engine', 'script', '--script', script, '--prices', prices,
      '--token-delay-ms', '15', '--models', 'tandem-alt', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
  let errors;
  ({ context, errors } = await newContext(browser, {
    permissions: ['clipboard-read', 'clipboard-write', 'notifications'],
  }));
  errorLists.push(errors);
  // The test controls whether the tab counts as hidden, and records notifications.
  await context.addInitScript(() => {
    window.__hidden = false;
    Object.defineProperty(Document.prototype, 'hidden', { get: () => window.__hidden });
    window.__notes = [];
    const Real = window.Notification;
    class Recorded extends Real {
      constructor(title, options) {
        super(title, options);
        window.__notes.push({ title, body: options?.body, tag: options?.tag });
      }
    }
    Object.defineProperty(Recorded, 'permission', { get: () => Real.permission });
    Recorded.requestPermission = (...args) => Real.requestPermission(...args);
    window.Notification = Recorded;
  });
  page = await context.newPage();
  await page.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

describe('the page people expect of a chat product', () => {
  let firstSession;

  it('renders Markdown while it streams; the model\'s HTML stays inert', async () => {
    // The code block is already a highlighted block while the answer still streams. An
    // observer records it as it happens (polling could miss a state that lasts 200 ms on a
    // loaded machine).
    await page.evaluate(() => {
      window.__codeWhileStreaming = false;
      const observer = new MutationObserver(() => {
        if (document.querySelector('.bubble-assistant.streaming .code-block')) {
          window.__codeWhileStreaming = true;
          observer.disconnect();
        }
      });
      observer.observe(document.body, { subtree: true, childList: true, attributes: true, characterData: true });
    });
    firstSession = await startSession(page, 'Write the trip report');
    await assistantSaying(page, 'stays text');
    await page.locator('.bubble-assistant:not(.streaming) .code-block').waitFor();
    assert.equal(await page.evaluate(() => window.__codeWhileStreaming), true,
      'the code block rendered while the answer streamed');
    const answer = byId(page, 'assistant-message').last();
    await answer.getByRole('heading', { name: 'Trip report' }).waitFor();
    assert.equal(await answer.locator('strong').textContent(), 'bold');
    const table = answer.getByRole('table').first();
    assert.deepEqual(await table.getByRole('cell').allTextContents(), ['Lisbon', '3', 'Porto', '2']);
    assert.equal(await answer.getByRole('checkbox', { name: 'done', exact: true }).isChecked(), true);
    assert.equal(await answer.locator('.code-lang').textContent(), 'rust');
    assert.equal(await answer.locator('.hl-keyword', { hasText: 'fn' }).count(), 1);

    const link = answer.getByRole('link', { name: 'safe link' });
    assert.equal(await link.getAttribute('href'), 'https://example.com/guide');
    assert.equal(await link.getAttribute('target'), '_blank');
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
    assert.equal(await answer.getByRole('link', { name: 'a trap' }).count(), 0);
    assert.match(await answer.locator('.link-refused').textContent(), /a trap/);

    const text = await answer.textContent();
    assert.match(text, /<script>window.__pwned = 1<\/script><img src=x onerror="window.__pwned = 2"> stays text\./);
    assert.equal(await answer.locator('script, img, iframe').count(), 0);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);

    await answer.getByRole('button', { name: 'Copy' }).click();
    await answer.getByRole('button', { name: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied.trimEnd(), 'fn main() {\n    println!("Lisbon");\n}');
    await idle(page);
    await shot(page, '61-markdown');
    await accessible('the transcript');
  });

  it('shows what the run used and cost, under the run and in the header', async () => {
    assert.equal(await byId(page, 'run-usage').last().textContent(), '1.2k in · 300 out · $0.0054');
    const header = await headerItem(page, 'session-usage');
    assert.match(await header.textContent(), /1\.2k in · 300 out · \$0\.0054$/);
  });

  it('tells a hidden tab the agent needs you: a notification and the count in the title', async () => {
    await page.evaluate(() => { window.__hidden = true; });
    await say(page, 'Where next?');
    await pending(page).waitFor();
    await page.waitForFunction(() => window.__notes.length === 1);
    const [note] = await page.evaluate(() => window.__notes);
    assert.equal(note.title, 'The agent needs you — Tandem');
    assert.match(note.body, /Write the trip report is waiting for your answer/);
    await page.waitForFunction(() => document.title === '(1) Tandem — needs you');
    await page.evaluate(() => { window.__hidden = false; });
    await shot(page, '62-needs-you');
  });

  it('takes keyboard shortcuts, each with a modifier: Ctrl+/ lists them, Alt+W jumps to the question', async () => {
    await pressKey('Control+/');
    const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await dialog.waitFor();
    await shot(page, '63-shortcuts');
    await accessible('the shortcuts dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });

    await pressKey('Alt+W');
    await page.waitForFunction(() => document.activeElement?.dataset.testid === 'interrupt-text');
    await page.keyboard.type('Porto');
    await pending(page).getByTestId('interrupt-submit').click();
    await assistantSaying(page, 'Porto it is.');
    await idle(page);
    await page.waitForFunction(() => document.title === 'Tandem');

    await pressKey('Shift+Escape');
    await page.waitForFunction(() => document.activeElement?.dataset.testid === 'composer');
    await pressKey('Control+Shift+O');
    // A new conversation: nothing is created until its first message.
    await page.waitForFunction((first) => !location.hash.endsWith(first), firstSession);
    await page.getByRole('heading', { name: 'What shall we work on?' }).waitFor();
    await page.waitForFunction(() => document.activeElement?.dataset.testid === 'composer');
  });

  it('renames a session, finds sessions by title and content, and exports one', async () => {
    await page.goto(`${tandem.url}/#/sessions/${firstSession}`);
    await connection(page, 'live');
    await byId(page, 'rename').click();
    await byId(page, 'title-input').fill('Lisbon trip');
    await byId(page, 'title-input').press('Enter');
    await byId(page, 'session-title').filter({ hasText: 'Lisbon trip' }).waitFor();
    await byId(page, 'session-item').filter({ hasText: 'Lisbon trip' }).waitFor();
    // A second session to search among (made directly: what it holds does not matter).
    await page.evaluate(() => fetch('/api/sessions', {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
    }));

    const titles = () => byId(page, 'session-item').locator('.session-title').allTextContents();
    // Both listed before the search, so one item afterwards can only be its result.
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=session-item]').length === 2);
    await byId(page, 'search').fill('println');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=session-item]').length === 1);
    assert.deepEqual(await titles(), ['Lisbon trip']);
    // The result says what matched: a piece of the message, the match marked.
    const snippet = byId(page, 'search-snippet');
    assert.match(await snippet.textContent(), /println!\("Lisbon"\)/);
    assert.equal(await snippet.locator('mark').textContent(), 'println');
    await shot(page, '63-search-snippet');
    await byId(page, 'search').fill('no such words');
    await byId(page, 'search-empty').waitFor();
    await byId(page, 'search').fill('');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=session-item]').length === 2);

    await (await headerItem(page, 'export')).locator('summary').click();
    const [markdown] = await Promise.all([
      page.waitForEvent('download'),
      byId(page, 'export-markdown').click(),
    ]);
    assert.equal(markdown.suggestedFilename(), 'lisbon-trip.md');
    const text = readFileSync(await markdown.path(), 'utf8');
    assert.match(text, /^# Lisbon trip\n\n## You\n\nWrite the trip report/);
    assert.match(text, /\*\*Question:\*\* Which city next\?/);
    assert.match(text, /\*\*Answer:\*\* Porto/);
    assert.equal(await byId(page, 'export').getAttribute('open'), null, 'picking a format closes the menu');
    await (await headerItem(page, 'export')).locator('summary').click();
    const [json] = await Promise.all([
      page.waitForEvent('download'),
      byId(page, 'export-json').click(),
    ]);
    const exported = JSON.parse(readFileSync(await json.path(), 'utf8'));
    assert.equal(exported.session.title, 'Lisbon trip');
    assert.equal(exported.events[0].type, 'RUN_STARTED');
    assert.equal(await byId(page, 'export').getAttribute('open'), null);
  });

  it('shares a read-only link: live, no controls, and the hidden reasoning never arrives', async () => {
    await (await headerItem(page, 'share')).click();
    const dialog = page.getByRole('dialog', { name: 'Share a read-only link' });
    await dialog.waitFor();
    await byId(page, 'hide-reasoning').check();
    await byId(page, 'create-link').click();
    const link = await byId(page, 'share-link').inputValue();
    assert.match(link, /\/#\/shared\/tds_[A-Za-z0-9_-]{43}$/);
    await byId(page, 'share-list').getByText('Hides reasoning').waitFor();
    await shot(page, '64-share');
    await accessible('the share dialog');
    await dialog.getByRole('button', { name: 'Close' }).click();

    const { context: stranger, errors } = await newContext(browser);
    errorLists.push(errors);
    const viewer = await stranger.newPage();
    const frames = [];
    viewer.on('websocket', (ws) => ws.on('framereceived', (frame) => frames.push(String(frame.payload))));
    await viewer.goto(link);
    await viewer.getByRole('heading', { name: 'Lisbon trip' }).waitFor();
    await byId(viewer, 'shared-hidden').filter({ hasText: 'Hidden by the owner: reasoning' }).waitFor();
    await viewer.getByRole('heading', { name: 'Trip report' }).waitFor();
    await viewer.getByText('Porto it is.').waitFor();
    assert.equal(await byId(viewer, 'composer').count(), 0, 'no composer');
    assert.equal(await byId(viewer, 'reasoning').count(), 0, 'no reasoning shown');
    assert.equal(await byId(viewer, 'interrupt-text').count(), 0, 'no answer controls');
    const received = frames.join('\n');
    assert.ok(!received.includes('REASONING'), 'no reasoning event reached the viewer');
    assert.ok(!received.includes('secret plan'), 'nor its text');

    // Live: the owner's next run reaches the viewer (the script has no turn left: an error).
    await say(page, 'One more thing');
    await byId(viewer, 'run-error').waitFor();
    await shot(viewer, '65-shared-view');
    const before = page;
    page = viewer;
    await accessible('the shared view');
    page = before;
    await stranger.close();
  });

  it('fits a phone: the sessions are a drawer and nothing scrolls sideways', async () => {
    const { context: phone, errors } = await newContext(browser, { viewport: { width: 390, height: 844 } });
    errorLists.push(errors);
    const small = await phone.newPage();
    await small.goto(`${tandem.url}/#/sessions/${firstSession}`);
    await connection(small, 'live');
    await small.getByRole('table').first().waitFor();
    const overflow = await small.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow}px wider than the screen`);
    // The wide table scrolls sideways in its box, as code does; no word breaks mid-word.
    const wide = small.locator('.table-wrap').filter({ hasText: 'Kubernetes' });
    const [scroll, box] = await wide.evaluate((wrap) => [wrap.scrollWidth, wrap.clientWidth]);
    assert.ok(scroll > box, `the table scrolls in its box (${scroll} > ${box})`);
    const broken = await wide.evaluate((wrap) => [...wrap.querySelectorAll('td, th')].flatMap((cell) => {
      // Each word of the cell on one line: a word broken mid-word has two line boxes.
      const text = cell.firstChild;
      if (!text || text.nodeType !== Node.TEXT_NODE) return [];
      const words = [];
      const range = document.createRange();
      let at = 0;
      for (const word of text.textContent.split(' ')) {
        range.setStart(text, at);
        range.setEnd(text, at + word.length);
        if (range.getClientRects().length > 1) words.push(word);
        at += word.length + 1;
      }
      return words;
    }));
    assert.deepEqual(broken, [], 'words broken across lines in the table');
    const sidebar = small.locator('.sidebar');
    assert.equal(await sidebar.isVisible(), false, 'the sidebar is tucked away');
    await shot(small, '66-phone');
    await small.getByRole('button', { name: 'Sessions' }).click();
    await sidebar.waitFor({ state: 'visible' });
    await shot(small, '67-phone-drawer');
    const before = page;
    page = small;
    await accessible('the phone drawer');
    page = before;
    await byId(small, 'session-item').filter({ hasText: 'Lisbon trip' }).locator('a').click();
    await sidebar.waitFor({ state: 'hidden' });
    await phone.close();
  });

  it('says when the connection is lost, and that it caught up once back', async () => {
    await tandem.stop('SIGTERM');
    await byId(page, 'reconnecting').waitFor();
    await connection(page, 'reconnecting');
    await shot(page, '68-reconnecting');
    await tandem.restart();
    await byId(page, 'connection').filter({ hasText: 'Caught up' }).waitFor();
    await byId(page, 'reconnecting').waitFor({ state: 'detached' });
    await shot(page, '69-caught-up');
  });

  it('picks the model a session runs on, and the session keeps it', async () => {
    const before = await page.evaluate(() => location.hash);
    await byId(page, 'new-session').click();
    await page.waitForFunction((old) => location.hash !== old, before);
    const picker = byId(page, 'model-picker');
    assert.deepEqual(await picker.locator('option').allTextContents(), ['script (3 turns)', 'tandem-alt']);
    assert.equal(await picker.inputValue(), 'script (3 turns)', 'the default until one is picked');
    await picker.selectOption('tandem-alt');
    await say(page, 'Use the other model');
    await page.waitForFunction(() => location.hash.startsWith('#/sessions/'));
    const session = await sessionIdOf(page);
    await connection(page, 'live');
    // The picker shows the picked model the moment the conversation becomes a session,
    // and keeps showing it while that model runs.
    assert.equal(await picker.inputValue(), 'tandem-alt', 'right after the first message');
    await assistantSaying(page, 'stays text');
    assert.equal(await picker.inputValue(), 'tandem-alt', 'while it runs');
    await idle(page);
    const log = await (await fetch(`${tandem.url}/api/sessions/${session}/events`)).json();
    const picks = log.events
      .map((row) => row.event)
      .filter((event) => event.type === 'CUSTOM' && event.name === 'tandem.model_selected');
    assert.deepEqual(picks.map((event) => event.value.model), ['tandem-alt']);
    await page.reload();
    await connection(page, 'live');
    await page.waitForFunction(
      () => document.querySelector('[data-testid=model-picker]')?.value === 'tandem-alt');
    await accessible('the model picker');
  });

  it('raised no page errors', () => {
    assert.deepEqual(errorLists.flat(), []);
  });
});
