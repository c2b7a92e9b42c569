use super::*;

const ADDED: &[u8] = b"x-content-type-options: nosniff\r\nx-frame-options: DENY\r\n";
const PARSER_400: &[u8] =
    b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\n\r\n";
const PARSER_400_SECURED: &[u8] = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close\r\nx-content-type-options: nosniff\r\nx-frame-options: DENY\r\n\r\n";

/// What leaves when `stream` is written `step` bytes at a time.
fn sent(app: &AppResponses, stream: &[u8], step: usize) -> Vec<u8> {
    let mut heads = ResponseHeads::new(Rc::from(ADDED), app.clone());
    let mut out = Vec::new();
    let mut at = 0;
    while at < stream.len() {
        let offered = &stream[at..(at + step).min(stream.len())];
        match heads.next(offered) {
            Outgoing::Pass(n) => {
                assert!(n > 0, "a pass moves on");
                out.extend_from_slice(&offered[..n]);
                heads.passed(&offered[..n]);
                at += n;
            }
            Outgoing::Replace { taken, bytes } => {
                out.extend_from_slice(&bytes);
                at += taken;
            }
        }
    }
    out.extend(heads.release());
    out
}

/// `stream` written at every step size gives `expected`; the app wrote the `answers_head`
/// responses (one per app head).
fn check(answers_head: &[bool], stream: &[u8], expected: &[u8]) {
    for step in 1..=stream.len() {
        let app = AppResponses::default();
        for &head in answers_head {
            app.wrote(head);
        }
        let out = sent(&app, stream, step);
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(expected),
            "written {step} bytes at a time"
        );
    }
}

fn concat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

#[test]
fn a_head_the_parser_wrote_gets_the_headers() {
    check(&[], PARSER_400, PARSER_400_SECURED);
    let timeout = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\n\r\n";
    let secured = b"HTTP/1.1 408 Request Timeout\r\ncontent-length: 0\r\nx-content-type-options: nosniff\r\nx-frame-options: DENY\r\n\r\n";
    check(&[], timeout, secured);
}

#[test]
fn the_apps_responses_pass_unchanged_and_a_later_parser_head_is_found() {
    // A body that looks like a head must not be taken for one.
    let body = b"HTTP/1.1 200 OK\r\n\r\n";
    let app = format!(
        "HTTP/1.1 200 OK\r\nx-content-type-options: nosniff\r\ncontent-length: {}\r\n\r\n",
        body.len()
    );
    let stream = concat(&[app.as_bytes(), body, PARSER_400]);
    let expected = concat(&[app.as_bytes(), body, PARSER_400_SECURED]);
    check(&[false], &stream, &expected);
}

#[test]
fn chunked_bodies_are_followed_to_their_end() {
    let app =
        b"HTTP/1.1 200 OK\r\nx-content-type-options: nosniff\r\ntransfer-encoding: chunked\r\n\r\n";
    let body = b"13\r\nHTTP/1.1 200 OK\r\n\r\n\r\n0\r\n\r\n";
    let stream = concat(&[app, body, PARSER_400]);
    check(&[false], &stream, &concat(&[app, body, PARSER_400_SECURED]));
}

#[test]
fn an_answer_to_head_has_no_body_whatever_its_length_says() {
    let app = b"HTTP/1.1 405 Method Not Allowed\r\nx-content-type-options: nosniff\r\ncontent-length: 99\r\n\r\n";
    let stream = concat(&[app, PARSER_400]);
    check(&[true], &stream, &concat(&[app, PARSER_400_SECURED]));
}

#[test]
fn informational_and_empty_responses_have_no_body() {
    let cont = b"HTTP/1.1 100 Continue\r\n\r\n";
    let empty = b"HTTP/1.1 204 No Content\r\nx-content-type-options: nosniff\r\n\r\n";
    let stream = concat(&[cont, empty, PARSER_400]);
    check(
        &[false],
        &stream,
        &concat(&[cont, empty, PARSER_400_SECURED]),
    );
}

#[test]
fn after_an_upgrade_or_anything_not_followed_every_byte_passes() {
    let upgrade = b"HTTP/1.1 101 Switching Protocols\r\nx-content-type-options: nosniff\r\nupgrade: websocket\r\n\r\n";
    let stream = concat(&[upgrade, b"\x81\x05hello", PARSER_400]);
    check(&[false], &stream, &stream);
    let until_close = b"HTTP/1.0 200 OK\r\nx-content-type-options: nosniff\r\n\r\nbody";
    let stream = concat(&[until_close, PARSER_400]);
    check(&[false], &stream, &stream);
    let not_http = b"SSH-2.0-OpenSSH\r\n\r\n";
    check(&[], not_http, not_http);
}

#[test]
fn a_head_left_incomplete_is_released_unchanged() {
    let app = AppResponses::default();
    let mut heads = ResponseHeads::new(Rc::from(ADDED), app);
    let part = b"HTTP/1.1 400 Bad Request\r\ncontent-";
    assert_eq!(
        heads.next(part),
        Outgoing::Replace {
            taken: part.len(),
            bytes: Vec::new()
        }
    );
    assert_eq!(heads.release(), part);
    assert_eq!(heads.next(PARSER_400), Outgoing::Pass(PARSER_400.len()));
}
