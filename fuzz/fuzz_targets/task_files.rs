//! Task files: WebVoyager JSONL and WebArena / VisualWebArena JSON, as `run --tasks` reads them.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = agent::tasks::parse(text, "tasks.jsonl");
    let _ = agent::tasks::parse(text, "tasks.json");
});
