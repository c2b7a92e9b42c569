//! Files and images from HTTP: `POST /api/sessions/{id}/attachments` streams the body into
//! the store (its media type read from the bytes), `GET /api/attachments/{id}` streams it
//! back with an `ETag` and `Range`, never sniffed by the browser, served as a type no
//! browser runs (`media::served_type`) and shown in place only when it is a raster image.

use actix_web::http::header::{self, ContentDisposition, DispositionParam, DispositionType};
use actix_web::http::StatusCode;
use actix_web::web::Bytes;
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::{StreamExt, TryStreamExt};
use serde::Deserialize;
use shared::api::ErrorBody;
use shared::attachments::Attachment;

use super::Owned;
use crate::attachments::{media, Upload, UploadError};
use crate::auth::Caller;
use crate::domain::{new_id, now_ms};
use crate::error::ApiError;
use crate::state::AppState;
use crate::store::{AttachmentRow, Store, CHUNK_BYTES};

/// Longest attachment name, in characters.
const MAX_NAME: usize = 255;
/// Chunks read from the store per query while a download streams.
const CHUNKS_PER_READ: u32 = 8;

/// `?name=` of an upload (a multipart upload's part may name the file instead).
#[derive(Debug, Deserialize)]
pub struct UploadQuery {
    name: Option<String>,
}

/// `POST /api/sessions/{id}/attachments?name=` with the file's bytes as the body, or a
/// `multipart/form-data` body whose `file` part is the file.
#[utoipa::path(post, path = "/api/sessions/{id}/attachments", tag = "sessions",
    params(
        ("name" = Option<String>, Query, description = "The file's name (1–255 characters, no `/` or `\\`); a multipart part's `filename` when absent"),
    ),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "The file's bytes, `Content-Type` its declared media type; or `multipart/form-data` with a `file` part (its own `Content-Type` and `filename`)"),
    responses(
        (status = 201, description = "Stored (the same bytes of the same user are stored once)", body = Attachment),
        (status = 400, description = "A bad or missing name, no `Content-Type`, no `file` part, or a body cut short", body = ErrorBody),
        (status = 413, description = "`payload_too_large` (over `--max-attachment-bytes`) or `attachment_quota_exceeded` (`details`: `used`, `quota`)", body = ErrorBody),
        (status = 422, description = "`invalid_attachment`: empty, or the bytes are not what `Content-Type` declares", body = ErrorBody),
    )
)]
pub async fn upload<S: Store>(
    Owned {
        state,
        row: session,
        ..
    }: Owned<S>,
    request: HttpRequest,
    query: web::Query<UploadQuery>,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let declared = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .ok_or_else(|| ApiError::BadRequest("send the file's media type as `Content-Type`".into()))?
        .to_string();
    let limits = state.attachments;
    let declared_length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    // A multipart body carries a little more than its file.
    let slack = if is_multipart(&declared) {
        64 * 1024
    } else {
        0
    };
    if declared_length.is_some_and(|length| length > limits.max_bytes + slack) {
        return Err(ApiError::TooLarge(limits.max_bytes as usize));
    }
    let file = match is_multipart(&declared) {
        false => {
            let name = query
                .name
                .as_deref()
                .ok_or_else(|| ApiError::BadRequest("name the file with `?name=`".into()))?;
            File {
                name: valid_name(name)?,
                declared,
                bytes: body
                    .map(|chunk| chunk.map_err(|error| error.to_string()))
                    .boxed_local(),
            }
        }
        true => file_part(request.headers(), body, query.name.as_deref()).await?,
    };
    let stored = store_file(&state, &session, file).await?;
    crate::metrics::METRICS.attachment_uploaded(stored.bytes);
    Ok(HttpResponse::Created().json(Attachment {
        id: stored.id,
        name: stored.name,
        media_type: stored.media_type,
        bytes: stored.bytes,
        sha256: stored.sha256,
    }))
}

