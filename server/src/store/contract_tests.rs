//! The store's contract as tests: every story of [`super::contract`] (and of
//! [`super::webhook_contract`]) as a test of its own, for each backend to expand on its own
//! fresh stores (`sqlite/contract_tests.rs`, `postgres/contract_tests.rs`).

/// Each story of the store's contract (and the webhook outbox's) as a test of its own in
/// the module that expands it, each on a fresh store from `$temp_store` (an async function
/// giving what keeps the store alive, and the store).
macro_rules! contract_tests {
    ($temp_store:path) => {
        crate::store::contract_tests::contract_tests!(@each $temp_store;
            users_tokens_and_sign_ins,
            sessions_belong_to_their_owner,
            seqs_have_no_gaps_and_guards_hold,
            search_and_rename,
            share_links_open_their_session_until_deleted,
            frames_built_by_the_database_are_the_frames_built_in_rust,
            one_batch_of_appends_keeps_each_sessions_order,
            branches_share_a_prefix_and_append_their_own,
            queued_messages_run_once_in_order,
            a_users_turn_to_call_the_model_has_one_holder,
            attachments_are_stored_once_and_freed,
            a_repair_goes_in_only_at_the_head_it_read,
            state_changes_apply_to_the_state_they_were_made_from,
        );

        #[tokio::test]
        async fn the_webhook_outbox_owes_claims_and_settles() {
            let (_kept, store) = $temp_store().await;
            crate::store::webhook_contract::the_outbox_owes_claims_and_settles(&store).await;
        }
    };
    (@each $temp_store:path; $($story:ident,)*) => {
        $(
            #[tokio::test]
            async fn $story() {
                let (_kept, store) = $temp_store().await;
                crate::store::contract::$story(&store).await;
            }
        )*
    };
}

pub(crate) use contract_tests;
