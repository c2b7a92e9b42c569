//! `tandem users add|list|revoke|budget`: managing the users of `--auth token` from the
//! shell.
//!
//! `add` prints the new user's API token once; only its hash is stored, so it cannot be
//! shown again (revoke the user and add a new one if it is lost). `budget` shows or sets
//! what a user may spend (the local user's too, under `--auth none`).

use std::io::Write;

use super::SecretToken;
use crate::agent::budget::BudgetRules;
pub use crate::config::UsersCommand;
use crate::config::{parse_cap, Cap};
use crate::domain::{now_ms, UserId, UserName};
use crate::store::{OwnBudget, OwnLimit, Store};

/// `5`, `0.5`, `none` or `default`, as `tandem users budget` takes a cap.
fn parse_limit(text: &str) -> Result<OwnLimit, String> {
    Ok(match parse_cap(text)? {
        Cap::Unlimited => OwnLimit::Unlimited,
        Cap::Default => OwnLimit::Default,
        Cap::At(value) => OwnLimit::At(value),
    })
}

/// A `users` command to run on whichever store the database URL opens, printing to
/// standard output, with the server's budget defaults.
pub struct UsersOn(pub UsersCommand, pub BudgetRules);

impl crate::store::UseStore for UsersOn {
    type Output = anyhow::Result<()>;

    async fn with<S: Store>(self, store: std::sync::Arc<S>) -> Self::Output {
        run(&*store, &self.0, &self.1, &mut std::io::stdout()).await
    }
}

/// Runs a `users` command against `store`, writing what a person reads to `out`.
pub async fn run<S: Store>(
    store: &S,
    command: &UsersCommand,
    rules: &BudgetRules,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    match command {
        UsersCommand::Add { name } => {
            let name = UserName::parse(name)?;
            let token = SecretToken::api_token();
            if !store
                .create_user(UserId::generate(), &name, token.hash(), now_ms())
                .await?
            {
                anyhow::bail!(
                    "a user named `{name}` already exists (or was revoked); pick another name"
                );
            }
            writeln!(
                out,
                "Created user `{name}`. Their API token (shown only now; keep it secret):"
            )?;
            writeln!(out)?;
            writeln!(out, "{}", token.expose())?;
            writeln!(out)?;
            writeln!(
                out,
                "Sign in on the page with it, or send `Authorization: Bearer <token>`."
            )?;
        }
        UsersCommand::List => {
            writeln!(out, "{:<32}  {:<25}  status", "name", "created")?;
            for user in store.list_users().await? {
                if user.id == UserId::LOCAL {
                    continue;
                }
                let status = match user.revoked_at {
                    Some(at) => format!("revoked {}", timestamp(at)),
                    None => "active".into(),
                };
                writeln!(
                    out,
                    "{:<32}  {:<25}  {status}",
                    user.name,
                    timestamp(user.created_at)
                )?;
            }
        }
        UsersCommand::Revoke { name } => {
            let name = UserName::parse(name)?;
            if !store.revoke_user(&name, now_ms()).await? {
                anyhow::bail!("no active user is named `{name}`");
            }
            writeln!(
                out,
                "Revoked `{name}`: their token and sign-ins no longer work."
            )?;
        }
        UsersCommand::Budget {
            name,
            daily_usd,
            monthly_usd,
            daily_tokens,
            monthly_tokens,
        } => {
            let user = user_named(store, name).await?;
            let mut own = store.own_budget(user).await?;
            let changes = [
                (daily_usd, &mut own.daily_usd),
                (monthly_usd, &mut own.monthly_usd),
                (daily_tokens, &mut own.daily_tokens),
                (monthly_tokens, &mut own.monthly_tokens),
            ];
            let mut changed = false;
            for (given, limit) in changes {
                if let Some(text) = given {
                    *limit = parse_limit(text).map_err(anyhow::Error::msg)?;
                    changed = true;
                }
            }
            if changed {
                store.set_own_budget(user, own, now_ms()).await?;
                writeln!(out, "Set the budget of `{name}`.")?;
            }
            show_budget(store, rules, user, name, &own, out).await?;
        }
    }
    Ok(())
}

/// The id of the user named `name` (`local` is the user of `--auth none`).
async fn user_named<S: Store>(store: &S, name: &str) -> anyhow::Result<UserId> {
    let name = UserName::parse_any(name)?;
    if name.as_str() == UserName::LOCAL {
        return Ok(UserId::LOCAL);
    }
    let users = store.list_users().await?;
    match users.into_iter().find(|user| user.name == name) {
        Some(user) => Ok(user.id),
        None => anyhow::bail!("no user is named `{name}`"),
    }
}

