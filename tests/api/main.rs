//! Integration tests: the real app, in-process on a random port with a fresh database
//! (a SQLite file, or with `TANDEM_TEST_BACKEND=postgres` a scratch PostgreSQL database), driven over real HTTP and WebSockets. `TEST_LOG=1` shows the server's logs.

mod helpers;

mod access;
mod agui;
mod anthropic;
mod approval;
mod attached;
mod attachments;
mod branches;
mod budget;
mod clean_stop;
mod continuing;
mod expiry;
mod fallback;
mod faults;
mod feedback;
mod frames;
mod instances;
mod instructions;
mod interrupts;
mod limits;
mod logs;
mod manage;
mod mcp;
mod metrics;
mod names;
mod openai;
mod queue;
mod replay;
mod rest;
mod restart;
mod retention;
mod run_python;
mod sandbox;
mod secrets;
mod session_list;
mod sharing;
mod startup;
mod state;
mod stop;
mod storage;
mod streaming;
mod usage;
mod user_tools;
mod webhooks;
