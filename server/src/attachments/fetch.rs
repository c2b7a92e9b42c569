//! Files an AG-UI client names by URL (a binary part's `url`). A server that fetches any
//! URL a client sends is a proxy into its own network (server-side request forgery: cloud
//! metadata endpoints, admin ports, internal services), so Tandem fetches only from the
//! origins `--attachment-url-origins` lists, follows no redirect (one could leave the
//! listed origin), gives up after 30 seconds, and streams the body into the store under
//! the same limits as an upload.

use std::sync::OnceLock;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::Url;

use super::upload::{Upload, UploadError, UploadLimits};
use crate::store::{AttachmentRow, Store};

/// How long a fetch may take, connection and body together.
const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// The origins files may be fetched from (`--attachment-url-origins`), as
/// `scheme://host[:port]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UrlOrigins {
    origins: Vec<String>,
}

impl UrlOrigins {
    /// The setting's origins; an entry that is not an `http(s)` origin is refused.
    pub fn parse(entries: &[String]) -> Result<Self, String> {
        let mut origins = Vec::new();
        for entry in entries.iter().map(|e| e.trim()).filter(|e| !e.is_empty()) {
            let url = Url::parse(entry).map_err(|e| format!("`{entry}` is not a URL: {e}"))?;
            let bare = url.path() == "/" && url.query().is_none() && url.fragment().is_none();
            if !matches!(url.scheme(), "http" | "https") || !bare || !url.username().is_empty() {
                return Err(format!(
                    "`{entry}` is not an origin: give scheme, host and port only (https://files.example.com)"
                ));
            }
            origins.push(url.origin().ascii_serialization());
        }
        Ok(Self { origins })
    }

    /// Whether `url` may be fetched.
    pub fn allows(&self, url: &Url) -> bool {
        let origin = url.origin().ascii_serialization();
        self.origins.contains(&origin)
    }
}

/// Why a URL was not fetched.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    Upload(#[from] UploadError),
}

/// Fetches `url` into the store as the attachment `attachment` names, declared as
/// `declared` (the part's `mimeType`).
pub async fn fetch_into<S: Store>(
    store: &S,
    url: &Url,
    declared: &str,
    attachment: AttachmentRow,
    limits: UploadLimits,
) -> Result<AttachmentRow, FetchError> {
    let refused = |why: String| FetchError::Refused(format!("could not fetch {url}: {why}"));
    let response = client()
        .get(url.clone())
        .send()
        .await
        .map_err(|e| refused(e.without_url().to_string()))?;
    if !response.status().is_success() {
        return Err(refused(format!("it answered {}", response.status())));
    }
    let mut upload = Upload::begin(store, attachment.owner, declared, limits).await?;
    let mut body = response.bytes_stream();
    while let Some(chunk) = body.next().await {
        let pushed = match chunk {
            Ok(bytes) => upload.push(&bytes).await.map_err(FetchError::from),
            Err(error) => Err(refused(error.without_url().to_string())),
        };
        if let Err(error) = pushed {
            upload.abandon().await;
            return Err(error);
        }
    }
    Ok(upload.finish(attachment).await?)
}

/// The client every fetch shares: no redirects, a deadline.
fn client() -> &'static reqwest::Client {
    static CLIENT: OnceLock<reqwest::Client> = OnceLock::new();
    CLIENT.get_or_init(|| {
        reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(FETCH_TIMEOUT)
            .connect_timeout(Duration::from_secs(10))
            .build()
            .expect("an HTTP client with default TLS builds")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_origins_are_fetched() {
        let origins = UrlOrigins::parse(&[
            "https://files.example.com".into(),
            "http://127.0.0.1:9000".into(),
        ])
        .unwrap();
        let allowed = |url: &str| origins.allows(&Url::parse(url).unwrap());
        assert!(allowed("https://files.example.com/a/cat.png?x=1"));
        assert!(allowed("http://127.0.0.1:9000/cat.png"));
        assert!(
            !allowed("http://files.example.com/cat.png"),
            "another scheme"
        );
        assert!(!allowed("https://files.example.com.evil.test/cat.png"));
        assert!(!allowed("http://169.254.169.254/latest/meta-data/"));
        assert!(!allowed("http://127.0.0.1:9001/cat.png"), "another port");
        assert!(!UrlOrigins::default().allows(&Url::parse("https://files.example.com/").unwrap()));
        assert!(UrlOrigins::parse(&["https://files.example.com/path".into()]).is_err());
        assert!(UrlOrigins::parse(&["ftp://files.example.com".into()]).is_err());
        assert!(UrlOrigins::parse(&["not a url".into()]).is_err());
    }
}
