//! Facts about the machine the run happened on: cores, CPU model, load average (to tell
//! whether something else kept the cores busy), and a process's resident memory.
//!
//! Reads `/proc` only; on a system without it the facts are left empty.

use serde::Serialize;

/// What the machine looked like at one moment.
#[derive(Debug, Clone, Serialize)]
pub struct Facts {
    pub cores: usize,
    pub cpu_model: String,
    /// 1, 5 and 15 minute load averages.
    pub load_average: [f64; 3],
    pub memory_total_kib: u64,
}

/// The facts now.
pub fn facts() -> Facts {
    Facts {
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        cpu_model: cpu_model(),
        load_average: load_average(),
        memory_total_kib: meminfo_kib("MemTotal:").unwrap_or(0),
    }
}

fn cpu_model() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    info.lines()
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == "model name").then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// The 1, 5 and 15 minute load averages.
pub fn load_average() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut fields = text.split_whitespace().map(|f| f.parse().unwrap_or(0.0));
    [(); 3].map(|_| fields.next().unwrap_or(0.0))
}

fn meminfo_kib(key: &str) -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// CPU time process `pid` has used so far, user plus system, all threads (fields 14 and
/// 15 of `/proc/<pid>/stat`, in USER_HZ ticks: 100 per second in Linux's ABI).
pub fn cpu_time(pid: u32) -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces; the fields after it follow ")".
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let tick = |index: usize| fields.get(index)?.parse::<u64>().ok();
    let ticks = tick(11)? + tick(12)?;
    Some(std::time::Duration::from_millis(ticks * 10))
}

/// Resident memory of process `pid` in bytes (`VmRSS` of `/proc/<pid>/status`).
pub fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The share of all cores' time spent not idle over `window` (0.0 – 1.0), from
/// `/proc/stat`: taken while the benchmark itself is quiet, it says whether something
/// else kept the cores busy.
pub fn cpu_busy(window: std::time::Duration) -> Option<f64> {
    let (busy_before, total_before) = cpu_times()?;
    std::thread::sleep(window);
    let (busy_after, total_after) = cpu_times()?;
    let total = total_after.saturating_sub(total_before);
    (total > 0).then(|| busy_after.saturating_sub(busy_before) as f64 / total as f64)
}

/// (busy, total) jiffies of all cores.
fn cpu_times() -> Option<(u64, u64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let line = stat.lines().next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = line
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    let total: u64 = fields.iter().sum();
    // idle and iowait are the 4th and 5th fields.
    let idle = fields.get(3)? + fields.get(4).copied().unwrap_or(0);
    Some((total - idle, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_facts_and_memory() {
        let facts = facts();
        assert!(facts.cores >= 1);
        if cfg!(target_os = "linux") {
            assert!(rss_bytes(std::process::id()).unwrap() > 0);
            let busy = cpu_busy(std::time::Duration::from_millis(50)).unwrap();
            assert!((0.0..=1.0).contains(&busy));
        }
    }
}
