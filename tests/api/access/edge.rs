//! The edge: a request for another host name is misdirected (421), and a browser page
//! of another origin cannot change anything or open a socket (403), whatever
//! credentials it carries.

use serde_json::json;

use super::{alice_and_bob, paused_session};
use crate::helpers::{spawn_app, TestApp};

/// POSTs `{}` to create a session with extra headers; returns the status and error code.
async fn create_with(app: &TestApp, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = app.http.post(app.url("/api/sessions")).json(&json!({}));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let body: serde_json::Value = response.json().await.unwrap_or_default();
    (
        status,
        body["error"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_rebinding_is_refused_with_or_without_authentication() {
    let open = spawn_app(json!([])).await;
    let (alice, _) = alice_and_bob().await;
    for app in [&open, &alice] {
        let port = app.address.rsplit(':').next().unwrap();
        let rebound = format!("attacker.example:{port}");
        for path in ["/api/sessions", "/", "/healthz"] {
            let response = app
                .http
                .get(app.url(path))
                .header("host", &rebound)
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 421, "{path}");
        }
        let (status, code) = create_with(app, &[("host", &rebound)]).await;
        assert_eq!((status, code.as_str()), (421, "host_not_allowed"));
        for own in [format!("localhost:{port}"), app.address.clone()] {
            assert_eq!(create_with(app, &[("host", &own)]).await.0, 201, "{own}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listed_host_names_are_answered() {
    let app =
        crate::helpers::spawn_app_with(json!([]), &["--allowed-hosts", "tandem.example.com"]).await;
    let (status, _) = create_with(&app, &[("host", "tandem.example.com")]).await;
    assert_eq!(status, 201);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cross_site_requests_cannot_change_anything() {
    let (alice, _) = alice_and_bob().await;
    let own = format!("http://{}", alice.address);
    let refused: [&[(&str, &str)]; 3] = [
        &[("origin", "https://evil.example")],
        &[("origin", "null")],
        &[("sec-fetch-site", "cross-site")],
    ];
    for headers in refused {
        let (status, code) = create_with(&alice, headers).await;
        assert_eq!(
            (status, code.as_str()),
            (403, "origin_not_allowed"),
            "{headers:?}"
        );
    }
    let accepted: [&[(&str, &str)]; 3] = [
        &[("origin", own.as_str()), ("sec-fetch-site", "same-origin")],
        &[("sec-fetch-site", "same-origin")],
        &[],
    ];
    for headers in accepted {
        assert_eq!(create_with(&alice, headers).await.0, 201, "{headers:?}");
    }
    let (_, listed) = alice.get("/api/sessions").await;
    assert_eq!(
        listed["sessions"].as_array().unwrap().len(),
        3,
        "only accepted ones exist"
    );
    // Reading is not changing: a cross-site GET is answered (CORS keeps its body from
    // the page).
    let response = alice
        .http
        .get(alice.url("/api/sessions"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert!(response
        .headers()
        .get("access-control-allow-origin")
        .is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_socket_from_another_origin_is_refused_before_the_upgrade() {
    let (alice, _) = alice_and_bob().await;
    let (session, _) = paused_session(&alice).await;
    let own = format!("http://{}", alice.address);
    let (status, body) = alice
        .try_socket(&session, 0, &[("origin", "https://evil.example")])
        .await
        .err()
        .expect("refused");
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (403, Some("origin_not_allowed"))
    );
    let mut socket = alice
        .try_socket(&session, 0, &[("origin", &own)])
        .await
        .unwrap();
    socket.backlog().await;
    let open = spawn_app(json!([])).await;
    let session = open.create_session().await;
    let refused = open
        .try_socket(&session, 0, &[("origin", "http://localhost:1")])
        .await;
    assert_eq!(
        refused.err().map(|(s, _)| s),
        Some(403),
        "also without authentication"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_host_and_port_over_another_scheme_is_another_origin() {
    let (alice, _) = alice_and_bob().await;
    let (session, _) = paused_session(&alice).await;
    let tls = format!("https://{}", alice.address);
    let (status, code) = create_with(&alice, &[("origin", &tls)]).await;
    assert_eq!((status, code.as_str()), (403, "origin_not_allowed"));
    let refused = alice.try_socket(&session, 0, &[("origin", &tls)]).await;
    assert_eq!(refused.err().map(|(status, _)| status), Some(403));
    // Behind a TLS proxy the request's scheme is https, and so is the page's origin.
    let proxied = [("origin", tls.as_str()), ("x-forwarded-proto", "https")];
    assert_eq!(create_with(&alice, &proxied).await.0, 201);
    let plain = format!("http://{}", alice.address);
    let (status, _) = create_with(
        &alice,
        &[("origin", &plain), ("x-forwarded-proto", "https")],
    )
    .await;
    assert_eq!(status, 403, "a plain page behind a TLS proxy is foreign");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listed_origins_may_drive_the_api() {
    let apps = crate::helpers::spawn_app_with_users(
        json!([]),
        &["--allowed-origins", "https://app.example.com"],
        &["dora"],
    )
    .await;
    let dora = &apps[0];
    let (status, _) = create_with(dora, &[("origin", "https://app.example.com")]).await;
    assert_eq!(status, 201);
    assert_eq!(
        create_with(dora, &[("origin", "https://other.example.com")])
            .await
            .0,
        403
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_origins_page_may_call_agui_across_origins_and_no_other() {
    let apps = crate::helpers::spawn_app_with_users(
        json!([{"text": "Hi from afar."}]),
        &["--allowed-origins", "https://app.example.com"],
        &["dora"],
    )
    .await;
    let dora = &apps[0];
    let preflight = |origin: &str| {
        dora.http
            .request(reqwest::Method::OPTIONS, dora.url("/api/agui"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .header(
                "access-control-request-headers",
                "authorization,content-type",
            )
            .send()
    };
    let allowed = preflight("https://app.example.com").await.unwrap();
    assert_eq!(allowed.status(), 204);
    let headers = allowed.headers();
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example.com"
    );
    assert!(headers["access-control-allow-methods"]
        .to_str()
        .unwrap()
        .contains("POST"));
    let asked = headers["access-control-allow-headers"].to_str().unwrap();
    assert!(
        asked.contains("authorization") && asked.contains("content-type"),
        "{asked}"
    );
    assert_eq!(headers["vary"], "Origin");

    let refused = preflight("https://evil.example").await.unwrap();
    assert_eq!(refused.status(), 403);
    assert!(refused
        .headers()
        .get("access-control-allow-origin")
        .is_none());

    let thread = uuid::Uuid::new_v4().to_string();
    let input = json!({"threadId": thread, "runId": "r1", "state": {}, "tools": [],
                       "context": [], "forwardedProps": {},
                       "messages": [{"id": "u1", "role": "user", "content": "Hi"}]});
    assert!(
        dora.auth_header().is_some(),
        "a bearer token, as an HttpAgent would send"
    );
    let response = dora
        .http
        .post(dora.url("/api/agui"))
        .header("origin", "https://app.example.com")
        .header("accept", "text/event-stream")
        .json(&input)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(
        response.headers()["access-control-allow-origin"],
        "https://app.example.com"
    );
    let exposed = response.headers()["access-control-expose-headers"].to_str();
    assert!(
        exposed.as_ref().unwrap().contains("tandem-session-id"),
        "the page may read the thread's session: {exposed:?}"
    );
    assert!(response.headers().contains_key("tandem-session-id"));
    let streamed = response.text().await.unwrap();
    assert!(
        streamed.contains(" afar.") && streamed.contains("RUN_FINISHED"),
        "{streamed}"
    );
    let other = dora
        .http
        .get(dora.url("/api/sessions"))
        .header("origin", "https://evil.example")
        .send()
        .await
        .unwrap();
    assert!(
        other.headers().get("access-control-allow-origin").is_none(),
        "an unlisted origin's page cannot read anything"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_response_carries_the_security_headers() {
    let app = spawn_app(json!([])).await;
    for path in ["/", "/api/sessions", "/api/nothing", "/healthz"] {
        let response = app.http.get(app.url(path)).send().await.unwrap();
        let headers = response.headers();
        let csp = headers
            .get("content-security-policy")
            .unwrap()
            .to_str()
            .unwrap();
        assert!(csp.contains("frame-ancestors 'none'"), "{path}: {csp}");
        assert!(csp.contains("script-src 'self'"), "{path}: {csp}");
        assert_eq!(headers.get("x-content-type-options").unwrap(), "nosniff");
        assert_eq!(headers.get("referrer-policy").unwrap(), "no-referrer");
        assert_eq!(headers.get("x-frame-options").unwrap(), "DENY");
    }
    let api = app.http.get(app.url("/api/sessions")).send().await.unwrap();
    assert_eq!(api.headers().get("cache-control").unwrap(), "no-store");

    // The responses actix-http's parser writes itself, before any app code runs.
    let host = format!("Host: {}\r\n", app.address);
    let huge = format!(
        "GET / HTTP/1.1\r\n{host}X-Big: {}\r\n\r\n",
        "a".repeat(200_000)
    );
    let many: String = (0..100).map(|i| format!("X-{i}: a\r\n")).collect();
    let many = format!("GET / HTTP/1.1\r\n{host}{many}\r\n");
    let after_keep_alive = format!("GET /healthz HTTP/1.1\r\n{host}\r\nNOT HTTP\r\n\r\n");
    let after_head = format!("HEAD /api/sessions HTTP/1.1\r\n{host}\r\nGET /\x01 HTTP/1.1\r\n\r\n");
    let cases = [
        (
            "a malformed request line",
            "GARBAGE\r\n\r\n".to_string(),
            vec![400],
        ),
        ("a 200 KB header", huge, vec![431]),
        ("100 headers", many, vec![431]),
        (
            "after a keep-alive response",
            after_keep_alive,
            vec![200, 400],
        ),
        ("after an answer to HEAD", after_head, vec![405, 400]),
    ];
    for (what, request, statuses) in cases {
        let heads = raw_exchange(&app.address, request.as_bytes()).await;
        let got: Vec<u16> = heads.iter().map(|(status, _)| *status).collect();
        assert_eq!(got, statuses, "{what}: {heads:?}");
        for (status, headers) in &heads {
            for expected in [
                "x-content-type-options: nosniff",
                "x-frame-options: deny",
                "referrer-policy: no-referrer",
            ] {
                assert!(headers.contains(expected), "{what}, {status}: {headers}");
            }
            assert!(
                headers.contains("content-security-policy: default-src 'none'"),
                "{what}, {status}: {headers}"
            );
        }
    }
}

/// Writes `request` to a new connection as it is and reads until the server ends it;
/// returns each response's status and head (lowercase). Bodies are skipped by
/// `Content-Length` (the responses here have no other framing), except after `HEAD`.
async fn raw_exchange(address: &str, request: &[u8]) -> Vec<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    // The server stops reading a request it refuses, so the end of a long one may be
    // refused (reset): what it answered before is what counts.
    let _ = stream.write_all(request).await;
    let mut received = Vec::new();
    let read = stream.read_to_end(&mut received);
    let _ = tokio::time::timeout(std::time::Duration::from_secs(20), read)
        .await
        .expect("the server closes the connection");
    let text = String::from_utf8_lossy(&received).to_ascii_lowercase();
    let head_request = request.starts_with(b"HEAD ");
    let mut heads = Vec::new();
    let mut rest = text.as_str();
    while let Some(end) = rest.find("\r\n\r\n") {
        let head = &rest[..end];
        let status = head[9..12].parse().unwrap();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length: "))
            .map_or(0, |n| n.trim().parse().unwrap());
        let body = if head_request && heads.is_empty() {
            0
        } else {
            length
        };
        heads.push((status, head.to_string()));
        rest = &rest[end + 4 + body..];
    }
    heads
}
