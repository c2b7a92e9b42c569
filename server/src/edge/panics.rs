//! A handler that panics answers 500 `internal` instead of dropping the connection; the
//! worker thread and every other request carry on.
//!
//! The panic becomes an `Err` of the middleware chain, which actix renders with
//! [`ApiError`]'s own response (the request itself is gone with the unwound handler).

use std::panic::AssertUnwindSafe;

use actix_web::body::{BoxBody, MessageBody};
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use futures_util::FutureExt;

use crate::error::ApiError;

/// Calls the rest of the chain; a panic becomes a 500.
pub async fn call_catching(
    request: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<BoxBody>, actix_web::Error> {
    let path = request.path().to_string();
    match AssertUnwindSafe(next.call(request)).catch_unwind().await {
        Ok(response) => Ok(response?.map_into_boxed_body()),
        Err(panic) => {
            let what = crate::telemetry::panic_text(&*panic);
            tracing::error!(path, panic = what, "a request handler panicked");
            Err(ApiError::Internal.into())
        }
    }
}

#[cfg(test)]
mod tests {
    use actix_web::dev::Service;
    use actix_web::{middleware, test, web, App, HttpResponse};

    use crate::edge::EdgePolicy;

    fn get(path: &str) -> test::TestRequest {
        test::TestRequest::get()
            .uri(path)
            .insert_header(("host", "localhost"))
    }

    #[actix_web::test]
    async fn a_panicking_handler_answers_500_and_the_next_request_works() {
        let policy = EdgePolicy::new(
            "127.0.0.1:0",
            vec![],
            vec![],
            "default-src 'none'".into(),
            std::time::Duration::from_secs(10),
        );
        let app = test::init_service(
            App::new()
                .app_data(web::Data::new(policy))
                .wrap(middleware::from_fn(crate::edge::guard))
                .route(
                    "/boom",
                    web::get().to(|| async {
                        if true {
                            panic!("boom");
                        }
                        HttpResponse::Ok().finish()
                    }),
                )
                .route(
                    "/ok",
                    web::get().to(|| async { HttpResponse::Ok().finish() }),
                ),
        )
        .await;
        let Err(boom) = app.call(get("/boom").to_request()).await else {
            panic!("a panicking handler must not answer normally");
        };
        let response = boom.error_response();
        assert_eq!(response.status(), 500);
        let body = actix_web::body::to_bytes(response.into_body())
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "internal");
        let ok = test::call_service(&app, get("/ok").to_request()).await;
        assert_eq!(ok.status(), 200);
    }
}
