// A test client for Tandem's session WebSocket (`/api/sessions/{id}/ws?after=N`): keeps
// every server frame it receives, in order, and lets a test await the first frame that
// matches a predicate. Waiting is driven by incoming frames; the timeout is a safety net.

import WebSocket from 'ws';

/** Safety net only. */
const WAIT_TIMEOUT_MS = 20_000;

export class SessionSocket {
  /** Opens a socket on `baseUrl` (http://host:port) for `sessionId`, replaying after `after`. */
  static async open(baseUrl, sessionId, after = 0) {
    const url = `${baseUrl.replace(/^http/, 'ws')}/api/sessions/${sessionId}/ws?after=${after}`;
    const socket = new SessionSocket(new WebSocket(url));
    await new Promise((resolve, reject) => {
      socket.ws.once('open', resolve);
      socket.ws.once('error', reject);
    });
    return socket;
  }

  constructor(ws) {
    this.ws = ws;
    /** Every parsed server frame, in arrival order. */
    this.frames = [];
    this.waiters = [];
    this.closed = new Promise((resolve) => ws.once('close', (code) => resolve(code)));
    ws.on('message', (data, isBinary) => this.#receive(data, isBinary));
    ws.on('close', () => this.#failWaiters(new Error('the socket closed while a test waited on it')));
    ws.on('error', () => {});
  }

  /** The `event` frames only. */
  get events() {
    return this.frames.filter((f) => f.kind === 'event');
  }

  /** The highest event seq received so far (0 if none). */
  get lastSeq() {
    const events = this.events;
    return events.length ? events[events.length - 1].seq : 0;
  }

  send(frame) {
    this.ws.send(JSON.stringify(frame));
  }

  /** Resolves with the first frame, from index `from` on, that satisfies `predicate`. */
  waitFor(predicate, { from = 0, what = 'a matching frame' } = {}) {
    const found = this.frames.slice(from).find(predicate);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter = { predicate, resolve, reject };
      waiter.timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        const tail = this.frames.slice(-5).map((f) => JSON.stringify(f)).join('\n');
        reject(new Error(`timed out waiting for ${what}; last frames:\n${tail}`));
      }, WAIT_TIMEOUT_MS);
      this.waiters.push(waiter);
    });
  }

  /** Resolves with the first event frame after seq `after` whose event satisfies `predicate`. */
  waitForEvent(after, predicate, what) {
    return this.waitFor((f) => f.kind === 'event' && f.seq > after && predicate(f.event), { what });
  }

  /** Closes the socket and resolves once it is closed. */
  async close() {
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.close();
    await this.closed;
  }

  #receive(data, isBinary) {
    const frame = isBinary ? { kind: 'binary' } : JSON.parse(data.toString('utf8'));
    this.frames.push(frame);
    for (const waiter of [...this.waiters]) {
      if (waiter.predicate(frame)) {
        clearTimeout(waiter.timer);
        this.waiters = this.waiters.filter((w) => w !== waiter);
        waiter.resolve(frame);
      }
    }
  }

  #failWaiters(error) {
    for (const waiter of this.waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiters = [];
  }
}

export const isTerminal = (event) => event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR';
