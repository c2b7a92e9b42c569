// Proves, in headless Chromium against the real binary (script engine, built page) and the
// reference MCP server (`@modelcontextprotocol/server-everything`, npm, over stdio), that a
// long tool call shows how far it got: its card fills a progress bar step by step from the
// server's progress notifications ("1 of 3", "2 of 3") while it runs, and the result takes
// the bar's place when it finishes. Driven by roles and visible text; axe-core checks both
// colour schemes. Screenshots: target/browser/91-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { axeBothSchemes } from '../support/axe.mjs';
import { idle, shots, startSession, tandemWithPage } from '../support/browser.mjs';
import { everythingServer, scriptWithMcp } from '../support/tandem.mjs';

const TOOL = 'everything__trigger-long-running-operation';
const SCRIPT = {
  turns: [
    { toolCalls: [{ name: TOOL, arguments: { duration: 4.5, steps: 3 } }] },
    { text: 'The long job is done.' },
  ],
};

let app;
let page;

before(async () => {
  app = await tandemWithPage(scriptWithMcp(SCRIPT, { everything: everythingServer }));
  ({ page } = app);
});

after(() => app?.stop());

describe('a long tool call’s progress', () => {
  it('fills a bar on the call’s card step by step, then shows the result', async () => {
    await startSession(page, 'run the long job');
    const bar = page.getByRole('progressbar', { name: `Progress of ${TOOL}` });
    await page.getByText('1 of 3').waitFor();
    assert.equal(await bar.getAttribute('value'), '33', 'the whole percent done');
    assert.equal(await bar.getAttribute('max'), '100');
    await page.getByText('2 of 3').waitFor();
    await shots(page, '91-tool-progress');
    await axeBothSchemes(page);
    await page.getByText('The long job is done.').waitFor();
    await idle(page);
    await page.getByText(/Long running operation completed/).waitFor();
    assert.equal(await bar.count(), 0, 'the result takes the bar’s place');
    assert.deepEqual(app.errors, []);
  });
});
