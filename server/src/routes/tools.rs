//! The tools a person's model may call, and the person's own WebAssembly tools, from
//! HTTP: list them, upload one (a manifest and a module, checked as the operator's are),
//! delete one. The checks and the running are `sandbox::user_tools`'.

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use futures_util::StreamExt;
use shared::api::ErrorBody;
use shared::tools::{ToolInfo, ToolList, ToolSource};

use crate::auth::Caller;
use crate::domain::rfc3339;
use crate::error::ApiError;
use crate::sandbox::manifest::{Approval, Manifest, MAX_MANIFEST_BYTES};
use crate::sandbox::user_tools::UploadError;
use crate::state::AppState;
use crate::store::{Store, UserToolRow};

/// What a multipart body may carry beyond its module and manifest (boundaries, headers).
const MULTIPART_SLACK: u64 = 64 * 1024;

/// `GET /api/tools` → every tool the caller's model may call.
#[utoipa::path(get, path = "/api/tools", tag = "tools", responses(
    (status = 200, description = "Every tool the caller's model may call, by name, with where it comes from (`builtin`, `mcp`, `wasm`: the operator's folder, `user`: the caller's own), its schema and whether each call waits for approval; `uploads` says whether the caller may upload tools of their own", body = ToolList),
))]
pub async fn list<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
) -> Result<web::Json<ToolList>, ApiError> {
    let listing = state.runner.server_tools().listing();
    let server = listing.into_iter().map(|listed| ToolInfo {
        name: listed.spec.name,
        source: listed.source,
        description: listed.spec.description,
        parameters: listed.spec.parameters,
        approval: listed.approval,
        digest: None,
        module_bytes: None,
        updated_at: None,
    });
    // The person's own, from their rows alone: listing compiles no module.
    let own: Vec<UserToolRow> = match state.runner.own_tools() {
        Some(_) => state.store.user_tools(caller.user).await?,
        None => Vec::new(),
    };
    let own = own.into_iter().filter_map(|row| {
        let manifest = Manifest::parse(row.manifest.as_bytes()).ok()?;
        Some(own_info(row, &manifest))
    });
    let mut tools: Vec<ToolInfo> = server.chain(own).collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(web::Json(ToolList {
        tools,
        uploads: state.runner.own_tools().is_some(),
    }))
}

/// One of a person's own tools as the API shows it.
fn own_info(row: UserToolRow, manifest: &Manifest) -> ToolInfo {
    ToolInfo {
        name: row.name,
        source: ToolSource::User,
        description: manifest.description.clone(),
        parameters: manifest.parameters.clone(),
        approval: manifest.approval == Approval::Always,
        digest: Some(row.digest),
        module_bytes: Some(row.module_bytes.max(0) as u64),
        updated_at: Some(rfc3339(row.updated_at)),
    }
}

/// `PUT /api/tools/{name}` with a `multipart/form-data` body: a `manifest` part (JSON) and
/// a `module` part (`application/wasm`).
#[utoipa::path(put, path = "/api/tools/{name}", tag = "tools",
    request_body(content = Vec<u8>, content_type = "multipart/form-data", description = "A `manifest` part (the JSON of docs/tools.md: `description`, `parameters`, `approval?`, `idempotent?`, `files?`, `limits?`) and a `module` part (a WASI preview 1 command, `application/wasm`)"),
    responses(
        (status = 201, description = "Added: the caller's model may call it from its next model call", body = ToolInfo),
        (status = 200, description = "Replaced", body = ToolInfo),
        (status = 403, description = "`user_tools_off`: the operator turned people's own tools off (`--user-tools off`)", body = ErrorBody),
        (status = 413, description = "`payload_too_large`: the module is over `--max-tool-module-bytes`", body = ErrorBody),
        (status = 422, description = "`invalid_tool`: a bad name (or one of the server's tools), a bad manifest or schema, or a module that is not WebAssembly, imports anything outside `wasi_snapshot_preview1` or has no `_start`; nothing changed", body = ErrorBody),
    )
)]
pub async fn put<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    name: web::Path<String>,
    request: HttpRequest,
    body: web::Payload,
) -> Result<HttpResponse, ApiError> {
    let toolbox = state
        .runner
        .own_tools()
        .ok_or(ApiError::UserToolsOff)?
        .clone();
    state.rates.upload_tool(caller.user)?;
    let max = toolbox.max_module_bytes();
    let declared_length = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared_length.is_some_and(|length| length > max as u64 + MULTIPART_SLACK) {
        return Err(ApiError::TooLarge(max));
    }
    let name = name.into_inner();
    // A bad name is refused before the body is read.
    crate::sandbox::manifest::check_name(&name).map_err(ApiError::InvalidTool)?;
    let upload = read_upload(request.headers(), body, max).await?;
    let taken = state.runner.is_server_tool(&name);
    let (checked_name, manifest, module) = (name.clone(), upload.manifest, upload.module);
    // Compiling a module takes a while: off the async workers.
    let checked = web::block(move || {
        let checked = toolbox.check(&checked_name, &manifest, &module, |_| taken);
        checked.map(|checked| (checked, manifest, module))
    })
    .await
    .map_err(|_| ApiError::Internal)?;
    let (checked, manifest, module) = checked.map_err(|error| match error {
        UploadError::TooLarge { max, .. } => ApiError::TooLarge(max),
        UploadError::Invalid(why) => ApiError::InvalidTool(why),
    })?;
    let row = UserToolRow {
        name,
        manifest: String::from_utf8_lossy(&manifest).into_owned(),
        digest: checked.program.digest.clone(),
        module_bytes: module.len() as i64,
        updated_at: crate::domain::now_ms(),
    };
    let added = state
        .store
        .put_user_tool(caller.user, &row, &module)
        .await?;
    let info = own_info(row, &checked.manifest);
    Ok(match added {
        true => HttpResponse::Created().json(info),
        false => HttpResponse::Ok().json(info),
    })
}

