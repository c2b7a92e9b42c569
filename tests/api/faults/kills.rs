//! The kill harness: the real `tandem` binary, SIGKILLed at random moments while four
//! sessions stream reasoning, text and tool calls, restarted on the same database each
//! time. On PostgreSQL three instances share the database: each cycle's runs go to one
//! of them, viewers watch through any of them, and each kill hits a random instance.
//! When it hits the one executing the runs, that instance either restarts at once (by
//! its name it takes its runs back) or stays down until another instance took them over
//! (their leases lapse after a second); a kill of another instance only moves its
//! viewers. Either way every run continues exactly once. Whether a kill hit a session's
//! run is read from the lease table at the kill, not assumed: on a loaded machine a
//! restart can outlast a lease, and then another instance executes the runs.
//!
//! Every cycle posts a message to each session, and behind it, while its run works,
//! queued messages and sometimes a steering one; waits a random 20–400 ms (the
//! experiment's randomness, not synchronisation), kills, restarts and reconnects every
//! viewer with `after=<its last seq>`; sometimes it kills again while the recovered runs
//! are still going, and once it kills the same runs four times in a row to reach the
//! recovery limit: each time every instance executing one (another may have taken some
//! over while a restart outlasted a lease), each kill after the first once the runs were
//! taken back. For that cycle every instance streams ten times slower, so that a run
//! taken back cannot end before the next kill, however loaded the machine; the streak
//! must leave a run that was in flight at all four kills, and that run must end with
//! `recovery_limit`. After each cycle it waits on the sockets until every run has ended and
//! checks (a) the viewers' frames against the log, (b) contiguous seqs, (c) exact
//! replays, (d) ended runs, settled status and an empty queue, (e) the AG-UI rules. The
//! continuation rules, the `append_file` check (f) and (g) every message sent exactly once
//! and in order (queued ones in the order sent, after the message they waited behind; a
//! steering one once, in its run or after it) read the final logs, which hold every
//! earlier cycle.
//!
//! `TANDEM_FAULT_KILLS=<n>` raises the number of kills (default 50);
//! `TANDEM_FAULT_SEED=<n>` replays a run's random choices.

use std::collections::HashMap;
use std::ops::RangeInclusive;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::kill_script::{self, APPEND_FILE};
use super::lease_holders::{Holder, LeaseHolders};
use super::log_checks::{self, Recovery};
use super::queue_checks::{self, Sent};
use super::tool_checks::{self, Repairs};
use super::viewer::Viewer;
use crate::helpers::child::Tandem;
use crate::helpers::write_script;

const SESSIONS: usize = 4;
/// Instances sharing the database on PostgreSQL (SQLite has one).
const INSTANCES: usize = 3;
const DEFAULT_KILLS: usize = 50;
/// Kills in a row that must end a run with `recovery_limit` (three continuations).
const STREAK: usize = 4;
/// Each token's delay, in ms: runs of a few hundred ms, so kills land mid-stream.
const TOKEN_DELAY_MS: u64 = 2;
/// Each token's delay during the streak: a taken-back run's model call then streams for
/// about a second, far longer than the harness takes to see its marker and kill again.
const STREAK_TOKEN_DELAY_MS: u64 = 20;
/// Replay every session from seq 0 on every this many checks.
const FULL_REPLAY_EVERY: u64 = 10;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_at_random_moments_loses_nothing_and_runs_continue() {
    let kills = env_number("TANDEM_FAULT_KILLS").unwrap_or(DEFAULT_KILLS as u64) as usize;
    let seed = env_number("TANDEM_FAULT_SEED").unwrap_or_else(|| fastrand::u64(..));
    println!("faults/kills: {kills} kills, seed {seed}");
    let started = Instant::now();
    let mut h = Harness::start(kills, seed).await;
    let mut streak_done = kills < STREAK * 2;
    while h.tally.kills < kills {
        let streak = !streak_done && h.tally.kills >= kills / 2 && kills - h.tally.kills >= STREAK;
        if streak {
            h.pace(STREAK_TOKEN_DELAY_MS).await;
        }
        h.post_all().await;
        if streak {
            streak_done = true;
            // The first kill lets the runs start; each later one follows the marker of
            // the run taken back, before the run can end.
            h.kill_after(20..=40, true).await;
            h.note_streak_kill();
            for _ in 1..STREAK {
                h.await_continuations().await;
                h.kill_after(0..=10, true).await;
                h.note_streak_kill();
            }
        } else {
            h.kill_after(20..=400, false).await;
            if h.rng.u8(..5) == 0 && h.tally.kills < kills && !h.taken_over {
                h.kill_after(20..=400, false).await;
            }
        }
        h.check().await;
        h.restart_the_down().await;
        if streak {
            h.pace(TOKEN_DELAY_MS).await;
        }
    }
    h.finish(seed, started.elapsed()).await;
}

