// Proves, in headless Chromium against the real binary on the demo model, that the shared
// state is a person's to watch and change: "make a plan" fills the panel beside the
// conversation with a checklist that the agent ticks off live, step by step; the person
// unticks a step by hand (the header's button follows), replaces the whole state as JSON
// (a tree shows what is not a plan), is told why JSON that is not an object is refused, and
// a share link's viewer sees the same state read-only; the last answer is rated up, then down
// with what was wrong. Driven by roles and visible text;
// axe-core checks both colour schemes. Screenshots:
// target/browser/87-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { axeBothSchemes } from '../support/axe.mjs';
import { byId, idle, sessionIdOf, shots, startSession, tandemWithPage } from '../support/browser.mjs';

let app;
let page;
let tandem;

before(async () => {
  // Slow enough (a second or so per model call) to see the plan change while it runs.
  app = await tandemWithPage(['--engine', 'demo', '--token-delay-ms', '40']);
  ({ page, tandem } = app);
});

after(() => app?.stop());

const panel = () => page.getByRole('complementary', { name: 'Shared state' });
const plan = () => panel().getByRole('region', { name: 'Plan' });
const step = (name) => plan().getByRole('checkbox', { name });

describe('the shared state beside the conversation', () => {
  it('shows the agent’s plan as a checklist that fills and ticks off live', async () => {
    await startSession(page, 'make a plan');
    await step('Gather what is needed').waitFor();
    // Ticked off while the run still works: the panel follows the log live.
    await plan().getByText('1 of 3 done').waitFor();
    assert.ok(await byId(page, 'stop').isVisible(), 'the run is still going');
    await plan().getByText('3 of 3 done').waitFor();
    await idle(page);
    for (const name of ['Gather what is needed', 'Do the work', 'Check the result']) {
      assert.equal(await step(name).isChecked(), true, name);
    }
    assert.equal(await byId(page, 'state-button').textContent(), 'Plan 3/3');
    await shots(page, '87-plan-done');
    await axeBothSchemes(page);
  });

  it('takes a step unticked by hand, and a whole new state as JSON', async () => {
    await step('Check the result').uncheck();
    await plan().getByText('2 of 3 done').waitFor();
    await page.getByRole('button', { name: 'Plan 2/3' }).waitFor();

    await panel().getByRole('button', { name: 'Edit as JSON' }).click();
    const json = panel().getByRole('textbox', { name: 'The shared state as JSON' });
    await json.fill('[1, 2]');
    await panel().getByRole('button', { name: 'Save' }).click();
    await panel().getByRole('alert').getByText('The state must be a JSON object').waitFor();
    const state = {
      plan: [{ step: 'Book the flight', status: 'in_progress' }, { step: 'Pack', status: 'pending' }],
      destination: 'Lisbon',
      travellers: ['Ada', 'Grace'],
    };
    await json.fill(JSON.stringify(state, null, 2));
    await panel().getByRole('button', { name: 'Save' }).click();
    await step('Book the flight').waitFor();
    await plan().getByText('in progress').waitFor();
    await panel().getByRole('region', { name: 'State' }).getByText('Lisbon').waitFor();
    await panel().getByText('Grace').waitFor();
    await page.getByRole('button', { name: 'Plan 0/2' }).waitFor();
    await shots(page, '88-state-edited');
    await axeBothSchemes(page);

    const id = await sessionIdOf(page);
    const server = await (await page.request.get(`${tandem.url}/api/sessions/${id}/state`)).json();
    assert.deepEqual(server.state, state);
  });

  it('rates an answer up, then down with what was wrong, and the operator’s list has it', async () => {
    const answer = page.locator('.answer', {
      has: page.getByTestId('assistant-message').filter({ hasText: 'All three steps are done' }),
    });
    const good = answer.getByRole('button', { name: 'Good answer' });
    const bad = answer.getByRole('button', { name: 'Bad answer' });
    await good.click();
    await answer.locator('button[aria-label="Good answer"][aria-pressed="true"]').waitFor();
    await bad.click();
    const why = page.getByRole('textbox', { name: 'What was wrong with this answer? (optional)' });
    await why.fill('It never asked');
    // Shift+Enter is a new line; Enter sends, as in every text box of words on the page.
    await why.press('Shift+Enter');
    await why.pressSequentially('what the plan was for.');
    assert.equal(await why.inputValue(), 'It never asked\nwhat the plan was for.');
    // The panel stands over the transcript on a phone: out of the way for these shots.
    await page.getByRole('button', { name: 'Hide the shared state' }).click();
    await shots(page, '89-rating-comment');
    await why.press('Enter');
    await why.waitFor({ state: 'detached' });
    await answer.locator('button[aria-label="Bad answer"][aria-pressed="true"]').waitFor();
    assert.equal(await good.getAttribute('aria-pressed'), 'false');
    await axeBothSchemes(page);
    const listed = await (await page.request.get(`${tandem.url}/api/feedback`)).json();
    assert.equal(listed.feedback[0].rating, 'down');
    assert.equal(listed.feedback[0].comment, 'It never asked\nwhat the plan was for.');
  });

  it('hides and shows the panel from the header, and a share viewer sees it read-only', async () => {
    const toggle = page.getByRole('button', { name: 'Plan 0/2' });
    assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
    await toggle.click();
    await panel().waitFor();
    await page.getByRole('button', { name: 'Hide the shared state' }).click();
    await panel().waitFor({ state: 'detached' });
    await toggle.click();
    await panel().waitFor();

    const id = await sessionIdOf(page);
    const created = await page.request.post(`${tandem.url}/api/sessions/${id}/shares`, { data: {} });
    const { token } = await created.json();
    const viewer = await page.context().newPage();
    await viewer.goto(`${tandem.url}/#/shared/${token}`);
    const shared = viewer.getByRole('complementary', { name: 'Shared state' });
    await shared.getByRole('checkbox', { name: 'Book the flight' }).waitFor();
    assert.equal(await shared.getByRole('checkbox', { name: 'Pack' }).isDisabled(), true);
    assert.equal(await shared.getByRole('button', { name: 'Edit as JSON' }).count(), 0);
    await viewer.close();
    assert.deepEqual(app.errors, []);
  });
});
