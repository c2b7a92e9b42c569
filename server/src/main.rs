//! The `tandem` binary: read the configuration, start logging, serve until stopped.

use clap::Parser;
use tandem::{telemetry, Application, Config};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Config::parse();
    telemetry::init("info");
    if let Err(error) = config.validate() {
        eprintln!("tandem: {error}");
        std::process::exit(2);
    }
    let app = Application::build(config).await?;
    tracing::info!(address = %app.address(), "Tandem is listening: open http://{}", app.address());
    app.run_until_stopped().await?;
    Ok(())
}
