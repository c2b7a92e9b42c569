//! The page's sign-in: a token is exchanged for an HttpOnly, SameSite=Strict cookie
//! backed by a server-side row; signing out or revoking the user ends it.

use reqwest::header::{COOKIE, SET_COOKIE};
use serde_json::{json, Value};

use super::alice_and_bob;
use crate::helpers::TestApp;

/// Signs in with `token`; returns the response status, the `Set-Cookie` header and the
/// `name=value` pair to send back.
pub(super) async fn sign_in(app: &TestApp, token: &str) -> (u16, String, String) {
    let response = app
        .anonymous()
        .http
        .post(app.url("/api/auth/login"))
        .json(&json!({ "token": token }))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    let set_cookie = response
        .headers()
        .get(SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let pair = set_cookie.split(';').next().unwrap_or_default().to_string();
    (status, set_cookie, pair)
}

async fn get_with_cookie(app: &TestApp, path: &str, cookie: &str) -> (u16, Value) {
    let request = reqwest::Client::new()
        .get(app.url(path))
        .header(COOKIE, cookie);
    crate::helpers::status_and_json(request).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_signs_the_page_in_and_signing_out_ends_the_cookie() {
    let (alice, _bob) = alice_and_bob().await;
    let (status, _, _) = sign_in(&alice, "tdm_not-a-token").await;
    assert_eq!(status, 401);

    let (status, set_cookie, cookie) = sign_in(&alice, alice.token.as_deref().unwrap()).await;
    assert_eq!(status, 200);
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="] {
        assert!(set_cookie.contains(attribute), "{set_cookie}");
    }
    assert!(
        !set_cookie.contains("Secure"),
        "plain HTTP gets no Secure cookie"
    );
    assert!(
        !cookie.contains(alice.token.as_deref().unwrap()),
        "the cookie is not the token"
    );

    let (status, me) = get_with_cookie(&alice, "/api/auth/me", &cookie).await;
    assert_eq!((status, me["name"].as_str()), (200, Some("alice")));
    assert_eq!(me["signedInWith"], "cookie");

    let response = reqwest::Client::new()
        .post(alice.url("/api/auth/logout"))
        .header(COOKIE, &cookie)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 204);
    let cleared = response
        .headers()
        .get(SET_COOKIE)
        .unwrap()
        .to_str()
        .unwrap();
    assert!(cleared.contains("Max-Age=0"), "{cleared}");
    let (status, _) = get_with_cookie(&alice, "/api/sessions", &cookie).await;
    assert_eq!(
        status, 401,
        "the server-side sign-in is gone, not just the cookie"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_requests_get_a_secure_cookie() {
    let (alice, _bob) = alice_and_bob().await;
    let response = reqwest::Client::new()
        .post(alice.url("/api/auth/login"))
        .header("x-forwarded-proto", "https")
        .json(&json!({ "token": alice.token.as_deref().unwrap() }))
        .send()
        .await
        .unwrap();
    let set_cookie = response
        .headers()
        .get(SET_COOKIE)
        .unwrap()
        .to_str()
        .unwrap();
    assert!(set_cookie.contains("Secure"), "{set_cookie}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_user_is_out_at_once_on_every_credential() {
    let (dir, url) = crate::helpers::fresh_database();
    let script = crate::helpers::write_script(dir.path(), json!([]));
    let config = crate::helpers::test_config(&url, &script, &["--auth", "token"]);
    let app = crate::helpers::start(config).await;
    let token = crate::helpers::add_users(&url, &["carol"]).await.remove(0);
    let carol = app.as_user(&token);
    let (_, _, cookie) = sign_in(&carol, &token).await;
    assert_eq!(carol.get("/api/sessions").await.0, 200);
    let revoke = tandem::auth::cli::UsersOn(
        tandem::auth::cli::UsersCommand::Revoke {
            name: "carol".into(),
        },
        Default::default(),
    );
    tandem::store::open(&url, &Default::default(), revoke)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(carol.get("/api/sessions").await.0, 401);
    assert_eq!(
        get_with_cookie(&carol, "/api/sessions", &cookie).await.0,
        401
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_with_two_credentials_of_one_kind_is_refused() {
    let (alice, bob) = alice_and_bob().await;
    let (_, _, alices_cookie) = sign_in(&alice, alice.token.as_deref().unwrap()).await;
    let (_, _, bobs_cookie) = sign_in(&bob, bob.token.as_deref().unwrap()).await;
    let bearer = |app: &TestApp| format!("Bearer {}", app.token.as_deref().unwrap());
    let anonymous = alice.anonymous();
    let cases: [(&str, Vec<(&str, String)>); 4] = [
        (
            "two Authorization headers, two users",
            vec![
                ("authorization", bearer(&alice)),
                ("authorization", bearer(&bob)),
            ],
        ),
        (
            "the same token twice",
            vec![
                ("authorization", bearer(&alice)),
                ("authorization", bearer(&alice)),
            ],
        ),
        (
            "two sign-in cookies in one header",
            vec![("cookie", format!("{alices_cookie}; {bobs_cookie}"))],
        ),
        (
            "two Cookie headers, each with a sign-in",
            vec![
                ("cookie", alices_cookie.clone()),
                ("cookie", bobs_cookie.clone()),
            ],
        ),
    ];
    for (what, headers) in cases {
        let mut request = anonymous.http.get(anonymous.url("/api/auth/me"));
        for (name, value) in &headers {
            request = request.header(*name, value);
        }
        let (status, body) = crate::helpers::status_and_json(request).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (400, Some("bad_request")),
            "{what}: {body}"
        );
    }
    // One of each kind is no ambiguity: the bearer token is the request's credential.
    let request = anonymous
        .http
        .get(anonymous.url("/api/auth/me"))
        .header("authorization", bearer(&alice))
        .header("cookie", bobs_cookie);
    let (status, me) = crate::helpers::status_and_json(request).await;
    assert_eq!((status, me["name"].as_str()), (200, Some("alice")), "{me}");
}
