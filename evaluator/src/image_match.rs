//! VisualWebArena's `eval_fuzzy_image_match`: the structural similarity (SSIM) of two images, computed
//! as their harness does (`image_utils.get_image_ssim`): both resized with Lanczos to the larger width
//! and the larger height, converted to 8-bit grayscale (Pillow's weights), then scikit-image's
//! `structural_similarity`
//! with its defaults (a 7x7 uniform window, K1 = 0.01, K2 = 0.03, sample covariance, data range 255),
//! averaged over the pixels whose window lies inside the image.
//!
//! Decoding and resizing use the `image` crate; the SSIM itself is the few lines of its definition
//! over summed-area tables (no crate implements scikit-image's exact variant).

use image::imageops::FilterType;

/// Window side.
const WIN: usize = 7;
const K1: f64 = 0.01;
const K2: f64 = 0.03;
const RANGE: f64 = 255.0;

/// Why two images cannot be compared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImageMatchError {
    /// Not an image the decoder reads.
    #[error("cannot decode the image: {0}")]
    Decode(String),
    /// Smaller than the 7x7 window.
    #[error("the images are {0}x{1}, smaller than SSIM's 7x7 window")]
    TooSmall(u32, u32),
}

/// SSIM of two encoded images (PNG, JPEG, GIF, WebP), VWA's way.
pub fn ssim_bytes(a: &[u8], b: &[u8]) -> Result<f64, ImageMatchError> {
    let a = image::load_from_memory(a).map_err(|e| ImageMatchError::Decode(e.to_string()))?;
    let b = image::load_from_memory(b).map_err(|e| ImageMatchError::Decode(e.to_string()))?;
    let (w, h) = (a.width().max(b.width()), a.height().max(b.height()));
    if (w as usize) < WIN || (h as usize) < WIN {
        return Err(ImageMatchError::TooSmall(w, h));
    }
    let fa = luma(&a.resize_exact(w, h, FilterType::Lanczos3));
    let fb = luma(&b.resize_exact(w, h, FilterType::Lanczos3));
    Ok(ssim_gray(&fa, &fb, w as usize, h as usize))
}

/// 8-bit grayscale as Pillow's `convert("L")` computes it (ITU-R 601-2 weights in 16-bit fixed point,
/// rounded), not the `image` crate's Rec. 709 weights: the SSIM depends on it.
fn luma(img: &image::DynamicImage) -> Vec<f64> {
    img.to_rgb8()
        .pixels()
        .map(|p| {
            let [r, g, b] = p.0.map(u32::from);
            f64::from(((r * 19595 + g * 38470 + b * 7471 + 0x8000) >> 16) as u8)
        })
        .collect()
}

/// Summed-area table of `f(x)` with a zero first row and column.
fn integral(v: &[f64], w: usize, h: usize) -> Vec<f64> {
    let mut t = vec![0.0; (w + 1) * (h + 1)];
    for y in 0..h {
        let mut row = 0.0;
        for x in 0..w {
            row += v[y * w + x];
            t[(y + 1) * (w + 1) + x + 1] = t[y * (w + 1) + x + 1] + row;
        }
    }
    t
}

/// SSIM of two grayscale images of `w` x `h` (row-major), scikit-image's default variant.
pub fn ssim_gray(a: &[f64], b: &[f64], w: usize, h: usize) -> f64 {
    let prod =
        |f: &dyn Fn(f64, f64) -> f64| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| f(*x, *y)).collect() };
    let (sa, sb) = (integral(a, w, h), integral(b, w, h));
    let saa = integral(&prod(&|x, _| x * x), w, h);
    let sbb = integral(&prod(&|_, y| y * y), w, h);
    let sab = integral(&prod(&|x, y| x * y), w, h);
    let n = (WIN * WIN) as f64;
    let cov_norm = n / (n - 1.0);
    let (c1, c2) = ((K1 * RANGE).powi(2), (K2 * RANGE).powi(2));
    let window = |t: &[f64], x: usize, y: usize| {
        let (x1, y1) = (x + WIN, y + WIN);
        (t[y1 * (w + 1) + x1] - t[y * (w + 1) + x1] - t[y1 * (w + 1) + x] + t[y * (w + 1) + x]) / n
    };
    let mut total = 0.0;
    let mut count = 0usize;
    // Pixels at least 3 from every edge: their window is whole (scikit-image crops the rest).
    for y in 0..=(h - WIN) {
        for x in 0..=(w - WIN) {
            let (ux, uy) = (window(&sa, x, y), window(&sb, x, y));
            let vx = cov_norm * (window(&saa, x, y) - ux * ux);
            let vy = cov_norm * (window(&sbb, x, y) - uy * uy);
            let vxy = cov_norm * (window(&sab, x, y) - ux * uy);
            let s = ((2.0 * ux * uy + c1) * (2.0 * vxy + c2)) / ((ux * ux + uy * uy + c1) * (vx + vy + c2));
            total += s;
            count += 1;
        }
    }
    total / count as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(w: u32, h: u32, f: impl Fn(u32, u32) -> u8) -> Vec<u8> {
        let img = image::GrayImage::from_fn(w, h, |x, y| image::Luma([f(x, y)]));
        let mut out = std::io::Cursor::new(Vec::new());
        img.write_to(&mut out, image::ImageFormat::Png).unwrap();
        out.into_inner()
    }

    #[test]
    fn identical_similar_and_different() {
        let base = png(64, 48, |x, y| ((x * 7 + y * 3) % 256) as u8);
        assert!((ssim_bytes(&base, &base).unwrap() - 1.0).abs() < 1e-9);
        // A little noise: still above VWA's 0.8.
        let noisy = png(64, 48, |x, y| (((x * 7 + y * 3) % 256) as u8).saturating_add(((x ^ y) % 3) as u8));
        let s = ssim_bytes(&base, &noisy).unwrap();
        assert!(s > 0.8 && s < 1.0, "{s}");
        // Another picture: far below.
        let other = png(64, 48, |x, y| if (x / 8 + y / 8) % 2 == 0 { 0 } else { 255 });
        let s = ssim_bytes(&base, &other).unwrap();
        assert!(s < 0.5, "{s}");
        // A different size is resized first (VWA's rule): a 2x copy of a smooth image stays close.
        let smooth = png(32, 32, |x, y| (x * 4 + y * 2) as u8);
        let big = png(64, 64, |x, y| (x * 2 + y) as u8);
        assert!(ssim_bytes(&smooth, &big).unwrap() > 0.8);
    }

    #[test]
    fn matches_scikit_image_on_a_hand_computed_case() {
        // Two constant 7x7 images: one window, means 100 and 110, no variance:
        // SSIM = (2*100*110 + c1) / (100^2 + 110^2 + c1).
        let a = vec![100.0; 49];
        let b = vec![110.0; 49];
        let c1 = (0.01f64 * 255.0).powi(2);
        let want = (2.0 * 100.0 * 110.0 + c1) / (100.0f64.powi(2) + 110.0f64.powi(2) + c1);
        assert!((ssim_gray(&a, &b, 7, 7) - want).abs() < 1e-12);
    }

    #[test]
    fn bad_images_are_errors() {
        assert!(matches!(ssim_bytes(b"not an image", b"x"), Err(ImageMatchError::Decode(_))));
        let tiny = png(4, 4, |_, _| 0);
        assert_eq!(ssim_bytes(&tiny, &tiny), Err(ImageMatchError::TooSmall(4, 4)));
    }
}
