//! The real `tandem` binary as a child process, for tests that must crash it (SIGKILL)
//! and start it again on the same database file.
//!
//! The child is started with the script engine and one worker; extra flags are appended
//! and, since later flags override earlier ones, may change any default. Its address is
//! read from the "open http://…" line it logs once it listens. `TEST_LOG=1` echoes its
//! log; otherwise the log is drained and dropped.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

use super::TestApp;

/// A running `tandem` process. Dropping it kills it.
pub struct Tandem {
    child: Child,
    address: String,
    /// Every line it logged so far.
    log: Arc<Mutex<Vec<String>>>,
    /// Woken at every line it logs, and once its log ends (it exited).
    logged_line: Arc<tokio::sync::Notify>,
    /// Whether its log has ended: the process exited (or closed its stderr).
    log_ended: Arc<std::sync::atomic::AtomicBool>,
}

impl Drop for Tandem {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Tandem {
    /// Starts the binary on `url` with `script` and a 10 ms token delay.
    pub fn spawn(url: &str, script: &Path) -> Self {
        Self::spawn_with(url, script, &[])
    }

    /// Like [`Tandem::spawn`], with `extra` flags after the defaults.
    pub fn spawn_with(url: &str, script: &Path, extra: &[&str]) -> Self {
        Self::spawn_with_env(url, script, extra, &[])
    }

    /// Like [`Tandem::spawn_with`], with extra environment variables.
    pub fn spawn_with_env(url: &str, script: &Path, extra: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tandem"))
            .args(["--bind", "127.0.0.1:0", "--database-url", url])
            .args(["--engine", "script", "--web-dir", "/nonexistent"])
            .arg("--script")
            .arg(script)
            .arg("--wasm-cache-dir")
            .arg(script.with_extension("wasm-cache"))
            .args(["--token-delay-ms", "10", "--workers", "1"])
            .args(super::UNLIMITED)
            .args(super::SHORT_LEASE)
            .args(extra)
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the tandem binary starts");
        let echo = std::env::var_os("TEST_LOG").is_some();
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut lines = BufReader::new(child.stderr.take().expect("stderr is piped")).lines();
        let address = loop {
            let line = match lines.next() {
                Some(Ok(line)) => line,
                _ => panic!("tandem exited before it logged its address"),
            };
            if echo {
                eprintln!("[tandem] {line}");
            }
            log.lock().unwrap().push(line.clone());
            if let Some(at) = line.find("open http://") {
                let rest = &line[at + "open http://".len()..];
                break rest
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.' || *c == ':')
                    .collect();
            }
        };
        // Keep draining the log so the child never blocks on a full pipe.
        let kept = log.clone();
        let logged_line = Arc::new(tokio::sync::Notify::new());
        let wake = logged_line.clone();
        let log_ended = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let ended = log_ended.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                if echo {
                    eprintln!("[tandem] {line}");
                }
                kept.lock().unwrap().push(line);
                wake.notify_waiters();
            }
            ended.store(true, std::sync::atomic::Ordering::SeqCst);
            wake.notify_waiters();
        });
        Self {
            child,
            address,
            log,
            logged_line,
            log_ended,
        }
    }

    /// Every line it logged so far.
    pub fn log(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `host:port` it listens on.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// A REST/socket client for it.
    pub fn client(&self) -> TestApp {
        TestApp::remote(&self.address)
    }

    /// Sends it a signal by name (`STOP`, `CONT`, …).
    pub fn signal(&self, name: &str) {
        let sent = Command::new("kill")
            .arg(format!("-{name}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill runs");
        assert!(sent.success(), "SIG{name} is delivered");
    }

    /// How many lines containing `text` it has logged so far.
    pub fn count_logged(&self, text: &str) -> usize {
        let log = self.log.lock().unwrap();
        log.iter().filter(|line| line.contains(text)).count()
    }

    /// Waits until it logs a line containing `text` (woken at each line it logs), up to
    /// `deadline`; whether it did.
    pub async fn logged(&self, text: &str, deadline: std::time::Duration) -> bool {
        self.logged_times(text, 1, deadline).await
    }

    /// Waits until `count` lines containing `text` have been logged; false past `deadline`.
    pub async fn logged_times(
        &self,
        text: &str,
        count: usize,
        deadline: std::time::Duration,
    ) -> bool {
        let waiting = async {
            loop {
                let next_line = self.logged_line.notified();
                tokio::pin!(next_line);
                // Registered before looking, so a line logged in between still wakes it.
                next_line.as_mut().enable();
                if self
                    .log
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|line| line.contains(text))
                    .count()
                    >= count
                {
                    return;
                }
                next_line.await;
            }
        };
        tokio::time::timeout(deadline, waiting).await.is_ok()
    }

    /// Waits until it exits (its log ends), up to `deadline`; its exit status, `None` if
    /// it still runs.
    pub async fn exited(
        &mut self,
        deadline: std::time::Duration,
    ) -> Option<std::process::ExitStatus> {
        let waiting = async {
            loop {
                let next_line = self.logged_line.notified();
                tokio::pin!(next_line);
                next_line.as_mut().enable();
                if self.log_ended.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                next_line.await;
            }
        };
        tokio::time::timeout(deadline, waiting).await.ok()?;
        // Its stderr closed as it exited: reaping it takes no time.
        Some(self.child.wait().expect("the child is reaped"))
    }

    /// Kills it with SIGKILL (no shutdown code runs) and reaps it.
    pub fn kill(&mut self) {
        self.child.kill().expect("SIGKILL is delivered");
        self.child.wait().expect("the killed child is reaped");
    }
}
