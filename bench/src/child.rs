//! The real `tandem` binary as a child process: built by the same profile as the
//! benchmark, started on a chosen port and database with the `bench` engine, watched
//! through `/proc` and killed when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

/// The profile this benchmark was built with, and so the binary it starts.
pub const PROFILE: &str = if cfg!(debug_assertions) {
    "debug"
} else {
    "release"
};

/// The workspace root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("bench/ lives in the workspace")
        .to_path_buf()
}

/// Cargo's target folder.
pub fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"))
}

/// `target/<profile>/tandem`, built first when the benchmark runs under Cargo (a no-op
/// when it is up to date).
pub fn tandem_binary() -> anyhow::Result<PathBuf> {
    if let Some(cargo) = std::env::var_os("CARGO") {
        let mut build = Command::new(cargo);
        build.args(["build", "--quiet", "-p", "tandem", "--bin", "tandem"]);
        // `cargo run` describes this package in the environment; build scripts that watch
        // those variables (ring's does) would rebuild for us, then again for the next
        // plain `cargo build`.
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            let ours = key.starts_with("CARGO_PKG_")
                || key.starts_with("CARGO_MANIFEST_")
                || [
                    "CARGO_CRATE_NAME",
                    "CARGO_BIN_NAME",
                    "CARGO_PRIMARY_PACKAGE",
                    "OUT_DIR",
                ]
                .contains(&key.as_ref());
            if ours {
                build.env_remove(key.as_ref());
            }
        }
        if PROFILE == "release" {
            build.arg("--release");
        }
        let status = build.current_dir(repo_root()).status()?;
        if !status.success() {
            bail!("`cargo build -p tandem --bin tandem` failed");
        }
    }
    let binary = target_dir().join(PROFILE).join("tandem");
    if !binary.exists() {
        bail!(
            "{} is missing: cargo build -p tandem --bin tandem",
            binary.display()
        );
    }
    Ok(binary)
}

/// A running `tandem`. Dropping it kills it.
pub struct Tandem {
    child: Child,
    pub address: String,
    /// When the process was spawned.
    pub started: Instant,
}

impl Drop for Tandem {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Tandem {
    /// Spawns `binary` on a free port with database `url`, the `bench` engine and
    /// `extra` flags (later flags win). Returns at once; see [`Tandem::wait_healthy`].
    pub fn spawn(binary: &Path, url: &str, extra: &[&str]) -> anyhow::Result<Self> {
        let port = free_port()?;
        let address = format!("127.0.0.1:{port}");
        let log = if std::env::var_os("TANDEM_BENCH_LOG").is_some() {
            Stdio::inherit()
        } else {
            Stdio::null()
        };
        let started = Instant::now();
        let child = Command::new(binary)
            .args(["--bind", &address, "--database-url", url])
            .args(["--engine", "bench", "--web-dir", "/nonexistent"])
            .args(
                [
                    "--sessions-per-minute",
                    "--messages-per-minute",
                    "--sockets-per-user",
                    "--max-concurrent-runs",
                    "--max-queued-runs",
                ]
                .iter()
                .flat_map(|flag| [*flag, crate::server::UNLIMITED]),
            )
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        Ok(Self {
            child,
            address,
            started,
        })
    }

    /// Kills it with SIGKILL and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Resident memory now, in bytes.
    pub fn rss(&self) -> anyhow::Result<u64> {
        crate::machine::rss_bytes(self.pid()).context("cannot read the child's VmRSS")
    }

    /// Polls `GET /healthz` until it answers 200; returns the time since spawn.
    pub async fn wait_healthy(&mut self, http: &reqwest::Client) -> anyhow::Result<Duration> {
        let url = format!("http://{}/healthz", self.address);
        let deadline = Duration::from_secs(60);
        while self.started.elapsed() < deadline {
            if let Ok(response) = http.get(&url).send().await {
                if response.status().is_success() {
                    return Ok(self.started.elapsed());
                }
            }
            if let Some(status) = self.child.try_wait()? {
                bail!("tandem exited during start: {status}");
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        bail!("tandem did not answer /healthz within {deadline:?}")
    }
}

/// A port that was free a moment ago.
pub fn free_port() -> anyhow::Result<u16> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?.port())
}
