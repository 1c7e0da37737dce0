//! Reads WebArena action strings, one per line, from stdin and prints, per line, the action our
//! parser reads (its canonical form) or `ERROR: ...`. Used to compare the parser with WebArena's own
//! `create_id_based_action` on the same strings (see docs/BENCHMARKS.md).

use std::io::BufRead as _;

fn main() {
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        match webfreeze_agent::action::webarena::parse_reply(&format!("```{line}```")) {
            Ok(p) => println!("{}", p.action),
            Err(e) => println!("ERROR: {e}"),
        }
    }
}
