//! The store's contract story ([`crate::store::contract`]) on a fresh PostgreSQL database each.

use super::test_support::temp_store;
use crate::store::contract;

#[tokio::test]
async fn users_tokens_and_sign_ins() {
    let (_database, store) = temp_store().await;
    contract::users_tokens_and_sign_ins(&store).await;
}

#[tokio::test]
async fn sessions_belong_to_their_owner() {
    let (_database, store) = temp_store().await;
    contract::sessions_belong_to_their_owner(&store).await;
}

#[tokio::test]
async fn seqs_have_no_gaps_and_guards_hold() {
    let (_database, store) = temp_store().await;
    contract::seqs_have_no_gaps_and_guards_hold(&store).await;
}

#[tokio::test]
async fn search_and_rename() {
    let (_database, store) = temp_store().await;
    contract::search_and_rename(&store).await;
}

#[tokio::test]
async fn share_links_open_their_session_until_deleted() {
    let (_database, store) = temp_store().await;
    contract::share_links_open_their_session_until_deleted(&store).await;
}

#[tokio::test]
async fn frames_built_by_the_database_are_the_frames_built_in_rust() {
    let (_database, store) = temp_store().await;
    contract::frames_built_by_the_database_are_the_frames_built_in_rust(&store).await;
}

#[tokio::test]
async fn one_batch_of_appends_keeps_each_sessions_order() {
    let (_database, store) = temp_store().await;
    contract::one_batch_of_appends_keeps_each_sessions_order(&store).await;
}

#[tokio::test]
async fn branches_share_a_prefix_and_append_their_own() {
    let (_database, store) = temp_store().await;
    contract::branches_share_a_prefix_and_append_their_own(&store).await;
}

#[tokio::test]
async fn queued_messages_run_once_in_order() {
    let (_database, store) = temp_store().await;
    contract::queued_messages_run_once_in_order(&store).await;
}

#[tokio::test]
async fn a_users_turn_to_call_the_model_has_one_holder() {
    let (_database, store) = temp_store().await;
    contract::a_users_turn_to_call_the_model_has_one_holder(&store).await;
}

#[tokio::test]
async fn attachments_are_stored_once_and_freed() {
    let (_database, store) = temp_store().await;
    contract::attachments_are_stored_once_and_freed(&store).await;
}

#[tokio::test]
async fn the_webhook_outbox_owes_claims_and_settles() {
    let (_database, store) = temp_store().await;
    crate::store::webhook_contract::the_outbox_owes_claims_and_settles(&store).await;
}

#[tokio::test]
async fn a_repair_goes_in_only_at_the_head_it_read() {
    let (_database, store) = temp_store().await;
    contract::a_repair_goes_in_only_at_the_head_it_read(&store).await;
}

#[tokio::test]
async fn state_changes_apply_to_the_state_they_were_made_from() {
    let (_database, store) = temp_store().await;
    contract::state_changes_apply_to_the_state_they_were_made_from(&store).await;
}