#[derive(Default)]
struct Tally {
    kills: usize,
    restarts: usize,
    checks: u64,
    events: u64,
    frames: u64,
    /// Runs found in flight at a kill (one per session and kill).
    in_flight: u64,
    /// Kills after which another instance took the runs over (PostgreSQL).
    takeovers: usize,
}

struct Harness {
    dir: crate::helpers::TestDir,
    url: String,
    script: PathBuf,
    /// The instances; `None` while one stays down for a takeover.
    instances: Vec<Option<Tandem>>,
    /// The instance this cycle's runs were posted to.
    runner: usize,
    /// Whether the runs were taken over by another instance this cycle (then who
    /// executes them is not known here, and the cycle has no more kills).
    taken_over: bool,
    viewers: Vec<Viewer>,
    /// The instance each viewer watches through.
    watching: Vec<usize>,
    rng: fastrand::Rng,
    tally: Tally,
    /// When each kill since the last check happened (ms since the epoch), and for each
    /// session whether it hit the instance executing its run.
    kills_unchecked: Vec<(i64, Vec<bool>)>,
    /// Who executes each session's run (read at each kill, not assumed).
    leases: LeaseHolders,
    /// Broken continuation rules, reported at the end.
    problems: Vec<String>,
    /// What each session was sent, in order.
    sent: Vec<Vec<Sent>>,
    /// The last seq each viewer had seen at the last kill.
    seen_at_last_kill: Vec<u64>,
    /// Each kill of the streak: when, and whether it hit each session's run.
    streak_kills: Vec<(i64, Vec<bool>)>,
    /// The token delay the instances run with, in ms.
    token_delay_ms: u64,
}

impl Harness {
    async fn start(kills: usize, seed: u64) -> Self {
        let (dir, url) = crate::helpers::fresh_database();
        // A cycle uses at most a few turns per session; run out only on a broken server.
        let script = write_script(dir.path(), kill_script::turns(kills * 24 + 40));
        let count = if crate::helpers::on_postgres() {
            INSTANCES
        } else {
            1
        };
        let mut instances = Vec::new();
        for slot in 0..count {
            let instance = launch(&url, &script, dir.path(), slot, TOKEN_DELAY_MS).await;
            instances.push(Some(instance));
        }
        let leases = LeaseHolders::connect(&url).await;
        let mut rng = fastrand::Rng::with_seed(seed);
        let app = instances[0].as_ref().unwrap().client();
        let (mut viewers, mut watching) = (Vec::new(), Vec::new());
        for _ in 0..SESSIONS {
            let mut viewer = Viewer::new(app.create_session().await);
            let through = rng.usize(..count);
            viewer
                .connect(instances[through].as_ref().unwrap().address())
                .await;
            viewers.push(viewer);
            watching.push(through);
        }
        Self {
            dir,
            url,
            script,
            instances,
            runner: 0,
            taken_over: false,
            viewers,
            watching,
            rng,
            tally: Tally::default(),
            kills_unchecked: Vec::new(),
            leases,
            problems: Vec::new(),
            sent: vec![Vec::new(); SESSIONS],
            seen_at_last_kill: vec![0; SESSIONS],
            streak_kills: Vec::new(),
            token_delay_ms: TOKEN_DELAY_MS,
        }
    }

    /// A client of an instance that is up.
    fn any_client(&self) -> crate::helpers::TestApp {
        let up = self.instances.iter().flatten().next();
        up.expect("an instance is up").client()
    }

