// Proves, in headless Chromium against the real binary with `--auth token`, how people get
// in and out: the page asks for a token, refuses a wrong one on the form, signs in with the
// right one (the cookie survives a reload), shows who is signed in, signs out (a reload
// then asks again), another user never sees the first one's sessions, and a revoke from the
// shell signs an open page out at once; signing out, or being revoked, while an answer
// streams raises no page error. A second server
// with one run slot shows a waiting run as queued. Screenshots: target/browser/5N-*.png.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';

import {
  assistantSaying, byId, connection, idle, launchBrowser, moreMenu, newContext, say,
  sessionIdOf, shot, startSession,
} from '../support/browser.mjs';
import { seriousViolations } from '../support/axe.mjs';
import { freePort, startTandem, tandemBin, webDir } from '../support/tandem.mjs';

let tandem;
let browser;
const errorLists = [];

/** Creates a user on `server`'s database with the real CLI; returns their token. */
function addUser(server, name) {
  const out = execFileSync(tandemBin(), ['--database-url', server.databaseUrl, 'users', 'add', name]);
  const token = out.toString().split('\n').find((line) => line.startsWith('tdm_'));
  assert.ok(token, `the CLI printed a token for ${name}`);
  return token;
}

async function freshPage() {
  const { context, errors } = await newContext(browser);
  errorLists.push(errors);
  return context.newPage();
}

async function signIn(page, token) {
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

before(async () => {
  tandem = await startTandem({
    port: await freePort(),
    args: ['--auth', 'token', '--engine', 'demo', '--token-delay-ms', '5', '--web-dir', webDir()],
  });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  await tandem?.stop('SIGKILL');
});

describe('signing in and out', () => {
  let adaToken;
  let adaSession;

  it('asks for a token, refuses a wrong one, and signs in with the right one', async () => {
    adaToken = addUser(tandem, 'ada');
    const page = await freshPage();
    await page.goto(tandem.url);
    await page.getByRole('heading', { name: 'Sign in to Tandem' }).waitFor();
    await shot(page, '51-sign-in');
    assert.deepEqual(await seriousViolations(page), [], 'axe-core on the sign-in screen');
    await signIn(page, 'tdm_not-the-right-token');
    const error = byId(page, 'sign-in-error');
    await error.waitFor();
    assert.match(await error.textContent(), /not valid/);
    await shot(page, '52-sign-in-refused');

    await signIn(page, adaToken);
    await (await moreMenu(page)).getByText('Signed in as ada').waitFor();
    await page.keyboard.press('Escape');
    adaSession = await startSession(page, 'what is 6 * 7');
    assert.match(await assistantSaying(page, '42'), /42/);
    await idle(page);
    await shot(page, '53-signed-in');

    await page.reload();
    await connection(page, 'live');
    // The cookie survives a reload.
    await (await moreMenu(page)).getByText('Signed in as ada').waitFor();
    await page.keyboard.press('Escape');
    await assistantSaying(page, '42');

    // Who is signed in, and Sign out, are in the header's menu.
    await (await moreMenu(page)).getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Tandem' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Tandem' }).waitFor();
    await shot(page, '54-signed-out');
    const left = await page.evaluate(async () => (await fetch('/api/sessions')).status);
    assert.equal(left, 401, 'the server forgot the sign-in, not just the page');
  });

  it("shows another user none of ada's sessions", async () => {
    const page = await freshPage();
    await page.goto(tandem.url);
    await signIn(page, addUser(tandem, 'bob'));
    await page.getByTestId('more').waitFor();
    assert.equal(await byId(page, 'session-item').count(), 0);
    await page.goto(`${tandem.url}/#/sessions/${adaSession}`);
    const status = await page.evaluate(
      async (id) => (await fetch(`/api/sessions/${id}`)).status,
      adaSession,
    );
    assert.equal(status, 404, "ada's session is unknown to bob");
    await shot(page, '55-other-user');
  });

  it('signs an open page out the moment its user is revoked', async () => {
    const token = addUser(tandem, 'cleo');
    const page = await freshPage();
    await page.goto(tandem.url);
    await signIn(page, token);
    await page.getByTestId('more').waitFor();
    await startSession(page, 'what time is it');
    await idle(page);
    execFileSync(tandemBin(), ['--database-url', tandem.databaseUrl, 'users', 'revoke', 'cleo']);
    // The socket closes at once (1008) and the page asks who it is: no waiting for a poll.
    await page.getByRole('heading', { name: 'Sign in to Tandem' }).waitFor({ timeout: 2000 });
    await page.getByText('Your sign-in has ended').waitFor();
    await shot(page, '55b-revoked');
  });

  it('tears the workspace down mid-answer without a page error, signed out or revoked', async () => {
    // What the page scheduled while an answer streams (the next paint's batch of frames,
    // a measure of the header, a request's answer) comes after the workspace is gone, and
    // must find it gone rather than read it (a panic: "unreachable" in the page's errors).
    const token = addUser(tandem, 'dora');
    const page = await freshPage();
    await page.goto(tandem.url);
    for (let round = 0; round < 3; round += 1) {
      await signIn(page, token);
      await page.getByTestId('more').waitFor();
      await startSession(page, 'hello');
      await byId(page, 'stop').waitFor();
      await (await moreMenu(page)).getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { name: 'Sign in to Tandem' }).waitFor();
    }
    await signIn(page, token);
    await page.getByTestId('more').waitFor();
    await startSession(page, 'hello');
    await byId(page, 'stop').waitFor();
    execFileSync(tandemBin(), ['--database-url', tandem.databaseUrl, 'users', 'revoke', 'dora']);
    await page.getByText('Your sign-in has ended').waitFor();
  });

  it('raised no page errors', () => {
    assert.deepEqual(errorLists.flat(), []);
  });
});

describe('a run waiting for a free slot', () => {
  let busy;
  before(async () => {
    busy = await startTandem({
      port: await freePort(),
      args: ['--engine', 'demo', '--token-delay-ms', '60', '--max-concurrent-runs', '1', '--web-dir', webDir()],
    });
  });
  after(async () => busy?.stop('SIGKILL'));

  it('shows the run as queued until it starts', async () => {
    const first = await freshPage();
    const second = await freshPage();
    for (const page of [first, second]) await page.goto(busy.url);
    await startSession(first, 'hello there');
    await first.locator('[data-testid=assistant-message].streaming').waitFor();
    await startSession(second, 'hello too');
    const queued = byId(second, 'queued');
    await queued.waitFor();
    assert.match(await queued.textContent(), /Queued.*1st in line/);
    await shot(second, '56-queued');
    await queued.waitFor({ state: 'detached' });
    await idle(second);
    assert.equal(await byId(second, 'queued').count(), 0);
  });
});
