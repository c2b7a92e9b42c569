// Proves, in headless Chromium against the real binary (demo engine, built page), that a
// person sees what the model can call and adds a tool of their own from the page: the
// "More" menu's Tools… lists the tools by where they come from, each with its arguments'
// schema; a manifest and a module uploaded become "Yours", which the model then calls
// (the script engine's turn names it); a bad module is refused with the server's reason;
// Delete takes it away. Driven by roles and visible text; axe-core checks both colour
// schemes. Screenshots: target/browser/102-*-<light|dark>-<desktop|phone>.png.

import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

import { axeBothSchemes } from '../support/axe.mjs';
import { idle, moreMenu, shots, startSession, tandemWithPage } from '../support/browser.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
// The sandbox's test tools (tests/wasm-tools), built by the test command: `echo` by name.
const TOOLBOX = path.join(repoRoot, 'target/wasm32-wasip1/release/tandem-wasm-tools.wasm');

let app;
let page;
let files;

before(async () => {
  files = mkdtempSync(path.join(tmpdir(), 'tandem-tools-'));
  const script = path.join(files, 'script.json');
  writeFileSync(script, JSON.stringify({
    turns: [
      { toolCalls: [{ name: 'echo', arguments: { say: 'from my own tool' } }] },
      { text: 'The echo came back.' },
    ],
  }));
  writeFileSync(path.join(files, 'echo.json'), JSON.stringify({
    description: 'Says back what it is given.',
    parameters: { type: 'object', properties: { say: { type: 'string' } } },
  }));
  writeFileSync(path.join(files, 'bad.wasm'), 'not a module');
  app = await tandemWithPage(['--engine', 'script', '--script', script]);
  ({ page } = app);
});

after(() => app?.stop());

async function toolsDialog() {
  const menu = await moreMenu(page);
  await menu.getByRole('button', { name: 'Tools…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Tools' });
  await dialog.getByRole('heading', { name: 'Built in' }).waitFor();
  return dialog;
}

async function upload(dialog, name, module) {
  await dialog.getByRole('textbox', { name: 'Name' }).fill(name);
  await dialog.getByLabel('Manifest (.json)').setInputFiles(path.join(files, 'echo.json'));
  await dialog.getByLabel('Module (.wasm)').setInputFiles(module);
  await dialog.getByRole('button', { name: 'Upload' }).click();
}

describe('the tools dialog', () => {
  it('lists what the model can call and adds a tool of one’s own, which the model calls', async () => {
    const dialog = await toolsDialog();
    const calculator = dialog.getByTestId('tool-row').filter({ hasText: 'calculator' });
    await calculator.getByText('calculator').click();
    await calculator.getByLabel('Arguments of calculator').waitFor();
    assert.match(await calculator.getByLabel('Arguments of calculator').textContent(), /"expression"/);

    await upload(dialog, 'echo', path.join(files, 'bad.wasm'));
    await dialog.getByRole('alert').filter({ hasText: 'not a WebAssembly module' }).waitFor();

    await upload(dialog, 'echo', TOOLBOX);
    await dialog.getByText('Uploaded echo').waitFor();
    const yours = dialog.getByRole('region', { name: 'Yours' });
    await yours.getByText('echo').waitFor();
    await yours.getByText('echo').click();
    await yours.getByText('Says back what it is given.').waitFor();
    await dialog.evaluate((element) => element.scrollTo(0, 0));
    await shots(page, '102-tools-dialog');
    await axeBothSchemes(page);
    await dialog.getByRole('button', { name: 'Close' }).click();

    await startSession(page, 'call my tool');
    await page.getByText('The echo came back.').waitFor();
    await idle(page);
    const card = page.getByTestId('tool-call').filter({ hasText: 'echo' });
    assert.match(await card.getByTestId('tool-result').textContent(), /from my own tool/);

    const again = await toolsDialog();
    await again.getByRole('button', { name: 'Delete echo' }).click();
    await again.getByText('Deleted echo.').waitFor();
    assert.equal(await again.getByRole('region', { name: 'Yours' }).count(), 0);
    assert.deepEqual(app.errors, []);
  });
});
