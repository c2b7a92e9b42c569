//! Renewing this instance's run leases, in SQL both backends run (taking lapsed ones
//! over differs: see each backend's `leases.rs`).

/// Defines `renew` for one backend and implements [`crate::store::RunLeases`] for its
/// store (`$pool`: its pool type; `$store`: its store, whose `pool` and `lease` fields it
/// uses; it calls the backend's `take_over` and `release`, which differ);
/// see [`super`] for why a macro.
macro_rules! leases_on {
    ($pool:ty, $store:ty) => {
        impl crate::store::RunLeases for $store {
            fn instance(&self) -> &str {
                &self.lease.owner
            }

            async fn renew_leases(
                &self,
                now_ms: i64,
            ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
                renew(&self.pool, &self.lease, now_ms).await
            }

            async fn take_over_runs(
                &self,
                now_ms: i64,
                starting: bool,
            ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
                take_over(&self.pool, &self.lease, now_ms, starting).await
            }

            async fn release_leases(&self) -> Result<u64, crate::store::StoreError> {
                release(&self.pool, &self.lease).await
            }
        }

        /// Renews the leases this instance holds on running sessions; returns those.
        pub(super) async fn renew(
            pool: &$pool,
            lease: &crate::store::leases::LeaseTerms,
            now_ms: i64,
        ) -> Result<Vec<crate::domain::SessionId>, crate::store::StoreError> {
            let ids: Vec<(String,)> = sqlx::query_as(
                "UPDATE run_leases SET expires_at = $1 WHERE owner = $2 \
                 AND session_id IN (SELECT id FROM sessions WHERE status = 'running') \
                 RETURNING session_id",
            )
            .bind(lease.expires_at(now_ms))
            .bind(&lease.owner)
            .fetch_all(pool)
            .await?;
            ids.into_iter()
                .map(crate::store::rows::session_id_of)
                .collect()
        }
    };
}

pub(crate) use leases_on;

/// Hands back this instance's leases on running sessions (`$1`: its name): a lease that
/// expired at 0 has lapsed for everyone.
pub(crate) const RELEASE: &str =
    "UPDATE run_leases SET expires_at = 0 WHERE owner = $1 AND expires_at > 0 \
     AND session_id IN (SELECT id FROM sessions WHERE status = 'running')";