    /// Starts a run in every session (all are idle between cycles), all on one instance,
    /// and sends each, while it runs, a queued message, and sometimes a steering one and
    /// a second queued one.
    async fn post_all(&mut self) {
        self.runner = self.rng.usize(..self.instances.len());
        self.taken_over = false;
        let app = self.instances[self.runner].as_ref().unwrap().client();
        let cycle = self.tally.checks;
        for (at, viewer) in self.viewers.iter().enumerate() {
            let mut sent = vec![Sent::first(cycle), Sent::queued(cycle, 'a')];
            if self.rng.bool() {
                sent.push(Sent::steering(cycle));
            }
            if self.rng.bool() {
                sent.push(Sent::queued(cycle, 'b'));
            }
            app.say(&viewer.session, &sent[0].text).await;
            for message in &sent[1..] {
                queue_checks::send(&app, &viewer.session, message).await;
            }
            self.sent[at].extend(sent);
        }
    }

    /// Waits a random time in `millis` and SIGKILLs an instance (`the_runners`: every
    /// instance executing a run, else a random one). Its viewers reconnect after their
    /// last seq, to it once restarted or to another. The runner may instead stay down
    /// until the others take its runs over (restarted after the check).
    async fn kill_after(&mut self, millis: RangeInclusive<u64>, the_runners: bool) {
        tokio::time::sleep(Duration::from_millis(self.rng.u64(millis))).await;
        let count = self.instances.len();
        let victims = if the_runners {
            // Every instance holding a run's lease: the runner, and any other that took
            // runs over while a restart outlasted a lease (each may hold a few), so that
            // each kill of a streak hits every run still in flight.
            let mut holders: Vec<usize> = self
                .lease_holders()
                .await
                .into_iter()
                .filter_map(Holder::instance)
                .collect();
            holders.sort_unstable();
            holders.dedup();
            if holders.is_empty() {
                vec![self.runner]
            } else {
                holders
            }
        } else {
            vec![self.rng.usize(..count)]
        };
        let hits_runner = victims.contains(&self.runner) && !self.taken_over;
        let stay_down = hits_runner && !the_runners && count > 1 && self.rng.u8(..3) == 0;
        for &victim in &victims {
            self.instances[victim].as_mut().unwrap().kill();
            self.instances[victim] = None;
        }
        let killed_at = now_ms();
        self.seen_at_last_kill = self.viewers.iter().map(Viewer::last_seq).collect();
        // Who executed each session's run when the victims died: its lease holder (it
        // cannot change until the lease lapses, a second from now); nobody when the
        // session ran nothing (a run another instance was starting just then, its first
        // event stamped before the kill, was not hit); the runner where no lease says.
        let holders = self.lease_holders().await;
        let hit = holders
            .iter()
            .map(|holder| match holder {
                Holder::Instance(slot) => victims.contains(slot),
                Holder::Nothing => false,
                Holder::Unknown => hits_runner,
            })
            .collect();
        self.kills_unchecked.push((killed_at, hit));
        self.tally.kills += 1;
        if !stay_down {
            for &victim in &victims {
                self.relaunch(victim).await;
            }
        }
        self.taken_over |= stay_down;
        self.tally.takeovers += usize::from(stay_down);
        self.reconnect_viewers_of(&victims).await;
    }

    /// Starts instance `slot` again, with the harness's token delay.
    async fn relaunch(&mut self, slot: usize) {
        let (url, script, dir) = (&self.url, &self.script, self.dir.path());
        let restarted = launch(url, script, dir, slot, self.token_delay_ms).await;
        self.instances[slot] = Some(restarted);
        self.tally.restarts += 1;
    }

    /// Reconnects every viewer that watched through one of the `killed` instances after
    /// its last seq, through an instance that is up.
    async fn reconnect_viewers_of(&mut self, killed: &[usize]) {
        let count = self.instances.len();
        for at in 0..self.viewers.len() {
            if !killed.contains(&self.watching[at]) {
                continue;
            }
            self.viewers[at].disconnected().await;
            let up: Vec<usize> = (0..count)
                .filter(|&i| self.instances[i].is_some())
                .collect();
            let through = up[self.rng.usize(..up.len())];
            let address = self.instances[through]
                .as_ref()
                .unwrap()
                .address()
                .to_string();
            self.viewers[at].connect(&address).await;
            self.watching[at] = through;
        }
    }

