//! The environment a stdio MCP server starts with: not Tandem's own, which holds API keys,
//! the database URL and other secrets, but a cleared one with the few variables a program
//! needs to run (the list the official MCP SDKs inherit by default, plus the locale and
//! the temporary folder), then the server's `env` from the config file.

use std::collections::BTreeMap;

/// The variables a stdio server inherits from Tandem, when set: the official SDKs'
/// default list (`HOME`, `LOGNAME`, `PATH`, `SHELL`, `TERM`, `USER`), the locale and the
/// temporary folder.
pub const INHERITED: [&str; 10] = [
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ",
];

/// What a server started with `configured` as its `env` sees, given Tandem's own
/// variables `tandem`: the inherited ones (shell functions left out, as the SDKs do),
/// overridden by the configured ones.
pub fn for_server<'a>(
    tandem: impl IntoIterator<Item = (String, String)>,
    configured: impl IntoIterator<Item = (&'a String, &'a String)>,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = tandem
        .into_iter()
        .filter(|(name, value)| INHERITED.contains(&name.as_str()) && !value.starts_with("()"))
        .collect();
    env.extend(configured.into_iter().map(|(k, v)| (k.clone(), v.clone())));
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_safe_set_and_the_configured_env_reach_a_server() {
        let tandem = [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/ada"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("TANDEM_DATABASE_URL", "postgres://u:p@h/d"),
            ("SHELL", "() { evil; }"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        let configured: BTreeMap<String, String> = [
            ("NOTES".to_string(), "1".to_string()),
            ("HOME".into(), "/srv".into()),
        ]
        .into();
        let env = for_server(tandem, &configured);
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(names, ["HOME", "NOTES", "PATH"]);
        assert_eq!(env["HOME"], "/srv", "the config wins");
    }
}
