//! What one sandboxed call may use: fuel, memory and wall-clock time, and which of them
//! stopped it.

use std::fmt;
use std::time::Duration;

use serde::Deserialize;

use crate::config::SandboxArgs;

/// The limits of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Fuel it may burn: about one unit per WebAssembly instruction.
    pub fuel: u64,
    /// Bytes of linear memory its module may hold.
    pub memory_bytes: u64,
    /// Wall-clock time it may take, compiling excluded.
    pub timeout: Duration,
}

/// The limits a manifest asks for; each may only lower the server's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AskedLimits {
    pub fuel: Option<u64>,
    #[serde(rename = "memoryMiB")]
    pub memory_mib: Option<u64>,
    pub timeout_ms: Option<u64>,
}

impl Limits {
    /// The server's limits, as configured.
    pub fn configured(settings: &SandboxArgs) -> Limits {
        Limits {
            fuel: settings.wasm_fuel,
            memory_bytes: u64::from(settings.wasm_memory_mib) << 20,
            timeout: Duration::from_millis(settings.wasm_timeout_ms),
        }
    }

    /// These limits, lowered where `asked` asks for less (never raised).
    pub fn within(self, asked: AskedLimits) -> Limits {
        Limits {
            fuel: asked.fuel.map_or(self.fuel, |fuel| fuel.min(self.fuel)),
            memory_bytes: asked.memory_mib.map_or(self.memory_bytes, |mib| {
                mib.saturating_mul(1 << 20).min(self.memory_bytes)
            }),
            timeout: asked.timeout_ms.map_or(self.timeout, |ms| {
                Duration::from_millis(ms).min(self.timeout)
            }),
        }
    }
}

/// The limit that stopped a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// It burnt all its fuel.
    Fuel,
    /// It asked for more memory than it may hold.
    Memory,
    /// It ran out of time.
    Time,
    /// It recursed deeper than the WebAssembly stack allows.
    Stack,
    /// It wrote more to stdout or stderr than a call may.
    Output,
    /// It wrote more to the workspace than the user's quota leaves.
    Quota,
}

impl Limit {
    /// Its name in an error result (`"limit": "fuel"`).
    pub fn name(self) -> &'static str {
        match self {
            Limit::Fuel => "fuel",
            Limit::Memory => "memory",
            Limit::Time => "time",
            Limit::Stack => "stack",
            Limit::Output => "output",
            Limit::Quota => "quota",
        }
    }
}

impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_lowers_limits_and_never_raises_them() {
        let server = Limits {
            fuel: 1_000,
            memory_bytes: 128 << 20,
            timeout: Duration::from_secs(10),
        };
        let lower = AskedLimits {
            fuel: Some(10),
            memory_mib: Some(16),
            timeout_ms: Some(500),
        };
        let lowered = server.within(lower);
        assert_eq!(lowered.fuel, 10);
        assert_eq!(lowered.memory_bytes, 16 << 20);
        assert_eq!(lowered.timeout, Duration::from_millis(500));
        let higher = AskedLimits {
            fuel: Some(u64::MAX),
            memory_mib: Some(1 << 40),
            timeout_ms: Some(u64::MAX),
        };
        assert_eq!(server.within(higher), server);
        assert_eq!(server.within(AskedLimits::default()), server);
    }
}
