//! The populated fixture opens and the log behind it is what the routes will serve.

mod support;

#[test]
fn fixture_opens() {
    let p = support::populated("fixture");
    let cp = p.state.log.checkpoint().unwrap();
    // 5 remotes a day (the keyed one logged as skipped), two days.
    assert_eq!(cp.checkpoint.size, 10);
    let index = p.state.index.get();
    let changes = index.changes(0, 10, None, None).unwrap();
    assert_eq!(changes.len(), 1, "the files server changed");
    assert_eq!(changes[0].class, "dangerous");
}