/// Prints each cap of `user`, whose it is, and what is spent and left of it.
async fn show_budget<S: Store>(
    store: &S,
    rules: &BudgetRules,
    user: UserId,
    name: &str,
    own: &OwnBudget,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let lines = rules.lines(store, user, now_ms()).await?;
    writeln!(out, "Budget of `{name}` (UTC days and months):")?;
    let caps = [
        ("day", "usd", "US dollars per day", own.daily_usd),
        ("month", "usd", "US dollars per month", own.monthly_usd),
        ("day", "tokens", "tokens per day", own.daily_tokens),
        ("month", "tokens", "tokens per month", own.monthly_tokens),
    ];
    for (period, unit, what, own_limit) in caps {
        let whose = match own_limit {
            OwnLimit::Default => "the server's default",
            OwnLimit::Unlimited | OwnLimit::At(_) => "their own",
        };
        let line = lines
            .iter()
            .find(|line| line.period == period && line.unit == unit);
        match line {
            Some(line) => writeln!(out, "  {what:<21} {} ({whose})", line.describe_left())?,
            None => writeln!(out, "  {what:<21} no cap ({whose})")?,
        }
    }
    Ok(())
}

fn timestamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|at| at.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::TokenHash;
    use crate::store::{Budgets, SqliteStore, Users};

    async fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = SqliteStore::connect(&url, &Default::default())
            .await
            .unwrap();
        (dir, store)
    }

    /// What was printed, each run of spaces as one.
    fn words(out: Vec<u8>) -> String {
        let text = String::from_utf8(out).unwrap();
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn rules() -> BudgetRules {
        BudgetRules::configured(&crate::config::BudgetArgs {
            budget_daily_tokens: Some(1000),
            ..Default::default()
        })
    }

    #[tokio::test]
    async fn budget_sets_a_user_s_own_caps_over_the_server_s_defaults() {
        let (_dir, store) = store().await;
        run(
            &store,
            &UsersCommand::Add {
                name: "alice".into(),
            },
            &rules(),
            &mut Vec::new(),
        )
        .await
        .unwrap();
        let budget = |daily_usd: Option<&str>, daily_tokens: Option<&str>| UsersCommand::Budget {
            name: "alice".into(),
            daily_usd: daily_usd.map(Into::into),
            monthly_usd: None,
            daily_tokens: daily_tokens.map(Into::into),
            monthly_tokens: None,
        };
        let shows = |out: Vec<u8>, lines: &[&str]| {
            let shown = words(out);
            for line in lines {
                assert!(shown.contains(line), "{line:?} in {shown}");
            }
        };
        let mut out = Vec::new();
        run(&store, &budget(None, None), &rules(), &mut out)
            .await
            .unwrap();
        let defaults = [
            "US dollars per day no cap (the server's default)",
            "1,000 of 1,000 tokens left today (the server's default)",
        ];
        shows(out, &defaults);

        let mut out = Vec::new();
        run(&store, &budget(Some("5"), Some("none")), &rules(), &mut out)
            .await
            .unwrap();
        let own = [
            "$5.00 of $5.00 left today (their own)",
            "tokens per day no cap (their own)",
        ];
        shows(out, &own);
        let alice = user_named(&store, "alice").await.unwrap();
        assert_eq!(
            store.own_budget(alice).await.unwrap().daily_usd,
            OwnLimit::At(5.0)
        );

        assert!(parse_limit("-1").is_err() && parse_limit("lots").is_err());
        assert!(
            run(
                &store,
                &UsersCommand::Budget {
                    name: "bob".into(),
                    daily_usd: None,
                    monthly_usd: None,
                    daily_tokens: None,
                    monthly_tokens: None,
                },
                &rules(),
                &mut Vec::new()
            )
            .await
            .is_err(),
            "an unknown user is an error"
        );
    }

    #[tokio::test]
    async fn add_prints_a_working_token_once_and_revoke_ends_it() {
        let (_dir, store) = store().await;
        let mut out = Vec::new();
        let add = UsersCommand::Add {
            name: "alice".into(),
        };
        run(&store, &add, &rules(), &mut out).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let token = text.lines().find(|l| l.starts_with("tdm_")).unwrap();
        assert!(store
            .user_for_token(TokenHash::of(token))
            .await
            .unwrap()
            .is_some());
        assert!(
            run(&store, &add, &rules(), &mut Vec::new()).await.is_err(),
            "names are unique"
        );

        let mut listed = Vec::new();
        run(&store, &UsersCommand::List, &rules(), &mut listed)
            .await
            .unwrap();
        let listed = String::from_utf8(listed).unwrap();
        assert!(
            listed.contains("alice") && listed.contains("active"),
            "{listed}"
        );
        assert!(!listed.contains(token), "list never shows tokens");

        let revoke = UsersCommand::Revoke {
            name: "alice".into(),
        };
        run(&store, &revoke, &rules(), &mut Vec::new())
            .await
            .unwrap();
        assert!(store
            .user_for_token(TokenHash::of(token))
            .await
            .unwrap()
            .is_none());
        assert!(run(&store, &revoke, &rules(), &mut Vec::new())
            .await
            .is_err());
    }
}
