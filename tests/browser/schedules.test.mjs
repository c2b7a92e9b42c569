// Proves, in headless Chromium against the real binary (script engine, built page), that a
// person makes a schedule in the page and answers what its run asks: the "More" menu's
// Schedules… shows "every day at 09:00" in the browser's time zone with the next five
// times before saving; saved, the schedule lists its next time; "Run now" fires it, its
// fire appears under Fires and links to its session, where the run waits for an answer;
// answered, the run finishes. Pause, edit (the form fills with the schedule) and delete
// work from the same row. Driven by roles and
// visible text; axe-core checks both colour schemes. Screenshots:
// target/browser/104-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { axeBothSchemes } from '../support/axe.mjs';
import { idle, moreMenu, pending, shots, tandemWithPage } from '../support/browser.mjs';

let app;
let page;

before(async () => {
  const files = mkdtempSync(path.join(tmpdir(), 'tandem-schedules-'));
  const script = path.join(files, 'script.json');
  writeFileSync(script, JSON.stringify({
    turns: [
      { toolCalls: [{ name: 'request_input', arguments: { prompt: 'Ship the release?', kind: 'text' } }] },
      { text: 'Shipped it.' },
    ],
  }));
  app = await tandemWithPage(['--engine', 'script', '--script', script]);
  ({ page } = app);
});

after(() => app?.stop());

async function schedulesDialog() {
  const menu = await moreMenu(page);
  await menu.getByRole('button', { name: 'Schedules…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Schedules' });
  await dialog.getByRole('heading', { name: 'New schedule' }).waitFor();
  return dialog;
}

describe('the schedules dialog', () => {
  it('makes a daily schedule, runs it now and answers what its run asks', async () => {
    const dialog = await schedulesDialog();
    await dialog.getByText('No schedules yet.').waitFor();
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Release check');
    await dialog.getByRole('textbox', { name: 'Message' }).fill('Is the release ready?');
    assert.equal(await dialog.getByRole('radio', { name: 'Every day at' }).isChecked(), true);
    await dialog.getByLabel('Time').fill('09:30');
    const preview = dialog.getByRole('list').filter({ has: page.getByRole('listitem') }).last();
    await preview.getByRole('listitem').nth(4).waitFor();
    assert.equal(await preview.getByRole('listitem').count(), 5, 'the next five times');
    assert.match(await preview.getByRole('listitem').first().textContent(), /09:30/);

    await dialog.getByRole('radio', { name: 'A cron pattern' }).check();
    await dialog.getByRole('textbox', { name: /Cron pattern/ }).fill('not a pattern');
    await dialog.getByText(/is not a cron pattern|a cron pattern has 5/).waitFor();
    await dialog.getByRole('radio', { name: 'Every day at' }).check();

    await dialog.getByRole('button', { name: 'Save schedule' }).click();
    await dialog.getByText('Saved Release check.').waitFor();
    const row = dialog.getByTestId('schedule-row').filter({ hasText: 'Release check' });
    await row.getByText(/Every day at 09:30/).waitFor();
    await row.getByText(/^Next: /).waitFor();

    await row.getByRole('button', { name: 'Run now: Release check' }).click();
    await dialog.getByText('Ran Release check.').waitFor();
    await row.getByText(/Last: .*\(run now\)/).waitFor();
    await row.getByText('Fires').click();
    const fire = row.getByRole('link', { name: /\(run now\)/ });
    await fire.waitFor();
    await dialog.evaluate((element) => element.scrollTo(0, 0));
    await shots(page, '104-schedules-dialog');
    await axeBothSchemes(page);

    await fire.click();
    await pending(page).waitFor();
    await pending(page).getByText('Ship the release?').waitFor();
    await pending(page).getByTestId('interrupt-text').fill('Yes, ship it');
    await pending(page).getByTestId('interrupt-submit').click();
    await page.getByText('Shipped it.').waitFor();
    await idle(page);

    const again = await schedulesDialog();
    const listed = again.getByTestId('schedule-row').filter({ hasText: 'Release check' });
    await listed.getByText(/Last: .*Answered/).waitFor();
    await listed.getByRole('button', { name: 'Pause Release check' }).click();
    await again.getByText('Paused Release check.').waitFor();
    await listed.getByText('Paused', { exact: true }).waitFor();
    await listed.getByRole('button', { name: 'Edit Release check' }).click();
    await again.getByRole('heading', { name: 'Edit schedule' }).waitFor();
    assert.equal(await again.getByRole('textbox', { name: 'Message' }).inputValue(), 'Is the release ready?');
    await again.getByLabel('Time').fill('10:15');
    await again.getByRole('list').filter({ hasText: '10:15' }).last().waitFor();
    await again.getByRole('button', { name: 'Save schedule' }).click();
    await again.getByText('Saved Release check.').waitFor();
    await listed.getByText(/Every day at 10:15/).waitFor();
    await again.getByRole('heading', { name: 'New schedule' }).waitFor();
    await listed.getByRole('button', { name: 'Delete Release check' }).click();
    await again.getByText('Deleted Release check.').waitFor();
    await again.getByText('No schedules yet.').waitFor();
    assert.deepEqual(app.errors, []);
  });
});
