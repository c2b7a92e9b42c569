//! The figures of issue 5 (1–8), issue 11 (9–10, PostgreSQL and several instances) and
//! issue 12 (11, bursts; 12, long sessions; 13, CPU per event; 14, latency under a slow
//! viewer and a reconnect storm), issue 27 (15, branches), issue 28 (16, attachments)
//! issue 54 (17, the WebAssembly sandbox), issue 55 (18, tracing's cost), issue 56
//! (19, schedules due at once) and issue 57 (20, replays),
//! each measured next to its baseline in the same run.
//!
//! A figure returns its table rows, or an error when it could not run or saw a
//! correctness problem (lost, duplicated or out-of-order frames); `main` turns such an
//! error into a failed row and a non-zero exit. A figure that cannot be measured on this
//! machine (no Node, no Chromium) returns a "not measured" row instead. Figures never
//! fail the run because of a number.

mod attachments;
mod branches;
mod burst;
mod capacity;
mod cpu;
mod disturb;
mod disturbed;
mod history;
mod instances;
mod latency;
mod live;
mod memory;
mod page;
mod pairs;
mod persistence;
mod postgres;
mod replays;
mod restart;
mod resume;
mod sandbox;
mod schedules;
mod streaming;
mod traces;

use std::time::Duration;

use tokio::runtime::Runtime;

use crate::report::Row;

/// How big each measurement is: the full run, or the smoke test's tiny version.
#[derive(Debug, Clone)]
pub struct Scale {
    /// Events in the replayed backlog (figure 1) and repetitions.
    pub backlog: usize,
    pub stream_reps: usize,
    /// Live sessions per latency measurement, tokens each (at 50/s), tokens ignored first.
    pub latency_sessions: Vec<usize>,
    pub latency_tokens: u64,
    pub warmup_tokens: u64,
    /// Concurrent sessions and measuring time of the persistence figures, and how many
    /// alternating pairs (Tandem, then plain inserts) PostgreSQL's (figure 9a) is
    /// measured by.
    pub persist_sessions: usize,
    pub persist_time: Duration,
    pub persist_pairs: usize,
    /// Session counts tried for capacity, tokens per session, and the time budget.
    pub capacity_steps: Vec<usize>,
    pub capacity_tokens: u64,
    pub capacity_budget: Duration,
    /// (backlog, reconnects) pairs of the resume figure.
    pub resume: Vec<(usize, usize)>,
    /// Paused sessions in the database at restart.
    pub restart_paused: usize,
    /// Idle sockets, live sessions, paused sessions and the unread stream of figure 7.
    pub idle_sockets: usize,
    pub live_sessions: usize,
    pub paused_sessions: usize,
    pub unread_tokens: u64,
    /// The sessions the page paints, as (turns, answer tokens a turn), and page loads.
    pub page_sessions: Vec<(u64, u64)>,
    pub page_reps: usize,
    /// Sessions sent a message at once, tokens in each reply, and how many alternating
    /// pairs of bursts (Tandem, then the no-op store) each count is measured by, five
    /// times as many below 20 sessions (figure 11).
    pub burst_sessions: Vec<usize>,
    pub burst_tokens: u64,
    pub burst_pairs: usize,
    /// Events in the sessions whose model-call set-up is timed (figure 12).
    pub history_events: Vec<usize>,
    /// Sessions of the burst whose server CPU time is measured (figure 13).
    pub cpu_sessions: usize,
    /// Live sessions measured under disturbance, and the storm's sockets (figure 14).
    pub disturbed_sessions: usize,
    pub storm_sockets: usize,
}

impl Scale {
    /// The real measurement.
    pub fn full() -> Self {
        Self {
            backlog: 100_000,
            stream_reps: 3,
            latency_sessions: vec![1, 100, 1000],
            latency_tokens: 400,
            warmup_tokens: 25,
            persist_sessions: 500,
            persist_time: Duration::from_secs(5),
            persist_pairs: 5,
            capacity_steps: vec![50, 100, 250, 500, 1000, 1500, 2000, 3000, 4000],
            capacity_tokens: 250,
            capacity_budget: Duration::from_secs(180),
            resume: vec![(1_000, 100), (100_000, 10)],
            restart_paused: 10_000,
            idle_sockets: 1_000,
            live_sessions: 500,
            paused_sessions: 1_000,
            unread_tokens: 600_000,
            page_sessions: vec![(20, 91), (200, 21)],
            page_reps: 3,
            burst_sessions: vec![10, 100, 500],
            burst_tokens: 500,
            burst_pairs: 5,
            history_events: vec![1_000, 10_000, 100_000],
            cpu_sessions: 100,
            disturbed_sessions: 100,
            storm_sockets: 500,
        }
    }

