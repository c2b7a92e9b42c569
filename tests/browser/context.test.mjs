// Proves, in headless Chromium against the real binary (script engine, built page), what a
// person is shown of things that happen beside the conversation: an MCP server that is down
// (named in the header when the page loads, and a notice in the transcript when a call
// finds it down), and, once the conversation outgrows the model's context budget with
// `--context-strategy summarise`, where the model's view begins and the summary it is sent
// of the turns before. Screenshots go to target/browser/6N-*.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import {
  assistantSaying, byId, connection, idle, launchBrowser, newContext, say, shot, startSession,
} from '../support/browser.mjs';
import { freePort, scriptWithMcp, startTandem, webDir } from '../support/tandem.mjs';

const SCRIPT = {
  turns: [
    { text: 'First answer.' },
    { toolCalls: [{ name: 'broken__lookup', arguments: {} }] },
    { text: 'The lookup server is down.' },
  ],
};

let tandem;
let browser;
let errors;
let page;

before(async () => {
  const scripted = scriptWithMcp(SCRIPT, { broken: { command: '/nonexistent/mcp-server' } });
  tandem = await startTandem({
    port: await freePort(),
    args: [
      ...scripted, '--token-delay-ms', '5', '--web-dir', webDir(),
      '--context-tokens', '1', '--context-strategy', 'summarise',
    ],
  });
  browser = await launchBrowser();
  let context;
  ({ context, errors } = await newContext(browser));
  page = await context.newPage();
  await page.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

describe('what happens beside the conversation', () => {
  it('names an MCP server that is down in the header', async () => {
    const down = byId(page, 'mcp-down');
    await down.waitFor();
    assert.equal((await down.textContent()).trim(), 'MCP server broken is down');
    assert.match(await down.getAttribute('title'), /broken: .*could not be started/);
  });

  it('shows a notice when a call finds the server down, and the summary where the view begins', async () => {
    await startSession(page, 'Hello there');
    await assistantSaying(page, 'First answer.');
    await idle(page);
    await say(page, 'Look it up');
    await assistantSaying(page, 'The lookup server is down.');
    await idle(page);

    const notice = byId(page, 'run-notice');
    await notice.waitFor();
    assert.match(await notice.textContent(), /The MCP server `broken` is down \(.*\); Tandem starts it again in \d+ s\./);

    const start = byId(page, 'context-start');
    await start.waitFor();
    const summary = byId(page, 'context-summary');
    assert.match(await summary.textContent(), /Then the person said “Hello there”\./);
    // The divider and the summary stand right above the person's second message.
    const before = await page.evaluate(() => {
      const messages = [...document.querySelectorAll('[data-testid=user-message]')];
      const summary = document.querySelector('[data-testid=context-summary]');
      return messages.map((m) => Boolean(summary.compareDocumentPosition(m) & Node.DOCUMENT_POSITION_FOLLOWING));
    });
    assert.deepEqual(before, [false, true]);
    await shot(page, '61-notice-and-summary');

    await page.reload();
    await connection(page, 'live');
    await byId(page, 'context-summary').waitFor();
    await byId(page, 'run-notice').waitFor();
    assert.deepEqual(errors, []);
  });
});
