// Proves, in headless Chromium against the real binary on the demo model, that a budget is
// a person's to see and decide on: with a daily cap of one token, "make a plan" makes one
// model call and then pauses in place with a Budget card that says what was spent; the
// person lets it go on past the budget and it finishes; the header says nothing is left;
// the next message pauses before any call and "Stop here" ends that run. Driven by roles
// and visible text; axe-core checks both colour schemes. Screenshots:
// target/browser/90-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { axeBothSchemes } from '../support/axe.mjs';
import { idle, pending, say, shots, startSession, tandemWithPage } from '../support/browser.mjs';

let app;
let page;
let tandem;

before(async () => {
  app = await tandemWithPage([
    '--engine', 'demo', '--budget-daily-tokens', '1', '--budget-overrun', 'allow',
  ]);
  ({ page, tandem } = app);
});

after(() => app?.stop());

const card = () => pending(page).filter({ hasText: 'The run reached your budget' });

describe('a budget the person sees and decides on', () => {
  it('pauses a run at the budget, and lets it go on past it when asked', async () => {
    await page.getByText('1 tokens left today').waitFor();
    await startSession(page, 'make a plan');
    await card().waitFor();
    await card().getByText(/Your budget is used up: \d+ of 1 tokens spent today\./).waitFor();
    await page.getByText('0 tokens left today').waitFor();
    // The plan's panel stands over the transcript on a phone: out of the way for the shots.
    await page.getByRole('button', { name: 'Hide the shared state' }).click();
    await shots(page, '90-budget-paused');
    await axeBothSchemes(page);

    await card().getByRole('button', { name: 'Continue past the budget' }).click();
    await page.getByText('Continued past the budget').waitFor();
    await page.getByTestId('assistant-message').filter({ hasText: 'All three steps are done' }).waitFor();
    await idle(page);
  });

  it('stops the next run before its first model call', async () => {
    await say(page, 'hello again');
    await card().waitFor();
    await card().getByRole('button', { name: 'Stop here' }).click();
    await page.getByText('Stopped at the budget').waitFor();
    await idle(page);
    await shots(page, '90-budget-stopped');
    await axeBothSchemes(page);
    const me = await (await page.request.get(`${tandem.url}/api/auth/me`)).json();
    assert.equal(me.budget[0].left, 0);
    assert.deepEqual(app.errors, []);
  });
});
