//! HAR import into a (scratch, in-memory) store: an error or a sealed snapshot, never a panic; a
//! failed import leaves no snapshot behind.
#![no_main]
use libfuzzer_sys::fuzz_target;
use archive::har::import;
use archive::ImportOptions;
use snapshots::Store;

fuzz_target!(|data: &[u8]| {
    let store = Store::in_memory();
    let opts = ImportOptions { snapshot: "fuzz".into(), source_file: "fuzz.har".into(), now_ms: 0 };
    if import(&store, data, &opts, |_| {}).is_err() {
        assert!(store.manifests().map(|l| l.is_empty()).unwrap_or(true), "a failed import left a snapshot");
    }
});
