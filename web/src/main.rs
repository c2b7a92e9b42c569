//! The page's entry point: mounts [`tandem_web::App`] on `<body>` and does nothing else.

fn main() {
    leptos::mount::mount_to_body(tandem_web::App);
}
