//! `tandem schedules list|add|rm`: a user's schedules from the shell, fired by the server.

use serde_json::{json, Value};

use super::{finished, scheduled_app, until_fires, MINUTE};

/// `tandem schedules …` as the shell runs it, its output captured.
struct Shell(tandem::schedules::SchedulesOn);

impl tandem::store::UseStore for Shell {
    type Output = anyhow::Result<String>;

    async fn with<S: tandem::store::Store>(self, store: std::sync::Arc<S>) -> Self::Output {
        let mut out = Vec::new();
        tandem::schedules::run_command(&*store, self.0, &mut out).await?;
        Ok(String::from_utf8(out)?)
    }
}

async fn shell(url: &str, command: tandem::config::SchedulesCommand) -> anyhow::Result<String> {
    let job = Shell(tandem::schedules::SchedulesOn {
        command,
        min_interval_seconds: 60,
    });
    tandem::store::open(url, &Default::default(), job).await?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schedules_are_made_listed_and_deleted_from_the_shell_and_the_server_fires_them() {
    use tandem::config::SchedulesCommand;
    let (app, clock, _dir, url) = scheduled_app(json!([{"text": "Done."}])).await;
    let add = |every_seconds: u64| SchedulesCommand::Add {
        user: "local".into(),
        name: "From the shell".into(),
        message: "hello".into(),
        cron: None,
        timezone: None,
        at: None,
        every_seconds: Some(every_seconds),
        session: None,
        model: None,
        misfire: None,
        overlap: None,
    };
    let refused = shell(&url, add(5)).await.unwrap_err().to_string();
    assert!(refused.contains("everySeconds"), "{refused}");
    let added: Value = serde_json::from_str(shell(&url, add(3600)).await.unwrap().trim()).unwrap();
    let id = added["id"].as_str().unwrap().to_string();
    let listed = shell(
        &url,
        SchedulesCommand::List {
            user: "local".into(),
        },
    )
    .await
    .unwrap();
    assert_eq!(listed.lines().count(), 1, "{listed}");
    assert!(listed.contains(&id));
    // The server sees it (on PostgreSQL at once, by the change feed; on SQLite within its
    // minute; here its clock, days ahead of the shell's, is moved on): one of its times fires,
    // the older ones are missed (and one due while that run runs is skipped).
    clock.advance(60 * MINUTE);
    until_fires(&app, &id, "the shell's schedule to fire", |f| {
        f.iter().any(|fire| fire["status"] == "fired") && finished(f)
    })
    .await;
    let unknown = SchedulesCommand::Rm {
        user: "nobody".into(),
        id: id.clone(),
    };
    assert!(shell(&url, unknown).await.is_err(), "no such user");
    shell(
        &url,
        SchedulesCommand::Rm {
            user: "local".into(),
            id: id.clone(),
        },
    )
    .await
    .unwrap();
    let (status, _) = app.get(&format!("/api/schedules/{id}")).await;
    assert_eq!(status, 404);
}
