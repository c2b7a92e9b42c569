// Conformance checks of a recorded Tandem event log against the real AG-UI 1.0 packages:
// each returns a list of human-readable problems (empty when the log conforms), so a
// failing test says exactly which event broke which rule.

import { isDeepStrictEqual } from 'node:util';
import { enforceEvents, verifyEvents } from '@ag-ui/client';
import { EventSchemas } from '@ag-ui/core/schemas';
import { from, lastValueFrom, tap, toArray } from 'rxjs';

const describe = (row) => `seq ${row.seq} (${row.event?.type})`;

/** Every event parses with `EventSchemas` and nothing is stripped or added on the way. */
export function schemaProblems(rows) {
  const problems = [];
  for (const row of rows) {
    const parsed = EventSchemas.safeParse(row.event);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '<root>'}: ${i.message}`);
      problems.push(`${describe(row)} fails EventSchemas: ${issues.join('; ')}`);
    } else if (!isDeepStrictEqual(parsed.data, row.event)) {
      problems.push(
        `${describe(row)} changes when parsed (unknown or coerced keys):\n  sent   ${JSON.stringify(row.event)}` +
          `\n  parsed ${JSON.stringify(parsed.data)}`,
      );
    }
  }
  return problems;
}

/**
 * Pipes the stream through the client's own `enforceEvents` stage, which strips keys the
 * protocol does not describe (EventSchemas alone lets them pass) and drops unknown event
 * types, warning on the console. Any change to an event, or any warning, is a problem.
 */
export async function enforceProblems(rows) {
  const warnings = [];
  const warn = console.warn;
  console.warn = (...args) => warnings.push(args.join(' '));
  try {
    const out = await lastValueFrom(from(rows.map((r) => r.event)).pipe(enforceEvents(false), toArray()));
    const problems = warnings.map((w) => `@ag-ui/client warned: ${w}`);
    if (out.length !== rows.length) {
      return [...problems, `enforceEvents kept ${out.length} of ${rows.length} events`];
    }
    rows.forEach((row, i) => {
      if (out[i] && !isDeepStrictEqual(out[i], row.event)) {
        problems.push(`${describe(row)} changed by enforceEvents: ${JSON.stringify(out[i])}`);
      }
    });
    return problems;
  } finally {
    console.warn = warn;
  }
}

/**
 * Pipes the whole stream through `verifyEvents` from @ag-ui/client. Resolves with `[]` when
 * it completes and passes every event through unchanged, else with the event it refused.
 */
export async function verifyProblems(rows) {
  let passed = 0;
  try {
    const out = await lastValueFrom(
      from(rows.map((r) => r.event)).pipe(
        verifyEvents(false),
        tap(() => passed++),
        toArray(),
      ),
    );
    if (out.length !== rows.length) {
      return [`verifyEvents passed ${out.length} of ${rows.length} events without an error`];
    }
    return [];
  } catch (error) {
    const row = rows[passed];
    return [`verifyEvents refused ${row ? describe(row) : 'the end of the stream'}: ${error.message}` +
      (row ? `\n  event ${JSON.stringify(row.event)}` : '')];
  }
}

/** Paths of every `null` inside `value`. */
export function nullPaths(value, at = '') {
  if (value === null) return [at || '<root>'];
  if (typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([k, v]) => nullPaths(v, `${at}/${k}`));
}

export function nullProblems(rows) {
  return rows.flatMap((row) => nullPaths(row.event).map((p) => `${describe(row)} has null at ${p}`));
}

export function timestampProblems(rows) {
  return rows
    .filter((row) => !Number.isInteger(row.event.timestamp) || row.event.timestamp <= 0)
    .map((row) => `${describe(row)} has timestamp ${JSON.stringify(row.event.timestamp)}`);
}

export function seqProblems(rows) {
  return rows
    .map((row, i) => (row.seq === i + 1 ? null : `position ${i} has seq ${row.seq}, expected ${i + 1}`))
    .filter(Boolean);
}

/** Splits the log into runs: each starts at a RUN_STARTED. */
export function splitRuns(rows) {
  const runs = [];
  for (const row of rows) {
    if (row.event.type === 'RUN_STARTED' || runs.length === 0) runs.push([]);
    runs[runs.length - 1].push(row);
  }
  return runs;
}

const TERMINAL = new Set(['RUN_FINISHED', 'RUN_ERROR']);

/** Each run ends with exactly one terminal event, and it is the run's last event. */
export function terminalProblems(rows) {
  return splitRuns(rows).flatMap((run, i) => {
    const last = run[run.length - 1];
    const terminals = run.filter((r) => TERMINAL.has(r.event.type));
    const problems = [];
    if (run[0].event.type !== 'RUN_STARTED') problems.push(`run ${i} starts with ${describe(run[0])}`);
    if (!TERMINAL.has(last.event.type)) problems.push(`run ${i} ends with ${describe(last)}, not a terminal event`);
    if (terminals.length !== 1) problems.push(`run ${i} has ${terminals.length} terminal events`);
    return problems;
  });
}

/** The text of each message id, joined from its content deltas. */
export function messageTexts(rows, type = 'TEXT_MESSAGE_CONTENT') {
  const texts = new Map();
  for (const { event } of rows) {
    if (event.type === type) texts.set(event.messageId, (texts.get(event.messageId) ?? '') + event.delta);
  }
  return texts;
}

/** The role each TEXT_MESSAGE_START gave its message. */
export function assistantTexts(rows) {
  const roles = new Map(
    rows.filter((r) => r.event.type === 'TEXT_MESSAGE_START').map((r) => [r.event.messageId, r.event.role]),
  );
  return [...messageTexts(rows)].filter(([id]) => roles.get(id) === 'assistant').map(([, text]) => text);
}