    /// Restarts every instance (idle between cycles) with a token delay of `millis`.
    async fn pace(&mut self, millis: u64) {
        self.token_delay_ms = millis;
        let all: Vec<usize> = (0..self.instances.len()).collect();
        for &slot in &all {
            self.instances[slot].as_mut().unwrap().kill();
            self.instances[slot] = None;
            self.relaunch(slot).await;
        }
        self.reconnect_viewers_of(&all).await;
    }

    /// Keeps when the last kill happened and which sessions' runs it hit, for the verdict
    /// on the streak.
    fn note_streak_kill(&mut self) {
        let kill = self.kills_unchecked.last().expect("a kill was just made");
        self.streak_kills.push(kill.clone());
    }

    /// Waits until every session still running after the last kill has its next word
    /// past it: a `tandem.run_recovered` marker (its run was taken back) or a run end.
    /// A streak's next kill then hits a continued run: killed before its instance took
    /// it back, a run counts no recovery, and four kills could end none at the limit.
    async fn await_continuations(&mut self) {
        let app = self.any_client();
        for (at, viewer) in self.viewers.iter_mut().enumerate() {
            let (_, detail) = app.get(&format!("/api/sessions/{}", viewer.session)).await;
            if detail["status"] == "running" {
                viewer.wait_continued(self.seen_at_last_kill[at]).await;
            }
        }
    }

    /// For each session, the instance holding its running run's lease (PostgreSQL).
    async fn lease_holders(&mut self) -> Vec<Holder> {
        let sessions = self.viewers.iter().map(|viewer| viewer.session.as_str());
        self.leases.of(sessions).await
    }

    /// Restarts an instance left down for a takeover.
    async fn restart_the_down(&mut self) {
        for slot in 0..self.instances.len() {
            if self.instances[slot].is_none() {
                self.relaunch(slot).await;
            }
        }
    }

    /// (a)–(e) for every session, once every run has ended and nothing is queued.
    async fn check(&mut self) {
        let app = self.any_client();
        self.tally.checks += 1;
        for (at, viewer) in self.viewers.iter_mut().enumerate() {
            queue_checks::wait_quiet(viewer, &app).await;
            let session = viewer.session.clone();
            let log = log_checks::raw_log(&app, &session).await;
            assert!(
                log_checks::quiet(&log),
                "session {session}: a run is still open"
            );
            log_checks::assert_contiguous_and_valid(&session, &log);
            for (killed_at, hit) in &self.kills_unchecked {
                let (killed_at, hit_runner) = (*killed_at, hit[at]);
                let problems = &mut self.problems;
                let open = log_checks::continued_after_kill(
                    &session, &log, killed_at, hit_runner, problems,
                );
                self.tally.in_flight += u64::from(open);
            }
            self.tally.events += log.len() as u64;
            let seen = viewer.frames();
            self.tally.frames += log_checks::assert_viewer_saw_the_log(&session, &seen, &log);
            let (_, detail) = app.get(&format!("/api/sessions/{session}")).await;
            let status = detail["status"].as_str().unwrap_or_default();
            assert!(
                matches!(status, "idle" | "awaiting_input"),
                "session {session} is {status} after its run ended"
            );
            let last = log.len() as u64;
            let mut points = vec![
                self.rng.u64(last.saturating_sub(200)..=last),
                last,
                last + 3,
            ];
            if self.tally.checks.is_multiple_of(FULL_REPLAY_EVERY) {
                points.push(0);
            }
            for after in points {
                let address = app.address.clone();
                self.tally.frames +=
                    log_checks::assert_replay(&address, &session, after, &log).await;
            }
        }
        self.kills_unchecked.clear();
    }

    /// Whether one run of session `at` was in flight at every kill of the streak, each of
    /// which hit it; such a run must have ended with `recovery_limit`.
    fn streak_verdict(&self, at: usize, log: &[(u64, Value)], problems: &mut Vec<String>) -> bool {
        let mut runs = self.streak_kills.iter().map(|(killed_at, hit)| {
            hit[at]
                .then(|| log_checks::run_in_flight_at(log, *killed_at))
                .flatten()
        });
        let Some(Some(run)) = runs.next() else {
            return false;
        };
        if !runs.all(|other| other.as_ref() == Some(&run)) {
            return false;
        }
        let ending = log_checks::run_ending(log, &run);
        if ending.as_deref() != Some("recovery_limit") {
            let session = &self.viewers[at].session;
            problems.push(format!(
                "session {session}: run {run} was hit by all {STREAK} kills of the streak \
                 and ended {ending:?}, not with recovery_limit"
            ));
        }
        true
    }

