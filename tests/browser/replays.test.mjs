// Proves, in headless Chromium against the real binary (script engine, built page), that a
// person replays an answer and compares: "Replay…" under the answer opens the dialog; two
// variants (the run's model and another), k = 2 and a text a passing answer contains; the
// comparison shows the recorded answer, each variant's column with pass^k and pass@1, each
// trial passed or failed with its words added to and left out of the recorded answer marked,
// and links to the trials' branches. The sidebar still lists the conversation once. Then an
// eval of the conversation made over the API shows in the "More" menu's Evals…, with its
// variant's scores and the conversation linked. Driven by roles and visible text; axe-core
// checks both colour schemes. Screenshots: target/browser/105-* (the form, the comparison),
// 106-*
// (-<light|dark>-<desktop|phone>.png).

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { axeBothSchemes } from '../support/axe.mjs';
import {
  assistantSaying, byId, idle, moreMenu, shots, startSession, tandemWithPage,
} from '../support/browser.mjs';

const USAGE = { model: 'tandem', inputTokens: 12, outputTokens: 5 };

let app;
let page;

before(async () => {
  const files = mkdtempSync(path.join(tmpdir(), 'tandem-replays-'));
  const script = path.join(files, 'script.json');
  writeFileSync(script, JSON.stringify({
    turns: [{
      text: 'Lisbon is lovely in spring.',
      usage: USAGE,
      byModel: { 'tandem-alt': { text: 'Porto is lovely in spring.', usage: USAGE } },
    }],
  }));
  app = await tandemWithPage(['--engine', 'script', '--script', script, '--models', 'tandem-alt']);
  ({ page } = app);
});

after(() => app?.stop());

describe('replaying an answer', () => {
  let session;

  it('compares the variants trial by trial against the recorded answer', async () => {
    session = await startSession(page, 'Where should I go?');
    await assistantSaying(page, 'Lisbon is lovely in spring.');
    await idle(page);
    await page.getByRole('button', { name: 'Replay…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay this answer' });
    await dialog.getByRole('textbox', { name: 'Variant 1', exact: true }).waitFor();
    assert.equal(await dialog.getByRole('textbox', { name: 'Variant 1', exact: true }).inputValue(), 'again');
    await dialog.getByRole('button', { name: 'Add a variant' }).click();
    await dialog.getByRole('textbox', { name: 'Variant 2', exact: true }).fill('alt');
    await dialog.getByRole('combobox', { name: 'Model of variant 2' }).selectOption('tandem-alt');
    await dialog.getByRole('textbox', { name: /System prompt of variant 2/ }).fill('Prefer the north.');
    await shots(page, '105-replay-form');
    await dialog.getByRole('spinbutton', { name: 'Trials per variant (k)' }).fill('2');
    await dialog.getByRole('textbox', { name: /A passing answer contains/ }).fill('Lisbon');
    await dialog.getByRole('button', { name: 'Start replay' }).click();

    await dialog.getByRole('status').filter({ hasText: 'Done' }).waitFor();
    const again = dialog.getByRole('region', { name: 'Variant again' });
    const alt = dialog.getByRole('region', { name: 'Variant alt' });
    await again.getByText('pass^k 1.00 · pass@1 1.00 · 2 of 2 passed').waitFor();
    await alt.getByText('pass^k 0.00 · pass@1 0.00 · 0 of 2 passed').waitFor();
    assert.equal(await again.getByText('Passed', { exact: true }).count(), 2);
    assert.equal(await alt.getByText('Failed', { exact: true }).count(), 2);
    const trial = alt.getByTestId('replay-trial').first();
    assert.equal((await trial.locator('del').first().textContent()).trim(), 'Lisbon');
    assert.equal((await trial.locator('ins').first().textContent()).trim(), 'Porto');
    await trial.getByText(/does not contain “Lisbon”/).waitFor();
    await trial.getByText(/12 in · 5 out/).waitFor();
    await alt.getByRole('link', { name: 'Open trial 1' }).waitFor();
    await dialog.evaluate((element) => element.scrollTo(0, 0));
    await shots(page, '105-replay-dialog');
    await axeBothSchemes(page);
    await dialog.getByRole('button', { name: 'Close' }).click();
    assert.equal(await byId(page, 'session-item').count(), 1, 'the conversation is listed once');
  });

  it('lists an eval of the conversation with its scores', async () => {
    const response = await fetch(`${app.tandem.url}/api/evals`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        sessions: [session], k: 2, expect: { contains: ['Lisbon'] },
        variants: [{ label: 'again' }, { label: 'alt', model: 'tandem-alt' }],
      }),
    });
    assert.equal(response.status, 202, await response.text());
    const menu = await moreMenu(page);
    await menu.getByRole('button', { name: 'Evals…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Evals' });
    const row = dialog.getByTestId('eval-row').first();
    await row.getByText(/k = 2 · 1 conversation ·/).waitFor();
    // The dialog reads the list again while the eval runs.
    await row.getByText(/· Done$/).waitFor();
    await row.getByText(/again \(.*\): pass\^k 1\.00 · pass@1 1\.00/).waitFor();
    await row.getByText(/alt \(tandem-alt\): pass\^k 0\.00/).waitFor();
    await row.getByText('Conversations', { exact: true }).click();
    await row.getByRole('link', { name: 'Where should I go?' }).waitFor();
    await shots(page, '106-evals-dialog');
    await axeBothSchemes(page);
    assert.deepEqual(app.errors, []);
  });
});
