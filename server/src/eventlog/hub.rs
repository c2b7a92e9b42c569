//! Live fan-out of committed events to the sockets watching a session.
//!
//! One bounded broadcast channel per watched session, created on first subscribe and
//! dropped with the last subscriber, so unwatched and paused sessions cost nothing. A
//! socket that falls more than [`LIVE_BUFFER`] events behind sees `Lagged` and catches
//! up from the log; publishing never waits for a socket.
//!
//! Events reach the hub from this instance's writer and, when several instances share
//! the database, from the relay ([`crate::relay`]); each channel remembers the last seq
//! it carried and drops anything at or below it, so the two never duplicate.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytestring::ByteString;
use tokio::sync::{broadcast, watch};

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
    channels: Arc<Mutex<HashMap<SessionId, Channel>>>,
}

/// One watched session's live channel.
struct Channel {
    sender: broadcast::Sender<Published>,
    /// The last seq published (0 before the first).
    last_seq: u64,
    /// Word that the session's queued messages changed (read them again).
    queue: watch::Sender<()>,
}

impl Hub {
    /// Starts receiving every event of `session` committed from now on.
    pub fn subscribe(&self, session: SessionId) -> Subscription {
        let mut channels = self.channels.lock().expect("hub lock poisoned");
        let channel = channels.entry(session).or_insert_with(|| Channel {
            sender: broadcast::channel(LIVE_BUFFER).0,
            last_seq: 0,
            queue: watch::Sender::new(()),
        });
        Subscription {
            receiver: Some(channel.sender.subscribe()),
            queue: channel.queue.subscribe(),
            session,
            hub: self.clone(),
        }
    }

    /// Tells the session's subscribers that its queued messages changed, if it has any.
    pub fn queue_changed(&self, session: SessionId) {
        let channels = self.channels.lock().expect("hub lock poisoned");
        if let Some(channel) = channels.get(&session) {
            channel.queue.send_replace(());
        }
    }

    /// Hands committed events (in seq order) to the session's subscribers, if it has
    /// any; events at or below the last seq already published are dropped.
    pub fn publish(&self, session: SessionId, events: impl IntoIterator<Item = Published>) {
        let mut channels = self.channels.lock().expect("hub lock poisoned");
        if let Some(channel) = channels.get_mut(&session) {
            for event in events {
                if event.seq <= channel.last_seq {
                    continue;
                }
                channel.last_seq = event.seq;
                // An error only means nobody is subscribed right now.
                let _ = channel.sender.send(event);
            }
        }
    }

    /// The last seq published to a watched session (0 before the first); `None` if
    /// nobody here watches it.
    pub fn last_published(&self, session: SessionId) -> Option<u64> {
        let channels = self.channels.lock().expect("hub lock poisoned");
        channels.get(&session).map(|channel| channel.last_seq)
    }

    /// Every watched session with its last published seq.
    pub fn watched(&self) -> Vec<(SessionId, u64)> {
        let channels = self.channels.lock().expect("hub lock poisoned");
        channels.iter().map(|(id, c)| (*id, c.last_seq)).collect()
    }

    /// Ends every subscription of `session` (it was deleted): their sockets close.
    pub fn close(&self, session: SessionId) {
        self.channels
            .lock()
            .expect("hub lock poisoned")
            .remove(&session);
    }

    /// Ends every subscription (the process is stopping): every socket and AG-UI stream
    /// sees its live feed end and closes.
    pub fn close_all(&self) {
        self.channels.lock().expect("hub lock poisoned").clear();
    }

    /// Number of sessions with at least one live subscriber.
    pub fn watched_sessions(&self) -> usize {
        self.channels.lock().expect("hub lock poisoned").len()
    }

    fn release(&self, session: SessionId) {
        let mut channels = self.channels.lock().expect("hub lock poisoned");
        if channels
            .get(&session)
            .is_some_and(|channel| channel.sender.receiver_count() == 0)
        {
            channels.remove(&session);
        }
    }
}

/// Word that a session's queued messages changed.
pub struct QueueWatch(watch::Receiver<()>);

impl QueueWatch {
    /// Resolves when the session's queued messages change (several changes at once are
    /// told once); never, once the session's channel is gone.
    pub async fn changed(&mut self) {
        if self.0.changed().await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// A socket's live feed of one session; unsubscribes on drop.
pub struct Subscription {
    receiver: Option<broadcast::Receiver<Published>>,
    queue: watch::Receiver<()>,
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

    /// Word of changes to the session's queued messages, from now on.
    pub fn queue_watch(&self) -> QueueWatch {
        QueueWatch(self.queue.clone())
    }

    /// The next live event if one is already waiting, like [`recv`](Self::recv) otherwise.
    pub fn try_recv(&mut self) -> Option<Result<Published, broadcast::error::RecvError>> {
        use broadcast::error::{RecvError, TryRecvError};
        let receiver = self.receiver.as_mut().expect("receiver lives until drop");
        match receiver.try_recv() {
            Ok(event) => Some(Ok(event)),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Lagged(missed)) => Some(Err(RecvError::Lagged(missed))),
            Err(TryRecvError::Closed) => Some(Err(RecvError::Closed)),
        }
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

    /// A published event with frame `x`.
    fn event(seq: u64) -> Published {
        Published {
            seq,
            frame: "x".into(),
        }
    }

    #[tokio::test]
    async fn subscribers_receive_and_last_one_out_frees_the_channel() {
        let hub = Hub::default();
        let session = SessionId::generate();
        let mut first = hub.subscribe(session);
        let second = hub.subscribe(session);
        hub.publish(session, [event(1)]);
        assert_eq!(first.recv().await.unwrap().seq, 1);
        drop(second);
        assert_eq!(hub.watched_sessions(), 1);
        drop(first);
        assert_eq!(hub.watched_sessions(), 0);
    }

    #[tokio::test]
    async fn try_recv_takes_what_is_waiting_and_reports_a_lag() {
        let hub = Hub::default();
        let session = SessionId::generate();
        let mut subscription = hub.subscribe(session);
        assert!(subscription.try_recv().is_none(), "nothing waits yet");
        hub.publish(session, [event(1), event(2)]);
        assert_eq!(subscription.try_recv().unwrap().unwrap().seq, 1);
        assert_eq!(subscription.try_recv().unwrap().unwrap().seq, 2);
        assert!(subscription.try_recv().is_none());
        hub.publish(session, (3..=3 + LIVE_BUFFER as u64).map(event));
        assert!(matches!(
            subscription.try_recv(),
            Some(Err(broadcast::error::RecvError::Lagged(1)))
        ));
    }

    #[tokio::test]
    async fn an_event_at_or_below_the_last_published_seq_is_dropped() {
        let hub = Hub::default();
        let session = SessionId::generate();
        let mut subscription = hub.subscribe(session);
        hub.publish(session, [event(1), event(2)]);
        hub.publish(session, [event(2), event(1), event(3)]);
        for seq in 1..=3 {
            assert_eq!(subscription.recv().await.unwrap().seq, seq);
        }
        assert_eq!(hub.last_published(session), Some(3));
        assert!(subscription.receiver.as_mut().unwrap().is_empty());
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
