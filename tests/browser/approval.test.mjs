// Proves, in headless Chromium against the real binary (demo engine, built page), the tool
// approval gate as a person meets it: the agent wants to write a file, the card shows the
// tool and its arguments, unreadable or invalid edits are refused on the card (which stays
// answerable), an edited approval runs the tool with the edited arguments, and a rejection
// with a reason is recorded in this tab and a second one. The answered record survives a
// reload. Screenshots go to target/browser/2N-*.png.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  byId, connection, idle, launchBrowser, newContext, shot, startSession,
} from '../support/browser.mjs';
import { freePort, startTandem, webDir } from '../support/tandem.mjs';

const REQUEST = 'save a note that the demo works';

let tandem;
let browser;
let context;
let errors;
let page;
let workspace;

const approvalCard = (p) => p.locator('[data-testid=interrupt][data-kind=tool_approval]');
const approvalIn = (p, state) => p.locator(
  `[data-testid=interrupt][data-kind=tool_approval][data-state=${state}]`,
);
const writeCard = (p) => p.locator('[data-testid=tool-call][data-tool-name=write_file]');
/** The agent's finished message after the approval card: the resumed run's answer. */
const replyAfterCard = (p) => p.locator(
  '[data-testid=interrupt][data-kind=tool_approval] ~ .row-assistant [data-testid=assistant-message]:not(.streaming)',
);

/** Starts a new session asking for the note and waits for the approval card; returns
 * the session's id and the pending card. */
async function askForANote(p) {
  const id = await startSession(p, REQUEST);
  const card = approvalIn(p, 'pending');
  await card.waitFor();
  return { id, card };
}

before(async () => {
  workspace = mkdtempSync(path.join(tmpdir(), 'tandem-workspace-'));
  tandem = await startTandem({
    port: await freePort(),
    args: [
      '--engine', 'demo', '--token-delay-ms', '10', '--web-dir', webDir(),
      '--workspace-dir', workspace,
    ],
  });
  browser = await launchBrowser();
  ({ context, errors } = await newContext(browser));
  page = await context.newPage();
  await page.goto(tandem.url);
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
  if (workspace) rmSync(workspace, { recursive: true, force: true });
});

describe('approving and rejecting a tool call', () => {
  it('approves a write with an edited path, after bad edits are refused on the card', async () => {
    const { card } = await askForANote(page);
    assert.match(await card.getByTestId('interrupt-prompt').textContent(), /write_file/);
    assert.equal((await card.getByTestId('approval-tool').textContent()).trim(), 'write_file');
    // The call itself is an ordinary tool card, waiting (not failed, not "running") while
    // the person decides.
    await writeCard(page).and(page.locator('[data-status=awaiting]')).waitFor();
    // The arguments show once, in the box that edits them, not in the call's card too.
    assert.equal(await writeCard(page).getByTestId('tool-args').count(), 0);
    assert.equal(await writeCard(page).getByText('Arguments', { exact: true }).count(), 0);
    const box = card.getByTestId('approval-arguments');
    const original = await box.inputValue();
    assert.match(original, /"path": "notes\/tandem\.txt"/);
    await shot(page, '21-approval-pending');

    // Text that is not JSON never leaves the page.
    await box.fill('{ "path": ');
    await card.getByTestId('interrupt-approve').click();
    assert.match(await card.getByTestId('approval-error').textContent(), /not valid JSON/);
    assert.equal(await approvalCard(page).getAttribute('data-state'), 'pending');

    // JSON the tool's schema refuses comes back from the server; the card says why and waits.
    await box.fill(JSON.stringify({ path: 42, content: 'x' }, null, 2));
    await card.getByTestId('interrupt-approve').click();
    await byId(page, 'notice').filter({ hasText: 'invalid_payload' }).waitFor();
    const refusal = await card.getByTestId('approval-error').textContent();
    assert.doesNotMatch(refusal, /not valid JSON/);
    assert.equal(refusal, await page.locator('[data-testid=notice] .notice-text').textContent());
    await page.waitForFunction(
      () => !document.querySelector('[data-testid=interrupt-approve]')?.disabled,
    );
    assert.equal(await approvalCard(page).getAttribute('data-state'), 'pending');
    await shot(page, '22-approval-refused');

    await box.fill(original.replace('notes/tandem.txt', 'notes/edited.txt'));
    await card.getByTestId('interrupt-approve').click();
    const answered = approvalIn(page, 'answered');
    await answered.waitFor();
    assert.equal((await answered.getByTestId('interrupt-answer').textContent()).trim(), 'Approved with edits');
    await writeCard(page).and(page.locator('[data-status=done]')).waitFor();
    // Decided, the call's card shows its arguments again (as the model wrote them; the
    // answer above says they were edited).
    assert.match(await writeCard(page).getByTestId('tool-args').textContent(), /"path"/);
    await replyAfterCard(page).last().waitFor();
    await idle(page);
    assert.ok(existsSync(path.join(workspace, 'local/notes/edited.txt')), 'the edited path was written');
    assert.ok(!existsSync(path.join(workspace, 'local/notes/tandem.txt')), 'the original path was not');
    await shot(page, '23-approved-with-edits');

    // The record is rebuilt from the log after a reload.
    await page.reload();
    await connection(page, 'live');
    await approvalIn(page, 'answered').waitFor();
    assert.equal((await page.getByTestId('interrupt-answer').textContent()).trim(), 'Approved with edits');
    await writeCard(page).and(page.locator('[data-status=done]')).waitFor();
    assert.equal(await approvalIn(page, 'pending').count(), 0);
  });

  it('rejects a write with a reason, seen in a second tab, and the run finishes', async () => {
    const { id, card } = await askForANote(page);
    const tab2 = await context.newPage();
    await tab2.goto(`${tandem.url}/#/sessions/${id}`);
    await connection(tab2, 'live');
    await approvalIn(tab2, 'pending').waitFor();

    await card.getByTestId('approval-reason').fill('not now');
    await card.getByTestId('interrupt-reject').click();
    for (const p of [page, tab2]) {
      const answered = approvalIn(p, 'answered');
      await answered.waitFor();
      assert.equal((await answered.getByTestId('interrupt-answer').textContent()).trim(), 'Rejected: not now');
      await writeCard(p).getByTestId('tool-result').filter({ hasText: 'rejected' }).waitFor();
      await replyAfterCard(p).last().waitFor();
      await idle(p);
    }
    assert.ok(!existsSync(path.join(workspace, 'local/notes/tandem.txt')), 'nothing was written');
    await shot(page, '24-rejected');
    await tab2.close();
  });

  it('raised no page errors', () => {
    assert.deepEqual(errors, []);
  });
});
