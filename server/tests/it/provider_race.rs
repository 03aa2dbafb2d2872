//! Claims racing on SQLite and PostgreSQL: many providers claiming one directive at once
//! get exactly one lease; one provider claiming many directives at once holds exactly one.

use crate::common;
use crate::provider_fixtures;

use common::TestDb;
use futures_util::future::join_all;
use provider_fixtures::Bench;

async fn one_directive_one_lease(t: &TestDb) {
    let b = Bench::start(t).await;
    let id = b.protocol(1, false).await;
    let mut providers = Vec::new();
    for _ in 0..12 {
        providers.push(b.provider().await);
    }
    for round in 0..3 {
        let answers = join_all(providers.iter().map(|p| b.claim(p, &id))).await;
        let won: Vec<_> = answers.iter().filter(|r| r.status == 200).collect();
        assert_eq!(
            won.len(),
            1,
            "round {round}: {:?}",
            answers.iter().map(|r| &r.text).collect::<Vec<_>>()
        );
        for r in answers.iter().filter(|r| r.status != 200) {
            assert_eq!(r.json["reason"], "foreign_directive", "{}", r.text);
        }
        // The winner lets go; the next round races again.
        let winner = providers
            .iter()
            .zip(&answers)
            .find(|(_, r)| r.status == 200)
            .map(|(p, _)| p)
            .unwrap();
        assert_eq!(b.release(winner, &id).await.status, 200);
    }
    let leases = t.count("benchmark_claims").await;
    assert_eq!(leases, 3, "one claim row per won lease");
}
on_both!(one_directive_one_lease);

async fn one_provider_one_lease(t: &TestDb) {
    let b = Bench::start(t).await;
    let p = b.provider().await;
    let mut ids = Vec::new();
    for _ in 0..8 {
        ids.push(b.protocol(1, false).await);
    }
    let answers = join_all(ids.iter().map(|id| b.claim(&p, id))).await;
    assert_eq!(answers.iter().filter(|r| r.status == 200).count(), 1);
    assert!(answers
        .iter()
        .filter(|r| r.status != 200)
        .all(|r| r.json["reason"] == "lease_held"));
}
on_both!(one_provider_one_lease);
