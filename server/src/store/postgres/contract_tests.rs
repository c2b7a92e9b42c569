//! The store's contract story ([`crate::store::contract`]) on a fresh PostgreSQL database each.

crate::store::contract_tests::contract_tests!(super::test_support::temp_store);
