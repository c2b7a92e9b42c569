// Proves, in headless Chromium against the real binary (the demo model, the built page and
// run_python's real interpreter, RustPython in the WebAssembly sandbox), that a Python call
// shows as a person wants to read it: the program highlighted as Python with a copy button,
// what it printed under it, and how it ended; a failing program shows its traceback and its
// exit code. Driven by roles and visible text; axe-core checks both colour schemes.
// Screenshots: target/browser/101-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';

import { axeBothSchemes } from '../support/axe.mjs';
import { assistantSaying, idle, say, shots, startSession, tandemWithPage } from '../support/browser.mjs';
import { pythonArgs } from '../support/tandem.mjs';

const TWO_TO_THE_100 = '1267650600228229401496703205376';

let app;
let page;

before(async () => {
  app = await tandemWithPage(['--engine', 'demo', ...pythonArgs()]);
  ({ page } = app);
});

after(() => app?.stop());

describe('a run_python call', () => {
  it('shows the program highlighted, then what it printed and how it ended', async () => {
    await startSession(page, 'compute 2^100 with python');
    const card = page.getByTestId('tool-call').filter({ hasText: 'run_python' });
    const printed = card.getByLabel('What the program printed');
    await printed.waitFor();
    assert.equal((await printed.textContent()).trim(), TWO_TO_THE_100);
    await card.getByText('Exited with 0').waitFor();
    const code = card.getByTestId('python-code');
    assert.equal((await code.locator('code').textContent()).trim(), 'print(2**100)');
    assert.ok(
      (await code.locator('code span').count()) >= 2,
      'the program is highlighted, token by token',
    );
    assert.ok(await card.getByRole('button', { name: 'Copy' }).isVisible(), 'a copy button');
    // The finished answer, not a state of it while it streams.
    const answer = await assistantSaying(page, 'Python printed:');
    assert.ok(answer.includes(TWO_TO_THE_100), answer);
    await idle(page);
    await shots(page, '101-python-printed');
    await axeBothSchemes(page);
  });

  it('shows a failing program’s traceback and its exit code', async () => {
    await say(page, 'run this in python: 1/0');
    const card = page.getByTestId('tool-call').filter({ hasText: '1/0' });
    await card.getByText('Exited with 1').waitFor();
    const errors = card.getByLabel('What the program wrote to stderr');
    assert.match(await errors.textContent(), /ZeroDivisionError/);
    assert.equal(await card.getAttribute('data-status'), 'error');
    await assistantSaying(page, 'The program failed: ZeroDivisionError: division by zero.');
    await idle(page);
    await shots(page, '101-python-failed');
    await axeBothSchemes(page);
    assert.deepEqual(app.errors, []);
  });
});