    /// The continuation rules and (f) over the final logs, the summary, the verdict.
    async fn finish(mut self, seed: u64, elapsed: Duration) {
        let app = self.any_client();
        let (mut problems, mut lines) = (std::mem::take(&mut self.problems), HashMap::new());
        let (mut recovery, mut repairs) = (Recovery::default(), Repairs::default());
        let mut streak_runs = Vec::new();
        for (at, viewer) in self.viewers.iter().enumerate() {
            let log = log_checks::raw_log(&app, &viewer.session).await;
            streak_runs.push(self.streak_verdict(at, &log, &mut problems));
            let found = log_checks::recovery_rules(&viewer.session, &log, &mut problems);
            recovery.continued += found.continued;
            recovery.failed += found.failed;
            recovery.limits += found.limits;
            tool_checks::check_results(&viewer.session, &log, &mut lines, &mut problems);
            queue_checks::sent_once_in_order(&viewer.session, &log, &self.sent[at], &mut problems);
            let found = tool_checks::check_recoveries(&viewer.session, &log, &mut problems);
            repairs.unknown += found.unknown;
            repairs.rerun += found.rerun;
            repairs.cut_off += found.cut_off;
            problems.extend(viewer.problems());
        }
        let file = self.dir.path().join("workspace/local").join(APPEND_FILE);
        let file = std::fs::read_to_string(file).unwrap_or_default();
        let appended = tool_checks::check_file(&file, &lines, &mut problems);
        if !self.streak_kills.is_empty() && !streak_runs.contains(&true) {
            let hits: Vec<&Vec<bool>> = self.streak_kills.iter().map(|(_, hit)| hit).collect();
            problems.push(format!(
                "no run was in flight at all {STREAK} kills of the streak \
                 (the kills hit, per kill and session: {hits:?})"
            ));
        }
        let t = &self.tally;
        let while_running = self
            .sent
            .iter()
            .flatten()
            .filter(|m| m.mode.is_some())
            .count();
        println!(
            "faults/kills: {} instances, {} kills ({} taken over by another instance), \
             {} restarts, {SESSIONS} sessions, {} events checked, \
             {} frames checked, {} runs in flight at a kill, {} runs continued, \
             {} runs failed ({} recovery_limit); \
             calls cut by a kill: {} re-run, {} outcome unknown, {} cut off mid-stream; \
             {appended} appended lines checked; {while_running} messages sent while runs \
             worked (queued, steering) checked once and in order; seed {seed}, {elapsed:.1?}",
            self.instances.len(),
            t.kills,
            t.takeovers,
            t.restarts,
            t.events,
            t.frames,
            t.in_flight,
            recovery.continued,
            recovery.failed,
            recovery.limits,
            repairs.rerun,
            repairs.unknown,
            repairs.cut_off,
        );
        assert!(
            problems.is_empty(),
            "{} problems (seed {seed}):\n{}",
            problems.len(),
            problems
                .iter()
                .take(30)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// Starts instance `slot`: script engine, `token_delay_ms` per token, `append_file`
/// without approval, leases of a second.
async fn launch(
    url: &str,
    script: &std::path::Path,
    dir: &std::path::Path,
    slot: usize,
    token_delay_ms: u64,
) -> Tandem {
    let name = format!("harness-{slot}");
    let (url, script) = (url.to_string(), script.to_path_buf());
    let workspace = dir.join("workspace").display().to_string();
    let delay = token_delay_ms.to_string();
    tokio::task::spawn_blocking(move || {
        // Named: each restart is the same instance, which takes its runs back at once.
        let flags = [
            "--token-delay-ms",
            &delay,
            "--skip-approval",
            "append_file",
            "--instance-name",
            &name,
        ];
        Tandem::spawn_with(
            &url,
            &script,
            &[&flags[..], &["--workspace-dir", &workspace]].concat(),
        )
    })
    .await
    .expect("the binary starts")
}

fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    since.expect("the clock is past 1970").as_millis() as i64
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.parse().ok())
}
