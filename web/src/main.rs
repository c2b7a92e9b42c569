//! The page's entry point: says a panic's message in the console, and mounts
//! [`tandem_web::App`] on `<body>`.

fn main() {
    // A panic aborts the page (`panic = "abort"`): its message goes to the console first,
    // so a report says what broke and where, not only "unreachable".
    std::panic::set_hook(Box::new(|info| leptos::logging::error!("{info}")));
    leptos::mount::mount_to_body(tandem_web::App);
}