/// `DELETE /api/tools/{name}` → 204.
#[utoipa::path(delete, path = "/api/tools/{name}", tag = "tools",
    responses(
        (status = 204, description = "Deleted: the caller's model no longer sees it (a call already running ends as it would have)"),
        (status = 404, description = "`not_found`: the caller has no tool of that name (another person's is not theirs)", body = ErrorBody),
    )
)]
pub async fn delete<S: Store>(
    state: web::Data<AppState<S>>,
    caller: Caller,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    match state.store.delete_user_tool(caller.user, &name).await? {
        true => Ok(HttpResponse::NoContent().finish()),
        false => Err(ApiError::NotFound(format!(
            "you have no tool named `{name}`"
        ))),
    }
}

/// The parts of an upload.
struct Upload {
    manifest: Vec<u8>,
    module: Vec<u8>,
}

/// Reads the `manifest` and `module` parts of a multipart body (other parts are refused),
/// each up to its limit.
async fn read_upload(
    headers: &header::HeaderMap,
    body: web::Payload,
    max_module: usize,
) -> Result<Upload, ApiError> {
    let multipart = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(super::attachments::is_multipart);
    if !multipart {
        return Err(ApiError::BadRequest(
            "send a `multipart/form-data` body with a `manifest` part and a `module` part".into(),
        ));
    }
    let mut form = actix_multipart::Multipart::new(headers, body);
    let bad = |error: actix_multipart::MultipartError| {
        ApiError::BadRequest(format!("not a valid multipart body: {error}"))
    };
    let (mut manifest, mut module) = (None, None);
    while let Some(part) = form.next().await {
        let mut part = part.map_err(bad)?;
        let (slot, max, is_module) = match part.name() {
            Some("manifest") if manifest.is_none() => (&mut manifest, MAX_MANIFEST_BYTES, false),
            Some("module") if module.is_none() => (&mut module, max_module, true),
            Some(other @ ("manifest" | "module")) => {
                return Err(ApiError::BadRequest(format!(
                    "the `{other}` part comes twice"
                )))
            }
            other => {
                return Err(ApiError::BadRequest(format!(
                    "an upload has a `manifest` part and a `module` part, not `{}`",
                    other.unwrap_or("")
                )))
            }
        };
        let mut bytes = Vec::new();
        while let Some(chunk) = part.next().await {
            bytes.extend_from_slice(&chunk.map_err(bad)?);
            if bytes.len() > max {
                return Err(match is_module {
                    true => ApiError::TooLarge(max),
                    false => ApiError::InvalidTool(format!(
                        "the manifest is longer than {MAX_MANIFEST_BYTES} bytes"
                    )),
                });
            }
        }
        *slot = Some(bytes);
    }
    match (manifest, module) {
        (Some(manifest), Some(module)) => Ok(Upload { manifest, module }),
        (None, _) => Err(ApiError::BadRequest(
            "the upload has no `manifest` part".into(),
        )),
        (_, None) => Err(ApiError::BadRequest(
            "the upload has no `module` part".into(),
        )),
    }
}
