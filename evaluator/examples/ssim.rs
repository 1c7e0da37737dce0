//! Prints the SSIM of image pairs as `eval_fuzzy_image_match` computes it: reads `A B` path pairs, one
//! per line, from stdin. Used to compare with VisualWebArena's `get_image_ssim` (Pillow + scikit-image)
//! on the same files (see docs/BENCHMARKS.md).

use std::io::BufRead as _;

fn main() {
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let Some((a, b)) = line.split_once(' ') else { continue };
        let r =
            std::fs::read(a).and_then(|x| Ok((x, std::fs::read(b)?))).map_err(|e| e.to_string()).and_then(
                |(x, y)| webfreeze_evaluator::image_match::ssim_bytes(&x, &y).map_err(|e| e.to_string()),
            );
        match r {
            Ok(s) => println!("{s:.6}"),
            Err(e) => println!("ERROR: {e}"),
        }
    }
}