/// A file as it arrives: its name, its declared type and its bytes.
struct File {
    name: String,
    declared: String,
    bytes: futures_util::stream::LocalBoxStream<'static, Result<Bytes, String>>,
}

/// Whether a `Content-Type` is `multipart/form-data`.
pub(super) fn is_multipart(content_type: &str) -> bool {
    content_type
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("multipart/form-data")
}

/// The `file` part of a `multipart/form-data` body (parts before it are skipped): its
/// `filename` (or `?name=`) and its own `Content-Type`.
async fn file_part(
    headers: &header::HeaderMap,
    body: web::Payload,
    name: Option<&str>,
) -> Result<File, ApiError> {
    let mut form = actix_multipart::Multipart::new(headers, body);
    let bad = |error: actix_multipart::MultipartError| {
        ApiError::BadRequest(format!("not a valid multipart body: {error}"))
    };
    // Other fields before the file are read past, up to this much together.
    let mut skipped = 0usize;
    while let Some(part) = form.next().await {
        let mut part = part.map_err(bad)?;
        if part.name() != Some("file") {
            while let Some(chunk) = part.next().await {
                skipped += chunk.map_err(bad)?.len();
                if skipped > 64 * 1024 {
                    return Err(ApiError::BadRequest(
                        "the fields before the `file` part are longer than 64 KiB".into(),
                    ));
                }
            }
            continue;
        }
        let named = name
            .map(str::to_string)
            .or_else(|| {
                part.content_disposition()
                    .and_then(|disposition| disposition.get_filename())
                    .map(str::to_string)
            })
            .ok_or_else(|| {
                ApiError::BadRequest(
                    "the `file` part names no `filename` (or send `?name=`)".into(),
                )
            })?;
        let declared = part
            .content_type()
            .map_or("application/octet-stream".to_string(), |mime| {
                mime.to_string()
            });
        // The part reads through the form, which lives as long as the part's stream; the
        // rest of the form is never read: the upload ends with its file.
        let bytes = futures_util::stream::unfold((form, part), |(form, mut part)| async move {
            let chunk = part.next().await?;
            Some((chunk.map_err(|error| error.to_string()), (form, part)))
        });
        return Ok(File {
            name: valid_name(&named)?,
            declared,
            bytes: bytes.boxed_local(),
        });
    }
    Err(ApiError::BadRequest(
        "the multipart body has no `file` part".into(),
    ))
}

/// Streams a file into the store as an attachment of `session`.
async fn store_file<S: Store>(
    state: &AppState<S>,
    session: &crate::store::SessionRow,
    mut file: File,
) -> Result<AttachmentRow, ApiError> {
    let store = &*state.store;
    let mut upload = Upload::begin(store, session.owner, &file.declared, state.attachments).await?;
    while let Some(chunk) = file.bytes.next().await {
        let pushed = match chunk {
            Ok(bytes) => upload.push(&bytes).await.map_err(ApiError::from),
            Err(error) => Err(ApiError::BadRequest(format!(
                "the body was cut short: {error}"
            ))),
        };
        if let Err(error) = pushed {
            upload.abandon().await;
            return Err(error);
        }
    }
    let attachment = AttachmentRow {
        id: new_id("att"),
        owner: session.owner,
        session: session.id,
        name: file.name,
        blob: String::new(),
        media_type: String::new(),
        bytes: 0,
        sha256: String::new(),
        created_at: now_ms(),
    };
    Ok(upload.finish(attachment).await?)
}

/// `GET /api/attachments/{id}`: the bytes, whole or one range.
#[utoipa::path(get, path = "/api/attachments/{attachment}", tag = "sessions", responses(
    (status = 200, description = "The bytes (`ETag`, `Accept-Ranges`, `X-Content-Type-Options: nosniff`; `Content-Disposition: inline` only for PNG, JPEG, GIF and WebP). `Content-Type` is the stored type for those and PDF; any other text is served as `text/plain; charset=utf-8` and anything else as `application/octet-stream`, so no browser runs an upload (a script, a page, an SVG)", content_type = "application/octet-stream"),
    (status = 404, description = "No such attachment of the caller's", body = ErrorBody),
))]
pub async fn download<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    request: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    let row = state.store.attachment(&id).await?;
    let row = row.filter(|row| row.owner == caller.user);
    serve(&state, &request, row.ok_or_else(|| no_attachment(&id))?)
}

