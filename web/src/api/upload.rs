//! Uploading a file the person attached: `POST /api/sessions/{id}/attachments?name=` with
//! the file as the body, through `XMLHttpRequest` because `fetch` reports no upload
//! progress. The progress callback gets the whole percent sent (0 to 100) as the browser
//! sends it.

use shared::api::ErrorBody;
use shared::attachments::Attachment;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{File, ProgressEvent, XmlHttpRequest};

use super::ApiError;

/// Uploads `file` to `session`, calling `progress` as it goes; the attachment stored, or
/// the server's refusal (a 413 names the limit or the quota).
pub async fn upload(
    session: &str,
    file: &File,
    progress: impl Fn(u8) + 'static,
) -> Result<Attachment, ApiError> {
    let request = XmlHttpRequest::new().map_err(|e| ApiError::network(format!("{e:?}")))?;
    let name = js_sys::encode_uri_component(&file.name());
    let url = format!("/api/sessions/{session}/attachments?name={name}");
    request
        .open("POST", &url)
        .map_err(|e| ApiError::network(format!("{e:?}")))?;
    let media_type = match file.type_() {
        kind if kind.is_empty() => "application/octet-stream".to_string(),
        kind => kind,
    };
    let _ = request.set_request_header("Content-Type", &media_type);
    let on_progress = Closure::<dyn Fn(ProgressEvent)>::new(move |event: ProgressEvent| {
        if event.length_computable() && event.total() > 0.0 {
            progress(shared::decimal::percent(event.loaded(), event.total()));
        }
    });
    if let Ok(upload) = request.upload() {
        upload.set_onprogress(Some(on_progress.as_ref().unchecked_ref()));
    }
    // Settles when the request ends, whatever its status (a network failure included).
    let done = js_sys::Promise::new(&mut |resolve, _reject| {
        request.set_onloadend(Some(&resolve));
    });
    request
        .send_with_opt_blob(Some(file))
        .map_err(|e| ApiError::network(format!("{e:?}")))?;
    let _ = JsFuture::from(done).await;
    drop(on_progress);
    let status = request.status().unwrap_or(0);
    let body = request.response_text().ok().flatten().unwrap_or_default();
    match status {
        201 => super::from_text(&body).map_err(ApiError::bad_response),
        0 => Err(ApiError::network("the upload was cut off")),
        _ => Err(super::from_text::<ErrorBody>(&body)
            .map(|refused| ApiError::from(refused.error))
            .unwrap_or_else(|_| {
                ApiError::new("upload_failed", format!("The upload failed ({status})"))
            })),
    }
}
