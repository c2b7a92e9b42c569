//! Integration tests: the real app, in-process on a random port with a fresh SQLite
//! file, driven over real HTTP and WebSockets. `TEST_LOG=1` shows the server's logs.

mod helpers;

mod approval;
mod frames;
mod interrupts;
mod replay;
mod rest;
mod restart;
mod streaming;
