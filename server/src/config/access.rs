//! Who may reach Tandem: the authentication mode, the host names it answers to and the
//! browser origins allowed to drive it.

use std::net::{IpAddr, SocketAddr};

/// How requests are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AuthMode {
    /// Nobody signs in; everything acts for the `local` user. Loopback addresses only.
    None,
    /// API tokens and sign-in cookies of users created with `tandem users add`.
    Token,
}

impl AuthMode {
    /// The wire and flag spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Token => "token",
        }
    }
}

use clap::Args;

/// Access flags and environment variables.
#[derive(Debug, Clone, Args)]
pub struct AccessArgs {
    /// `none` (loopback addresses only: everything acts for the `local` user) or `token`
    /// (users and API tokens from `tandem users add`; the page signs in with a token).
    #[arg(long, env = "TANDEM_AUTH", value_enum, default_value = "none")]
    pub auth: AuthMode,
    /// Host names this server answers to besides its bind address, `localhost` and IP
    /// literals (comma-separated), e.g. `tandem.example.com`. Others get 421.
    #[arg(long, env = "TANDEM_ALLOWED_HOSTS", value_delimiter = ',')]
    pub allowed_hosts: Vec<String>,
    /// Browser origins besides the server's own that may open sockets and change things
    /// (comma-separated), e.g. `https://app.example.com`. Others get 403.
    #[arg(long, env = "TANDEM_ALLOWED_ORIGINS", value_delimiter = ',')]
    pub allowed_origins: Vec<String>,
    /// How long a browser sign-in lasts, in hours.
    #[arg(long, env = "TANDEM_SIGN_IN_TTL_HOURS", default_value_t = 168,
          value_parser = clap::value_parser!(u64).range(1..=8784))]
    pub sign_in_ttl_hours: u64,
    /// Users who may read everyone's feedback (`GET /api/feedback`), by name
    /// (comma-separated). Under `--auth none` the `local` user is one.
    #[arg(long, env = "TANDEM_OPERATORS", value_delimiter = ',')]
    pub operators: Vec<String>,
}

/// An access setting that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    #[error(
        "refusing to serve {0} without authentication: anyone who reaches it could read and \
         drive every session. Set TANDEM_AUTH=token (or --auth token) and create users with \
         `tandem users add NAME`, or bind to a loopback address such as 127.0.0.1:8080"
    )]
    OpenWithoutAuth(String),
    #[error("--allowed-hosts entry `{0}` is not a host name (no scheme, port or path)")]
    BadHost(String),
    #[error("--allowed-origins entry `{0}` must look like https://host or http://host:port")]
    BadOrigin(String),
}

impl AccessArgs {
    /// Checks the settings against the address Tandem binds.
    pub fn validate(&self, bind: &str) -> Result<(), AccessError> {
        if self.auth == AuthMode::None && !is_loopback(bind) {
            return Err(AccessError::OpenWithoutAuth(bind.to_string()));
        }
        for host in self.hosts() {
            let plain = !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
            if !plain {
                return Err(AccessError::BadHost(host));
            }
        }
        for origin in self.origins() {
            if crate::domain::canonical_origin(&origin).is_none() {
                return Err(AccessError::BadOrigin(origin));
            }
        }
        Ok(())
    }

    /// The extra host names, lowercase.
    pub fn hosts(&self) -> Vec<String> {
        clean(&self.allowed_hosts)
    }

    /// The extra origins, lowercase, without a trailing `/`.
    pub fn origins(&self) -> Vec<String> {
        clean(&self.allowed_origins)
            .into_iter()
            .map(|o| o.trim_end_matches('/').to_string())
            .collect()
    }
}

fn clean(items: &[String]) -> Vec<String> {
    items
        .iter()
        .map(|item| item.trim().to_ascii_lowercase())
        .filter(|item| !item.is_empty())
        .collect()
}

/// Whether `bind` (`host:port`) is a loopback address.
pub fn is_loopback(bind: &str) -> bool {
    if let Ok(address) = bind.parse::<SocketAddr>() {
        return address.ip().is_loopback();
    }
    match bind.rsplit_once(':') {
        Some((host, _)) => {
            let host = host.trim_start_matches('[').trim_end_matches(']');
            host.eq_ignore_ascii_case("localhost")
                || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_addresses_are_recognised() {
        for bind in [
            "127.0.0.1:8080",
            "[::1]:80",
            "localhost:8080",
            "127.0.0.2:1",
        ] {
            assert!(is_loopback(bind), "{bind}");
        }
        for bind in [
            "0.0.0.0:8080",
            "[::]:80",
            "10.0.0.5:8080",
            "example.com:80",
            "nonsense",
        ] {
            assert!(!is_loopback(bind), "{bind}");
        }
    }
}
