//! What may be read or shown of a URL: an http(s) origin in one spelling, and a URL with
//! its secrets left out (for messages and logs). Pure text work, shared by the settings'
//! checks, the edge and whatever reports a URL.

/// `scheme://host[:port]` of an http(s) origin, lowercase, without the scheme's default
/// port and any trailing `/`; `None` if it is not one (`null`, `file://…`, a path).
pub fn canonical_origin(origin: &str) -> Option<String> {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, authority) = origin.split_once("://")?;
    let default_port = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return None,
    };
    if authority.is_empty() || authority.contains(['/', '?', '#', '@']) {
        return None;
    }
    let authority = authority.strip_suffix(default_port).unwrap_or(authority);
    Some(format!("{scheme}://{authority}"))
}

/// The parts of a URL: scheme (with `://`), user info (without `@`), host and port, rest.
fn url_parts(url: &str) -> Option<(&str, Option<&str>, &str, &str)> {
    let at = url.find("://")? + 3;
    let (scheme, after) = url.split_at(at);
    let end = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (authority, rest) = after.split_at(end);
    Some(match authority.rsplit_once('@') {
        Some((user, host)) => (scheme, Some(user), host, rest),
        None => (scheme, None, authority, rest),
    })
}

/// `scheme://host[:port]` of a URL, without user, password, path or query (what may be
/// shown of a URL that could hold a secret); `***` for what is not a URL.
pub fn origin(url: &str) -> String {
    match url_parts(url) {
        Some((scheme, _, host, _)) => format!("{scheme}{host}"),
        None => "***".into(),
    }
}

/// The URL with its user info masked (`postgres://***@db/tandem`): a password, or a
/// token given as the user name; unchanged without user info.
pub fn hide_user_info(url: &str) -> String {
    match url_parts(url) {
        Some((scheme, Some(_), host, rest)) => format!("{scheme}***@{host}{rest}"),
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_keep_their_origin_and_lose_their_secrets() {
        let url = "https://hooks:pw@example.com:8443/t/s3cr3t?sig=abc#x";
        assert_eq!(origin(url), "https://example.com:8443");
        assert_eq!(origin("http://127.0.0.1:9"), "http://127.0.0.1:9");
        assert_eq!(origin("not a url"), "***");
        let hidden = [
            (
                "postgres://tandem:pa@ss@db:5432/tandem",
                "postgres://***@db:5432/tandem",
            ),
            (
                "postgres://postgres@127.0.0.1/t?sslmode=require",
                "postgres://***@127.0.0.1/t?sslmode=require",
            ),
            ("https://token@example.com", "https://***@example.com"),
            ("https://example.com/a@b", "https://example.com/a@b"),
            ("sqlite://data/tandem.db", "sqlite://data/tandem.db"),
            ("ada@example.com", "ada@example.com"),
        ];
        for (url, shown) in hidden {
            assert_eq!(hide_user_info(url), shown, "{url}");
        }
    }
}