    /// Seconds, not minutes: only checks that everything runs and frames are right.
    pub fn smoke() -> Self {
        Self {
            backlog: 2_000,
            stream_reps: 1,
            latency_sessions: vec![1, 10],
            latency_tokens: 20,
            warmup_tokens: 2,
            persist_sessions: 20,
            persist_time: Duration::from_millis(300),
            persist_pairs: 1,
            capacity_steps: vec![20],
            capacity_tokens: 20,
            capacity_budget: Duration::from_secs(10),
            resume: vec![(100, 3), (1_000, 2)],
            restart_paused: 200,
            idle_sockets: 20,
            live_sessions: 10,
            paused_sessions: 10,
            unread_tokens: 2_000,
            page_sessions: vec![(2, 91), (4, 5)],
            page_reps: 1,
            burst_sessions: vec![10],
            burst_tokens: 50,
            burst_pairs: 1,
            history_events: vec![1_000],
            cpu_sessions: 10,
            disturbed_sessions: 5,
            storm_sockets: 10,
        }
    }
}

/// What every figure gets.
pub struct Ctx {
    pub scale: Scale,
    pub smoke: bool,
    /// The clients' runtime: one thread, apart from the app's.
    pub client: Runtime,
}

/// A figure: its key (for `--only`), its title and how to measure it.
pub struct Figure {
    pub key: &'static str,
    pub title: &'static str,
    pub run: fn(&Ctx) -> anyhow::Result<Vec<Row>>,
}

/// Every figure, in the order.
pub const ALL: [Figure; 22] = [
    Figure {
        key: "streaming",
        title: "1. streaming throughput",
        run: streaming::run,
    },
    Figure {
        key: "latency",
        title: "2. token latency",
        run: latency::run,
    },
    Figure {
        key: "persistence",
        title: "3. persistence throughput",
        run: persistence::run,
    },
    Figure {
        key: "capacity",
        title: "4. capacity",
        run: capacity::run,
    },
    Figure {
        key: "resume",
        title: "5. resume",
        run: resume::run,
    },
    Figure {
        key: "restart",
        title: "6. restart",
        run: restart::run,
    },
    Figure {
        key: "memory",
        title: "7. memory",
        run: memory::run,
    },
    Figure {
        key: "page",
        title: "8. page",
        run: page::run,
    },
    Figure {
        key: "postgres",
        title: "9. PostgreSQL",
        run: postgres::run,
    },
    Figure {
        key: "postgres-capacity",
        title: "9c–d. PostgreSQL capacity",
        run: postgres::capacity_rows,
    },
    Figure {
        key: "postgres-burst",
        title: "9e. PostgreSQL burst",
        run: postgres::burst_rows,
    },
    Figure {
        key: "instances",
        title: "10. several instances",
        run: instances::run,
    },
    Figure {
        key: "burst",
        title: "11. burst",
        run: burst::run,
    },
    Figure {
        key: "history",
        title: "12. long sessions",
        run: history::run,
    },
    Figure {
        key: "cpu",
        title: "13. CPU per event",
        run: cpu::run,
    },
    Figure {
        key: "disturbed",
        title: "14. latency under disturbance",
        run: disturbed::run,
    },
    Figure {
        key: "branches",
        title: "15. branches",
        run: branches::run,
    },
    Figure {
        key: "attachments",
        title: "16. attachments",
        run: attachments::run,
    },
    Figure {
        key: "sandbox",
        title: "17. the WebAssembly sandbox",
        run: sandbox::run,
    },
    Figure {
        key: "traces",
        title: "18. token latency with traces exported",
        run: traces::run,
    },
    Figure {
        key: "schedules",
        title: "19. schedules due at once",
        run: schedules::run,
    },
    Figure {
        key: "replays",
        title: "20. replays",
        run: replays::run,
    },
];
