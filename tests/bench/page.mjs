// Time to first transcript paint, for tandem-bench (figure 8): opens a session page in
// headless Chromium (cold: a fresh context each time, so nothing is cached) and reports,
// relative to navigation start, when the server-rendered transcript (index.html's
// first-paint layer, the whole transcript at once) is on screen, when the page's own first
// message is and when its whole transcript is (the last assistant message there and no
// longer streaming), and when the session's history had arrived (the end of the page's first
// `/events` response), which splits loading from folding and painting. Prints one JSON
// object on stdout: {previewMs, firstPaintMs, fullPaintMs, historyMs, loads},
// {notMeasured: why} without Chromium, or {error}.
//
// Usage: node tests/bench/page.mjs --url http://host:port/#/sessions/<id> --messages <n> [--reps 3]

import { parseArgs } from 'node:util';

import { launchBrowser, newContext } from '../support/browser.mjs';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    messages: { type: 'string' },
    reps: { type: 'string', default: '3' },
  },
});

/** How long one load may take before the figure fails, naming what it waited for. */
const LOAD_LIMIT_MS = 60_000;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Polls every animation frame: the first frame a condition holds is when it is painted. */
function watchTranscript(messages) {
  const stamp = () => performance.now();
  return new Promise((resolve) => {
    let first = null;
    let preview = null;
    const tick = () => {
      if (first === null && document.querySelector('[data-testid=user-message]')) first = stamp();
      if (preview === null && document.querySelector('[data-testid=first-paint] .bubble-user')) preview = stamp();
      const answers = document.querySelectorAll('[data-testid=assistant-message]');
      const last = answers[messages - 1];
      if (last && !last.classList.contains('streaming')) {
        const history = performance.getEntriesByType('resource').find((r) => r.name.includes('/events?'));
        resolve({ previewMs: preview, firstPaintMs: first ?? stamp(), fullPaintMs: stamp(), historyMs: history?.responseEnd ?? null });
        return;
      }
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
}

async function load(browser, url, messages) {
  const { context, errors } = await newContext(browser);
  try {
    const page = await context.newPage();
    await page.addInitScript(`window.__watch = ${watchTranscript.toString()}(${messages});`);
    await page.goto(url, { waitUntil: 'commit' });
    const painted = page.evaluate(async () => {
      while (!window.__watch) await new Promise((r) => setTimeout(r, 1));
      return window.__watch;
    });
    let timer;
    const late = new Promise((_, reject) => {
      timer = setTimeout(async () => {
        const seen = await page.locator('[data-testid=assistant-message]').count().catch(() => '?');
        const why = errors.length ? `; page errors: ${errors.join('; ')}` : '';
        reject(new Error(`the transcript of ${messages} messages was not painted within ${LOAD_LIMIT_MS / 1000} s (${seen} assistant messages on screen${why})`));
      }, LOAD_LIMIT_MS);
    });
    const timing = await Promise.race([painted, late]).finally(() => clearTimeout(timer));
    if (errors.length) throw new Error(errors.join('; '));
    return timing;
  } finally {
    await context.close();
  }
}

async function main() {
  const messages = Number(values.messages);
  if (!values.url || !(messages > 0)) throw new Error('usage: --url <session page> --messages <n>');
  let browser;
  try {
    browser = await launchBrowser();
  } catch (error) {
    return { notMeasured: error.message };
  }
  try {
    const loads = [];
    for (let i = 0; i < Number(values.reps); i += 1) loads.push(await load(browser, values.url, messages));
    return {
      previewMs: median(loads.map((l) => l.previewMs ?? Number.NaN)),
      firstPaintMs: median(loads.map((l) => l.firstPaintMs)),
      fullPaintMs: median(loads.map((l) => l.fullPaintMs)),
      historyMs: median(loads.map((l) => l.historyMs ?? Number.NaN)),
      loads,
    };
  } finally {
    await browser.close();
  }
}

main()
  .then((result) => process.stdout.write(`${JSON.stringify(result)}\n`))
  .catch((error) => {
    process.stdout.write(`${JSON.stringify({ error: String(error?.message ?? error) })}\n`);
    process.exitCode = 1;
  });
