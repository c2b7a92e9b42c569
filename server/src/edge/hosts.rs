//! Which `Host` headers this server answers to.

use std::net::IpAddr;

/// Whether `host` (a `Host` header: `name[:port]`) names this server: `localhost`, any
/// IP literal (DNS rebinding needs a host name), or one of `extra` (the bind host and
/// `--allowed-hosts`).
pub fn allowed(extra: &[String], host: &str) -> bool {
    let name = name_of(host);
    if name.is_empty() {
        return false;
    }
    name == "localhost"
        || name.parse::<IpAddr>().is_ok()
        || extra.iter().any(|allowed| allowed == &name)
}

/// The host name of a `Host` header, lowercase, without the port or IPv6 brackets.
fn name_of(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    if let Some(rest) = host.strip_prefix('[') {
        return rest.split(']').next().unwrap_or_default().to_string();
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.chars().all(|c| c.is_ascii_digit()) => name.to_string(),
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_names_and_ip_literals_pass_other_names_do_not() {
        let extra = vec!["tandem.example.com".to_string()];
        for host in [
            "localhost:8080",
            "127.0.0.1:8080",
            "[::1]:8080",
            "10.1.2.3",
            "Tandem.Example.com",
            "tandem.example.com:443",
        ] {
            assert!(allowed(&extra, host), "{host}");
        }
        for host in [
            "attacker.example",
            "localhost.attacker.example:8080",
            "",
            "evil:80",
        ] {
            assert!(!allowed(&extra, host), "{host}");
        }
    }
}
