//! The `tandem` binary: read the configuration, start logging, serve until SIGTERM or
//! Ctrl-C and stop cleanly (or run `tandem users …`, `tandem feedback`, `tandem traces
//! export` or `tandem schedules …` and exit, or `tandem eval …` against a running server).

use tandem::config::{Command, LoadError};
use tandem::{telemetry, Application};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let loaded = match tandem::config::load(std::env::args_os()) {
        Ok(loaded) => loaded,
        Err(LoadError::Clap(error)) => error.exit(),
        Err(error) => {
            eprintln!("tandem: {error}");
            std::process::exit(2);
        }
    };
    if loaded.config.print_config {
        print!("{}", tandem::config::render(&loaded.settings));
        return Ok(());
    }
    let config = loaded.config;
    if let Some(Command::Eval(command)) = &config.command {
        // A client of a running server: it opens no database.
        match tandem::replays::evals_cli::run(command).await {
            Ok(outcome) => {
                print!("{}", outcome.table);
                std::process::exit(if outcome.passed { 0 } else { 1 });
            }
            Err(error) => {
                eprintln!("tandem eval: {error}");
                std::process::exit(2);
            }
        }
    }
    telemetry::init_with("info", config.log_format);
    if let Err(error) = tandem::startup::check(&config) {
        eprintln!("tandem: {error}");
        std::process::exit(2);
    }
    let options = tandem::store::StoreOptions::configured(&config);
    if let Some(Command::Users(command)) = config.command.clone() {
        let rules = tandem::agent::budget::BudgetRules::configured(&config.budgets);
        let users = tandem::auth::cli::UsersOn(command, rules);
        let done = tandem::store::open(&config.database_url, &options, users).await?;
        if let Err(error) = done {
            eprintln!("tandem: {error}");
            std::process::exit(1);
        }
        return Ok(());
    }
    if let Some(Command::Feedback(command)) = config.command.clone() {
        let listing = tandem::feedback_cli::FeedbackOn(command);
        tandem::store::open(&config.database_url, &options, listing).await??;
        return Ok(());
    }
    if let Some(Command::Traces(command)) = config.command.clone() {
        let settings = config.traces.clone();
        let export = tandem::traces::cli::TracesOn { command, settings };
        tandem::store::open(&config.database_url, &options, export).await??;
        return Ok(());
    }
    if let Some(Command::Schedules(command)) = config.command.clone() {
        let min_interval_seconds = config.min_schedule_interval_seconds;
        let schedules = tandem::schedules::SchedulesOn {
            command,
            min_interval_seconds,
        };
        if let Err(error) = tandem::store::open(&config.database_url, &options, schedules).await? {
            eprintln!("tandem: {error}");
            std::process::exit(1);
        }
        return Ok(());
    }
    let app = Application::build(config).await?;
    // A target of its own, so a quieter filter can keep it: `RUST_LOG=warn,tandem::listening=info`.
    let address = app.address();
    tracing::info!(target: "tandem::listening", %address, "Tandem is listening: open http://{address}");
    app.run_until_signalled().await?;
    Ok(())
}
