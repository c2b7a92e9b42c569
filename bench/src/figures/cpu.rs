//! Figure 13, CPU per 1,000 tokens: the real binary (SQLite, default durability) streams
//! a burst of 100 sessions × 500 tokens to 100 sockets; its user + system CPU time over
//! the burst (from `/proc`) divided by the tokens it delivered (not the events: deltas
//! that share a commit are one). The number that decides how many live sessions a box
//! can carry.

use serde_json::json;

use super::{burst, Ctx};
use crate::child::{tandem_binary, Tandem};
use crate::client::Rest;
use crate::machine::cpu_time;
use crate::report::Row;
use crate::stats::thousands;

pub fn run(ctx: &Ctx) -> anyhow::Result<Vec<Row>> {
    let sessions = ctx.scale.cpu_sessions;
    let tokens = ctx.scale.burst_tokens.to_string();
    let binary = tandem_binary()?;
    let dir = tempfile::tempdir()?;
    let url = format!("sqlite://{}", dir.path().join("tandem.db").display());
    let extra = ["--bench-tokens", &tokens, "--token-delay-ms", "0"];
    let mut tandem = Tandem::spawn(&binary, &url, &extra)?;
    let (burst, cpu) = ctx.client.block_on(async {
        let rest = Rest::new(&tandem.address);
        tandem.wait_healthy(&rest.http).await?;
        let before = cpu_time(tandem.pid());
        let burst = burst::burst(&tandem.address, sessions).await?;
        let after = cpu_time(tandem.pid());
        let cpu = before.zip(after).map(|(before, after)| after - before);
        anyhow::Ok((burst, cpu))
    })?;
    if !burst.errors.is_empty() {
        anyhow::bail!("cpu: {}", burst.errors.join("; "));
    }
    // Per token, not per event: deltas that share a commit are one event.
    let title = format!(
        "13. CPU per 1,000 tokens, {sessions} sessions × {tokens} tokens (server user+sys)"
    );
    let Some(cpu) = cpu else {
        return Ok(vec![Row::not_measured(title, "no /proc here")]);
    };
    let delivered = sessions as u64 * ctx.scale.burst_tokens;
    let per_thousand = cpu.as_secs_f64() * 1000.0 / (delivered as f64 / 1000.0);
    Ok(vec![Row::new(title)
        .tandem(format!(
            "{per_thousand:.1} ms ({} ms for {} tokens in {} events)",
            cpu.as_millis(),
            thousands(delivered),
            thousands(burst.frames)
        ))
        .data(
            json!({"sessions": sessions, "tokens": delivered, "events": burst.frames,
            "cpu_ms": cpu.as_millis() as u64, "cpu_ms_per_1000_tokens": per_thousand}),
        )])
}
