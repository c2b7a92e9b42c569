//! The built page (Trunk's `dist/`), served by the same process. Without a built page,
//! `/` explains how to build it instead of failing.

use std::path::PathBuf;

use actix_web::{web, HttpResponse};

const NOT_BUILT: &str = "<!doctype html><meta charset=utf-8><title>Tandem</title>\
<h1>Tandem is running</h1><p>The page has not been built. Run <code>scripts/run.sh</code> \
(or <code>trunk build --release</code>) and restart, or point <code>TANDEM_WEB_DIR</code> \
at the built <code>dist/</code> folder. The API is at <code>/api</code>.</p>";

/// Serves `web_dir` at `/`, or the explanation if it holds no `index.html`.
pub fn configure(cfg: &mut web::ServiceConfig, web_dir: PathBuf) {
    if web_dir.join("index.html").is_file() {
        cfg.service(actix_files::Files::new("/", web_dir).index_file("index.html"));
    } else {
        tracing::warn!(dir = %web_dir.display(), "no built page found; serving a notice at /");
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
