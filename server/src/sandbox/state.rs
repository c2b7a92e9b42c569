//! A call's store state: its WASI context, its memory cap and what it has reached so
//! far (the linker's type, so every part of the sandbox names it).

use std::time::Instant;

use wasmtime::ResourceLimiter;
use wasmtime_wasi::p1::WasiP1Ctx;

use super::files::WorkspaceAccess;
use super::limits::Limit;

/// A store's own state.
pub struct CallState {
    pub(super) wasi: WasiP1Ctx,
    pub(super) memory: MemoryCap,
    pub(super) deadline: Instant,
    pub(super) files: Option<WorkspaceAccess>,
    pub(super) ticks: u64,
    pub(super) stopped_by: Option<Limit>,
}

/// Refuses memory beyond the call's limit, and remembers that it did.
pub(super) struct MemoryCap {
    pub(super) max_bytes: usize,
    pub(super) refused: bool,
}

impl ResourceLimiter for MemoryCap {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired <= self.max_bytes;
        self.refused |= !allowed;
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        // A table entry takes a pointer or two: a million of them stays within reason.
        Ok(desired <= 1 << 20)
    }
}

/// The linker's view of a call's state (WASI preview 1 reads and writes it).
pub fn wasi(state: &mut CallState) -> &mut WasiP1Ctx {
    &mut state.wasi
}
