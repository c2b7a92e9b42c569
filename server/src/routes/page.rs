//! The built page (`dist/`, from `scripts/build.sh page`), served by the same process, and the
//! Content-Security-Policy that lets exactly it run. Without a built page, `/` explains
//! how to build it instead of failing.

use std::path::PathBuf;

use actix_web::{web, HttpResponse};
use base64::Engine as _;
use sha2::{Digest, Sha256};

const NOT_BUILT: &str = "<!doctype html><meta charset=utf-8><title>Tandem</title>\
<h1>Tandem is running</h1><p>The page has not been built. Run <code>scripts/run.sh</code> \
(or <code>scripts/build.sh page</code>) and restart, or point <code>TANDEM_WEB_DIR</code> \
at the built <code>dist/</code> folder. The API is at <code>/api</code>.</p>";

/// The page to serve.
#[derive(Debug, Clone)]
pub struct Page {
    /// The folder with `index.html`, if there is a built page.
    dir: Option<PathBuf>,
    /// SHA-256 (base64) of each inline `<script>` in `index.html`: the WASM's loader, the
    /// history prefetch and the line that applies the remembered colour theme before the
    /// first paint. Read from the built file, so editing a script needs no change here.
    inline_scripts: Vec<String>,
}

impl Page {
    /// The page in `dir`, if it holds an `index.html`.
    pub fn load(dir: PathBuf) -> Self {
        match std::fs::read_to_string(dir.join("index.html")) {
            Ok(html) => Self {
                inline_scripts: inline_script_hashes(&html),
                dir: Some(dir),
            },
            Err(_) => {
                tracing::warn!(dir = %dir.display(), "no built page found; serving a notice at /");
                Self {
                    dir: None,
                    inline_scripts: Vec::new(),
                }
            }
        }
    }

    /// The Content-Security-Policy for this page.
    pub fn content_security_policy(&self) -> String {
        crate::edge::content_security_policy(&self.inline_scripts)
    }

    /// Serves the page at `/`, or the explanation.
    pub fn configure(self, cfg: &mut web::ServiceConfig) {
        match self.dir {
            Some(dir) => {
                cfg.service(actix_files::Files::new("/", dir).index_file("index.html"));
            }
            None => {
                cfg.route(
                    "/",
                    web::get().to(|| async {
                        HttpResponse::Ok()
                            .content_type("text/html; charset=utf-8")
                            .body(NOT_BUILT)
                    }),
                );
            }
        }
    }
}

/// The CSP hashes of the inline scripts of an HTML document (scripts without `src`).
fn inline_script_hashes(html: &str) -> Vec<String> {
    let mut hashes = Vec::new();
    let mut rest = html;
    while let Some(start) = rest.find("<script") {
        let after = &rest[start..];
        let Some(tag_end) = after.find('>') else {
            break;
        };
        let tag = &after[..tag_end];
        let body = &after[tag_end + 1..];
        let Some(close) = body.find("</script>") else {
            break;
        };
        if !tag.contains(" src=") {
            let digest = Sha256::digest(&body.as_bytes()[..close]);
            hashes.push(base64::engine::general_purpose::STANDARD.encode(digest));
        }
        rest = &body[close..];
    }
    hashes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inline_scripts_are_hashed_and_external_ones_skipped() {
        let html = r#"<script src="/a.js"></script><script type="module">init()</script>"#;
        let hashes = inline_script_hashes(html);
        let expected = base64::engine::general_purpose::STANDARD.encode(Sha256::digest(b"init()"));
        assert_eq!(hashes, vec![expected]);
    }
}
