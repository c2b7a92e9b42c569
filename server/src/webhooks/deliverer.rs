//! The deliverer's loop: every [`TICK`], add what is owed, stop what nobody needs any
//! more, claim what is due (no more than there are free places) and attempt each claimed
//! delivery in a task of its own. The tasks live in a `JoinSet` the loop owns: shutdown
//! ends them with it (their claims lapse, and the next start attempts them again).

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::{deliver, WebhookConfig, CONCURRENT, TICK};
use crate::domain::now_ms;
use crate::domain::origin;
use crate::lifecycle::Lifecycle;
use crate::store::{DeliveryRow, Store, StoreError};

/// How far back a waiting session (or an ended run) is still announced when the
/// deliverer starts.
const LOOK_BACK: Duration = Duration::from_secs(24 * 3600);
/// How long past an attempt's own time limit its claim lasts, for the outcome to be
/// recorded; another instance may attempt the delivery once the claim lapses.
const CLAIM_MARGIN: Duration = Duration::from_secs(5);
/// How long settled deliveries stay visible in the API before they are deleted.
const KEEP_SETTLED: Duration = Duration::from_secs(7 * 24 * 3600);
/// How often settled deliveries past [`KEEP_SETTLED`] are deleted.
const PRUNE_EVERY: Duration = Duration::from_secs(60);

/// What every attempt task needs.
struct Shared<S> {
    store: Arc<S>,
    client: reqwest::Client,
    config: WebhookConfig,
}

/// Starts the deliverer; it runs until the process's runs have stopped (deliveries not
/// made by then are rows, made after the next start).
pub fn spawn<S: Store>(store: Arc<S>, config: WebhookConfig, lifecycle: &Lifecycle) {
    let client = reqwest::Client::builder()
        .timeout(config.timeout)
        .build()
        .expect("an HTTP client with a timeout builds");
    let shared = Arc::new(Shared {
        store,
        client,
        config,
    });
    lifecycle.spawn_until_ending(run(shared, lifecycle.ending().clone()));
}

async fn run<S: Store>(shared: Arc<Shared<S>>, shutdown: CancellationToken) {
    let since = now_ms() - LOOK_BACK.as_millis() as i64;
    let urls: Vec<String> = shared
        .config
        .targets
        .iter()
        .map(|t| t.url.clone())
        .collect();
    match shared.store.settle_webhooks(Some(&urls), now_ms()).await {
        Ok(0) => {}
        Ok(settled) => tracing::info!(settled, "stopped webhook deliveries nobody needs"),
        Err(error) => tracing::warn!(%error, "could not settle old webhook deliveries"),
    }
    let places = Arc::new(Semaphore::new(CONCURRENT));
    let mut attempts = JoinSet::new();
    let mut pruned = Instant::now();
    let mut tick = crate::lifecycle::steady_interval(TICK);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return attempts.shutdown().await,
            _ = tick.tick() => {}
        }
        while attempts.try_join_next().is_some() {}
        if pruned.elapsed() >= PRUNE_EVERY {
            pruned = Instant::now();
            prune(&*shared.store).await;
        }
        let round = round(&shared, &places, &mut attempts, since).await;
        if let Err(error) = round {
            tracing::warn!(%error, "webhook deliveries failed this round; retrying");
        }
    }
}

/// Adds what is owed, stops what is not, and starts an attempt of each due delivery
/// there is a free place for.
async fn round<S: Store>(
    shared: &Arc<Shared<S>>,
    places: &Arc<Semaphore>,
    attempts: &mut JoinSet<()>,
    since: i64,
) -> Result<(), StoreError> {
    let (store, config) = (&shared.store, &shared.config);
    store
        .enqueue_webhooks(&config.targets, config.events, since, now_ms())
        .await?;
    store.settle_webhooks(None, now_ms()).await?;
    let free = places.available_permits();
    if free == 0 {
        return Ok(());
    }
    let now = now_ms();
    let hold_until = now + (config.timeout + CLAIM_MARGIN).as_millis() as i64;
    for row in store.claim_webhooks(now, free as u32, hold_until).await? {
        let place = places
            .clone()
            .try_acquire_owned()
            .expect("no more claimed than free places, and only this loop takes them");
        let span = tracing::error_span!("webhook", session = %row.session, delivery = row.id);
        let shared = shared.clone();
        attempts.spawn(
            async move {
                let _place = place;
                if let Err(error) = attempt(&shared, &row).await {
                    tracing::warn!(%error, "could not record a webhook attempt; it is made again");
                }
            }
            .instrument(span),
        );
    }
    Ok(())
}

/// Attempts one claimed delivery and records what came of it.
async fn attempt<S: Store>(shared: &Shared<S>, row: &DeliveryRow) -> Result<(), StoreError> {
    let title = shared.store.session(row.session).await?.map(|s| s.title);
    let outcome = deliver::attempt(&shared.client, &shared.config, row, title.as_deref()).await;
    shared
        .store
        .record_webhook(&row.id, &outcome, now_ms())
        .await?;
    let url = origin(&row.url);
    match &outcome {
        crate::store::Attempt::Delivered { status } => {
            tracing::info!(%url, attempt = row.attempts, status, "webhook delivered");
        }
        crate::store::Attempt::Failed {
            error, retry_at, ..
        } => {
            let gave_up = retry_at.is_none();
            tracing::warn!(%url, attempt = row.attempts, %error, gave_up, "webhook not delivered");
        }
    }
    Ok(())
}

/// Deletes settled deliveries past their time in the API.
async fn prune<S: Store>(store: &S) {
    let before = now_ms() - KEEP_SETTLED.as_millis() as i64;
    match store.prune_webhooks(before).await {
        Ok(0) => {}
        Ok(deleted) => tracing::info!(deleted, "deleted old webhook deliveries"),
        Err(error) => tracing::warn!(%error, "could not delete old webhook deliveries"),
    }
}