/// `GET /api/shared/{token}/attachments/{id}`: an attachment of the shared session (or a
/// line it branched from), as the owner downloads it, for a link that shows attachments.
#[utoipa::path(get, path = "/api/shared/{token}/attachments/{attachment}", tag = "sharing", responses(
    (status = 200, description = "The bytes, as `GET /api/attachments/{attachment}` serves them", content_type = "application/octet-stream"),
    (status = 404, description = "No such link, the link hides attachments, or no such attachment in its session", body = ErrorBody),
))]
pub async fn shared_download<S: Store>(
    state: web::Data<AppState<S>>,
    request: HttpRequest,
    path: web::Path<(String, String)>,
) -> Result<HttpResponse, ApiError> {
    let (token, id) = path.into_inner();
    let (share, session) = crate::access::share_of(&state, &token).await?;
    if share.hide_attachments {
        return Err(no_attachment(&id));
    }
    let row = state.store.attachment_in_line(session.id, &id).await?;
    serve(&state, &request, row.ok_or_else(|| no_attachment(&id))?)
}

fn no_attachment(id: &str) -> ApiError {
    let id: String = id.chars().take(80).collect();
    ApiError::NotFound(format!("no attachment {id}"))
}

/// An attachment's bytes, whole or the one range asked for, with its ETag.
fn serve<S: Store>(
    state: &AppState<S>,
    request: &HttpRequest,
    row: crate::store::AttachmentRow,
) -> Result<HttpResponse, ApiError> {
    let etag = format!("\"{}\"", row.sha256);
    let unchanged = request
        .headers()
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|tags| {
            tags.split(',')
                .any(|tag| tag.trim() == etag || tag.trim() == "*")
        });
    let mut response = HttpResponse::build(StatusCode::OK);
    response
        .insert_header((header::ETAG, etag.clone()))
        .insert_header((
            header::CACHE_CONTROL,
            "private, max-age=31536000, immutable",
        ));
    if unchanged {
        return Ok(response.status(StatusCode::NOT_MODIFIED).finish());
    }
    let total = row.bytes;
    let served_type = media::served_type(&row.media_type);
    if total == 0 {
        return Ok(response.content_type(served_type).finish());
    }
    let (first, last) = match requested_range(request, total, &etag)? {
        Some((first, last)) => {
            response.status(StatusCode::PARTIAL_CONTENT).insert_header((
                header::CONTENT_RANGE,
                format!("bytes {first}-{last}/{total}"),
            ));
            (first, last)
        }
        None => (0, total - 1),
    };
    let disposition = ContentDisposition {
        disposition: match media::shown_inline(&row.media_type) {
            true => DispositionType::Inline,
            false => DispositionType::Attachment,
        },
        parameters: vec![DispositionParam::FilenameExt(header::ExtendedValue {
            charset: header::Charset::Ext("UTF-8".into()),
            language_tag: None,
            value: shared::text::one_line(&row.name).into_bytes(),
        })],
    };
    let body = bytes_of(state.store.clone(), row.blob.clone(), first, last);
    Ok(response
        .insert_header((header::CONTENT_TYPE, served_type))
        .insert_header((header::ACCEPT_RANGES, "bytes"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"))
        .insert_header((
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; sandbox",
        ))
        .insert_header(disposition)
        .no_chunking(last - first + 1)
        .streaming(body))
}

/// The one byte range a download asks for, if any; 416 when it lies past the end. Several
/// ranges (whatever they are, overlapping or past the end), a header that does not parse,
/// and an `If-Range` that does not name this file's `etag` get the whole file, as RFC 9110
/// allows and requires.
fn requested_range(
    request: &HttpRequest,
    total: u64,
    etag: &str,
) -> Result<Option<(u64, u64)>, ApiError> {
    let headers = request.headers();
    let Some(value) = headers.get(header::RANGE) else {
        return Ok(None);
    };
    if let Some(condition) = headers.get(header::IF_RANGE) {
        // Only a strong match of the current ETag (no `W/`, no date: no `Last-Modified`
        // is served) lets a range through; else the client's copy is of another version.
        if condition.to_str().map(str::trim).ok() != Some(etag) {
            return Ok(None);
        }
    }
    let Ok(parsed) = value
        .to_str()
        .map_err(drop)
        .and_then(|text| http_range_header::parse_range_header(text).map_err(drop))
    else {
        return Ok(None);
    };
    if parsed.ranges.len() != 1 {
        return Ok(None);
    }
    match parsed.validate(total) {
        Ok(ranges) => Ok(ranges.first().map(|range| (*range.start(), *range.end()))),
        Err(_) => Err(ApiError::RangeNotSatisfiable(total)),
    }
}

/// Bytes `first..=last` of a blob, read a few chunks at a time as the client takes them.
fn bytes_of<S: Store>(
    store: std::sync::Arc<S>,
    blob: String,
    first: u64,
    last: u64,
) -> impl futures_util::Stream<Item = Result<Bytes, ApiError>> {
    let chunk = CHUNK_BYTES as u64;
    let start = (first / chunk) as u32;
    futures_util::stream::try_unfold(start, move |next| {
        let (store, blob) = (store.clone(), blob.clone());
        async move {
            let at = u64::from(next) * chunk;
            if at > last {
                return Ok(None);
            }
            let chunks = store.blob_chunks(&blob, next, CHUNKS_PER_READ).await?;
            if chunks.is_empty() {
                return Err(ApiError::Storage(
                    "the attachment's bytes are missing".into(),
                ));
            }
            let read = chunks.len() as u32;
            // Each chunk goes out as it was read (no copy), cut to the range at its ends.
            let pieces: Vec<Result<Bytes, ApiError>> = chunks
                .into_iter()
                .enumerate()
                .filter_map(|(i, data)| {
                    let begins = at + i as u64 * chunk;
                    let from = first.saturating_sub(begins).min(data.len() as u64) as usize;
                    let to = (last + 1).saturating_sub(begins).min(data.len() as u64) as usize;
                    (from < to).then(|| Ok(Bytes::from(data).slice(from..to)))
                })
                .collect();
            Ok(Some((futures_util::stream::iter(pieces), next + read)))
        }
    })
    .try_flatten()
}

/// An attachment's name as one line a person reads (`shared::text::one_line`: control
/// and bidirectional characters left out): 1–255 characters, no path separator.
fn valid_name(name: &str) -> Result<String, ApiError> {
    let name = shared::text::one_line(name);
    let count = name.chars().count();
    let bad = name.chars().any(|c| c == '/' || c == '\\');
    if count == 0 || count > MAX_NAME || bad || name == "." || name == ".." {
        return Err(ApiError::BadRequest(format!(
            "the name must be 1 to {MAX_NAME} characters with no `/` or `\\` (control characters left out)"
        )));
    }
    Ok(name)
}

impl From<UploadError> for ApiError {
    fn from(error: UploadError) -> Self {
        match error {
            UploadError::TooLarge(max) => ApiError::TooLarge(max as usize),
            UploadError::Quota { used, quota } => ApiError::AttachmentQuota(serde_json::json!({
                "used": used,
                "quota": quota,
            })),
            UploadError::Media(why) => ApiError::InvalidAttachment(why),
            UploadError::Empty => ApiError::InvalidAttachment("the file is empty".into()),
            UploadError::Store(error) => error.into(),
        }
    }
}
