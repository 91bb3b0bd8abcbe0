//! Rasterising a picture with resvg (pure Rust). Built without resvg's
//! text support: this crate loads no fonts (it does no IO), so the text
//! of a picture (coordinates, names, numbers) shows in browsers but not
//! in a PNG; everything a PNG must say is said by shapes and colours.

use resvg::{tiny_skia, usvg};

/// Why a picture could not be rasterised.
#[derive(Debug, thiserror::Error)]
pub enum PictureError {
    #[error("the SVG cannot be read: {0}")]
    Svg(#[from] usvg::Error),
    #[error("the picture is too large or empty to rasterise ({width} x {height} pixels)")]
    Size { width: f32, height: f32 },
    #[error("the PNG cannot be encoded: {0}")]
    Png(String),
}

/// The largest raster made: pixels a side, and pixels in all (40
/// megapixels, 160 MiB of RGBA; a finished game's board has about 2).
const MAX_SIDE: f32 = 16_384.0;
const MAX_PIXELS: f32 = 40.0 * 1024.0 * 1024.0;

/// A rasterised picture: RGBA, premultiplied by alpha, row by row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Raster {
    pub width: u32,
    pub height: u32,
    pub rgba: Vec<u8>,
}

impl Raster {
    /// The colour at a pixel, as RGBA; `None` outside.
    pub fn pixel(&self, x: u32, y: u32) -> Option<[u8; 4]> {
        if x >= self.width || y >= self.height {
            return None;
        }
        let i = 4 * (y as usize * self.width as usize + x as usize);
        self.rgba.get(i..i + 4).and_then(|p| p.try_into().ok())
    }
}

fn render(svg: &str, scale: f32) -> Result<tiny_skia::Pixmap, PictureError> {
    let tree = usvg::Tree::from_str(svg, &usvg::Options::default())?;
    let size = tree.size();
    let (width, height) = (size.width() * scale, size.height() * scale);
    let too_large = !(width >= 1.0
        && height >= 1.0
        && width <= MAX_SIDE
        && height <= MAX_SIDE
        && width.ceil() * height.ceil() <= MAX_PIXELS);
    let pixmap = (!too_large)
        .then(|| tiny_skia::Pixmap::new(width.ceil() as u32, height.ceil() as u32))
        .flatten();
    let Some(mut pixmap) = pixmap else {
        return Err(PictureError::Size { width, height });
    };
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    Ok(pixmap)
}

/// Rasterises an SVG at `scale` times its own size (`width`, `height`).
pub fn rasterise(svg: &str, scale: f32) -> Result<Raster, PictureError> {
    let pixmap = render(svg, scale)?;
    Ok(Raster {
        width: pixmap.width(),
        height: pixmap.height(),
        rgba: pixmap.take(),
    })
}

/// An SVG as a PNG of its own size.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, PictureError> {
    let pixmap = render(svg, 1.0)?;
    encode(pixmap.width(), pixmap.height(), pixmap.data()).map_err(|e| PictureError::Png(e.to_string()))
}

/// PNG of premultiplied RGBA pixels: RGB when every pixel is opaque (a
/// board always is), else RGBA with the alpha divided out. Fast
/// compression: about as small, several times quicker than the default.
fn encode(width: u32, height: u32, premultiplied: &[u8]) -> Result<Vec<u8>, png::EncodingError> {
    let opaque = premultiplied.chunks_exact(4).all(|p| p[3] == 255);
    let (colour, data): (png::ColorType, Vec<u8>) = if opaque {
        let rgb = premultiplied
            .chunks_exact(4)
            .flat_map(|p| [p[0], p[1], p[2]])
            .collect();
        (png::ColorType::Rgb, rgb)
    } else {
        let rgba = premultiplied
            .chunks_exact(4)
            .flat_map(|p| {
                let a = u16::from(p[3]);
                let un = |c: u8| {
                    (u16::from(c) * 255 + a / 2)
                        .checked_div(a)
                        .map_or(0, |v| v.min(255) as u8)
                };
                [un(p[0]), un(p[1]), un(p[2]), p[3]]
            })
            .collect();
        (png::ColorType::Rgba, rgba)
    };
    let mut out = Vec::with_capacity(data.len() / 8);
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(colour);
    encoder.set_depth(png::BitDepth::Eight);
    encoder.set_compression(png::Compression::Fast);
    let mut writer = encoder.write_header()?;
    writer.write_image_data(&data)?;
    writer.finish()?;
    Ok(out)
}
