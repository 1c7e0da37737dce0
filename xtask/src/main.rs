//! Developer tasks: `cargo xtask bench store|proxy|replay`, `cargo xtask gen-har`.
fn main() {}
