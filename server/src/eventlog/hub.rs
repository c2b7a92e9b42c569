//! Live fan-out of committed events to the sockets watching a session.
//!
//! One bounded broadcast channel per watched session, created on first subscribe and
//! dropped with the last subscriber, so unwatched and paused sessions cost nothing. A
//! socket that falls more than [`LIVE_BUFFER`] events behind sees `Lagged` and catches
//! up from the log; publishing never waits for a socket.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytestring::ByteString;
use tokio::sync::broadcast;

use crate::domain::SessionId;

/// Events kept per session for sockets that are momentarily behind. The buffer is
/// allocated in full when a session gets its first viewer (about 64 bytes per event), so
/// it is most of what an idle socket costs; a socket further behind reads the log.
pub const LIVE_BUFFER: usize = 512;

/// A committed event as sockets send it.
#[derive(Debug, Clone)]
pub struct Published {
    pub seq: u64,
    pub frame: ByteString,
}

/// The registry of live channels.
///
/// A `std::sync::Mutex` is right here: it guards a map lookup, is never held across an
/// `.await`, and is contended only by subscribe/unsubscribe and the single writer.
#[derive(Clone, Default)]
pub struct Hub {
    channels: Arc<Mutex<HashMap<SessionId, broadcast::Sender<Published>>>>,
}

impl Hub {
    /// Starts receiving every event of `session` committed from now on.
    pub fn subscribe(&self, session: SessionId) -> Subscription {
        let mut channels = self.channels.lock().expect("hub lock poisoned");
        let sender = channels
            .entry(session)
            .or_insert_with(|| broadcast::channel(LIVE_BUFFER).0);
        Subscription {
            receiver: Some(sender.subscribe()),
            session,
            hub: self.clone(),
        }
    }

    /// Hands committed events to the session's subscribers, if it has any.
    pub fn publish(&self, session: SessionId, events: impl IntoIterator<Item = Published>) {
        let channels = self.channels.lock().expect("hub lock poisoned");
        if let Some(sender) = channels.get(&session) {
            for event in events {
                // An error only means nobody is subscribed right now.
                let _ = sender.send(event);
            }
        }
    }

    /// Ends every subscription of `session` (it was deleted): their sockets close.
    pub fn close(&self, session: SessionId) {
        self.channels
            .lock()
            .expect("hub lock poisoned")
            .remove(&session);
    }

    /// Number of sessions with at least one live subscriber.
    pub fn watched_sessions(&self) -> usize {
        self.channels.lock().expect("hub lock poisoned").len()
    }

    fn release(&self, session: SessionId) {
        let mut channels = self.channels.lock().expect("hub lock poisoned");
        if channels
            .get(&session)
            .is_some_and(|sender| sender.receiver_count() == 0)
        {
            channels.remove(&session);
        }
    }
}

/// A socket's live feed of one session; unsubscribes on drop.
pub struct Subscription {
    receiver: Option<broadcast::Receiver<Published>>,
    session: SessionId,
    hub: Hub,
}

impl Subscription {
    /// The next live event, `Lagged(n)` if the socket fell behind, or `Closed` once the
    /// session is deleted.
    pub async fn recv(&mut self) -> Result<Published, broadcast::error::RecvError> {
        self.receiver
            .as_mut()
            .expect("receiver lives until drop")
            .recv()
            .await
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.receiver.take();
        self.hub.release(self.session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn subscribers_receive_and_last_one_out_frees_the_channel() {
        let hub = Hub::default();
        let session = SessionId::generate();
        let mut first = hub.subscribe(session);
        let second = hub.subscribe(session);
        hub.publish(
            session,
            [Published {
                seq: 1,
                frame: "x".into(),
            }],
        );
        assert_eq!(first.recv().await.unwrap().seq, 1);
        drop(second);
        assert_eq!(hub.watched_sessions(), 1);
        drop(first);
        assert_eq!(hub.watched_sessions(), 0);
    }

    #[tokio::test]
    async fn closing_a_session_ends_its_subscriptions() {
        let hub = Hub::default();
        let session = SessionId::generate();
        let mut subscription = hub.subscribe(session);
        hub.close(session);
        assert!(matches!(
            subscription.recv().await,
            Err(broadcast::error::RecvError::Closed)
        ));
    }
}
