//! `GET /api/sessions/{id}/export?format=markdown|json|zip`: a session as a file to download;
//! `GET /api/sessions/{id}/preview`: its transcript as the HTML the page paints first.

use actix_web::http::header::{ContentDisposition, DispositionParam, DispositionType};
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use shared::api::ErrorBody;

use super::Owned;
use crate::error::ApiError;
use crate::session_list::summary;
use crate::store::{Store, StoredEvent};

/// The file formats a session exports to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// A transcript people read.
    Markdown,
    /// The AG-UI events, for programs.
    Json,
    /// Both, with the files the messages carry.
    Zip,
}

/// Query of the export.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportQuery {
    format: Format,
}

/// The session's file, as an attachment named after its title.
#[utoipa::path(get, path = "/api/sessions/{id}/export", tag = "sessions",
    params(
        ("format" = String, Query, pattern = "^(markdown|json|zip)$",
         description = "`markdown` (a transcript; files as links to `/api/attachments/{id}`), `json` (the session and its AG-UI events, files by id) or `zip` (both, and every file the messages carry under `files/`)"),
    ),
    responses(
        (status = 200, description = "The file: `text/markdown`, `application/json` or `application/zip`, as an attachment"),
        (status = 400, description = "Not a session id, or a bad format", body = ErrorBody),
    )
)]
pub async fn export<S: Store>(
    Owned { state, row, .. }: Owned<S>,
    query: web::Query<ExportQuery>,
    request: actix_web::HttpRequest,
) -> Result<HttpResponse, ApiError> {
    let stored = state.store.events_after(row.id, 0, u32::MAX).await?;
    let events = StoredEvent::parse_all(&stored);
    let session = summary(row);
    let name = file_name(&session.title);
    let attachment =
        |file: &shared::attachments::Attachment| format!("/api/attachments/{}", file.id);
    let (body, content_type, extension) = match query.format {
        Format::Zip => {
            let archive = crate::export::archive::archive(&*state.store, &session, &events, &name);
            let file = archive.await.map_err(|error| match error {
                crate::export::archive::ArchiveError::Store(error) => ApiError::from(error),
                other => {
                    tracing::error!(error = %other, "an export's archive could not be written");
                    ApiError::Internal
                }
            })?;
            let disposition = ContentDisposition {
                disposition: DispositionType::Attachment,
                parameters: vec![DispositionParam::Filename(format!("{name}.zip"))],
            };
            let file = actix_files::NamedFile::from_file(file, format!("{name}.zip"))
                .map_err(|error| {
                    tracing::error!(%error, "an export's archive could not be read back");
                    ApiError::Internal
                })?
                .set_content_type("application/zip".parse().expect("a media type"))
                .set_content_disposition(disposition)
                .use_etag(false)
                .use_last_modified(false);
            return Ok(file.into_response(&request));
        }
        Format::Markdown => (
            crate::export::markdown(&session, &events, attachment),
            "text/markdown; charset=utf-8",
            "md",
        ),
        Format::Json => (
            crate::export::json(&session, &events).to_string(),
            "application/json",
            "json",
        ),
    };
    let disposition = ContentDisposition {
        disposition: DispositionType::Attachment,
        parameters: vec![DispositionParam::Filename(format!("{name}.{extension}"))],
    };
    Ok(HttpResponse::Ok()
        .content_type(content_type)
        .insert_header(disposition)
        .body(body))
}

/// A file name from a title: ASCII letters, digits and dashes (any header carries it),
/// at most 60 characters.
fn file_name(title: &str) -> String {
    let mut name = String::new();
    for c in title.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.ends_with('-') && !name.is_empty() {
            name.push('-');
        }
        if name.chars().count() >= 60 {
            break;
        }
    }
    let name = name.trim_end_matches('-');
    if name.is_empty() {
        "session".into()
    } else {
        name.into()
    }
}

#[cfg(test)]
mod tests {
    use super::file_name;

    #[test]
    fn file_names_come_from_titles() {
        assert_eq!(
            file_name("Trip to Lisbon, 3 days!"),
            "trip-to-lisbon-3-days"
        );
        assert_eq!(file_name("../../etc/passwd"), "etc-passwd");
        assert_eq!(file_name("***"), "session");
        assert_eq!(file_name("Café au lait"), "caf-au-lait");
    }
}

/// Events the preview folds at most: the newest so many (the page opens at the bottom).
const PREVIEW_EVENTS: u32 = 10_000;
/// Messages the preview renders at most, the newest: more than a tall screen shows.
const PREVIEW_MESSAGES: usize = 40;

/// The end of the session's transcript (its newest messages) as an HTML fragment in the
/// page's markup, which the page paints while its code loads (see `export::preview`).
#[utoipa::path(get, path = "/api/sessions/{id}/preview", tag = "sessions", responses(
    (status = 200, description = "The end of the transcript as an HTML fragment (`text/html`): its newest 40 messages (the person's and the agent's, with the agent's reasoning and tool calls by name), oldest first; built from the newest 10,000 events, everything from the log escaped", content_type = "text/html"),
))]
pub async fn preview<S: Store>(
    Owned { state, row, .. }: Owned<S>,
) -> Result<HttpResponse, ApiError> {
    let after = row.last_seq.saturating_sub(u64::from(PREVIEW_EVENTS));
    let stored = state
        .store
        .events_after(row.id, after, PREVIEW_EVENTS)
        .await?;
    let events = StoredEvent::parse_all(&stored);
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .insert_header((actix_web::http::header::CACHE_CONTROL, "no-store"))
        .body(crate::export::preview::transcript_html(
            &events,
            PREVIEW_MESSAGES,
        )))
}
