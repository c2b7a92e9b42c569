//! `tandem users add|list|revoke`: managing the users of `--auth token` from the shell.
//!
//! `add` prints the new user's API token once; only its hash is stored, so it cannot be
//! shown again (revoke the user and add a new one if it is lost).

use std::io::Write;

use super::SecretToken;
use crate::domain::{now_ms, UserId, UserName};
use crate::store::Store;

/// What `tandem users` does.
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum UsersCommand {
    /// Creates a user and prints their API token (once).
    Add {
        /// 1 to 32 lowercase letters, digits, `-` or `_`.
        name: String,
    },
    /// Lists users, revoked ones included.
    List,
    /// Revokes a user: their token and sign-ins stop working at once; their sessions stay.
    Revoke { name: String },
}

/// A `users` command to run on whichever store the database URL opens, printing to
/// standard output.
pub struct UsersOn(pub UsersCommand);

impl crate::store::UseStore for UsersOn {
    type Output = anyhow::Result<()>;

    async fn with<S: Store>(self, store: std::sync::Arc<S>) -> Self::Output {
        run(&*store, &self.0, &mut std::io::stdout()).await
    }
}

/// Runs a `users` command against `store`, writing what a person reads to `out`.
pub async fn run<S: Store>(
    store: &S,
    command: &UsersCommand,
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
    use crate::store::{Records, SqliteStore};

    async fn store() -> (tempfile::TempDir, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("t.db").display());
        let store = SqliteStore::connect(&url, &Default::default())
            .await
            .unwrap();
        (dir, store)
    }

    #[tokio::test]
    async fn add_prints_a_working_token_once_and_revoke_ends_it() {
        let (_dir, store) = store().await;
        let mut out = Vec::new();
        let add = UsersCommand::Add {
            name: "alice".into(),
        };
        run(&store, &add, &mut out).await.unwrap();
        let text = String::from_utf8(out).unwrap();
        let token = text.lines().find(|l| l.starts_with("tdm_")).unwrap();
        assert!(store
            .user_for_token(TokenHash::of(token))
            .await
            .unwrap()
            .is_some());
        assert!(
            run(&store, &add, &mut Vec::new()).await.is_err(),
            "names are unique"
        );

        let mut listed = Vec::new();
        run(&store, &UsersCommand::List, &mut listed).await.unwrap();
        let listed = String::from_utf8(listed).unwrap();
        assert!(
            listed.contains("alice") && listed.contains("active"),
            "{listed}"
        );
        assert!(!listed.contains(token), "list never shows tokens");

        let revoke = UsersCommand::Revoke {
            name: "alice".into(),
        };
        run(&store, &revoke, &mut Vec::new()).await.unwrap();
        assert!(store
            .user_for_token(TokenHash::of(token))
            .await
            .unwrap()
            .is_none());
        assert!(run(&store, &revoke, &mut Vec::new()).await.is_err());
    }
}
