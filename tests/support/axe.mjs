// Accessibility checks with axe-core (npm, pinned) on the live page. The script is run
// through the DevTools protocol (Playwright's evaluate), which the page's strict CSP does
// not apply to, so the page under test keeps its real CSP.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

/**
 * The serious and critical violations axe-core finds on the page as it is now, one line
 * each (rule, help, first few elements), so a failing assertion says what to fix.
 */
export async function seriousViolations(page) {
  const loaded = await page.evaluate(() => typeof window.axe !== 'undefined');
  if (!loaded) await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} — ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(' | ')}`);
}

/** Asserts no serious or critical violation in the light and in the dark colour scheme. */
export async function axeBothSchemes(page) {
  for (const colorScheme of ['light', 'dark']) {
    await page.emulateMedia({ colorScheme });
    assert.deepEqual(await seriousViolations(page), [], `axe-core, ${colorScheme}`);
  }
  await page.emulateMedia({ colorScheme: null });
}
