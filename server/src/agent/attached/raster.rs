//! Images within a provider's limits: read with the `image` crate under limits that
//! refuse decompression bombs (a few KB that claim gigapixels), scaled down to the
//! longest edge and the bytes a provider takes. An image already within them is sent as
//! uploaded, byte for byte.

use std::io::Cursor;

use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat, ImageReader, Limits};

use super::content::Accepts;

/// The longest edge of an image Tandem reads at all.
pub const MAX_READ_EDGE: u32 = 16_384;
/// The most memory decoding one image may take.
pub const MAX_READ_ALLOC: u64 = 256 * 1024 * 1024;
/// Scale-downs tried before an image that stays too large is given up.
const ATTEMPTS: u32 = 5;

/// The raster types a model may be sent (what both providers read).
const RASTER: [(&str, &str); 4] = [
    ("image/png", "PNG"),
    ("image/jpeg", "JPEG"),
    ("image/gif", "GIF"),
    ("image/webp", "WebP"),
];

/// Whether `media_type` is a raster image a model may be sent.
pub fn is_raster(media_type: &str) -> bool {
    RASTER.iter().any(|(kind, _)| *kind == media_type)
}

/// The name people know the type by (`PNG`).
pub fn kind(media_type: &str) -> &str {
    RASTER
        .iter()
        .find(|(kind, _)| *kind == media_type)
        .map_or(media_type, |(_, name)| name)
}

/// An image as it will be sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub media_type: String,
    pub bytes: Vec<u8>,
    pub width: u32,
    pub height: u32,
    /// Its size as uploaded, when it was scaled down.
    pub scaled_from: Option<(u32, u32)>,
}

impl Fitted {
    /// Its size as uploaded.
    pub fn original(&self) -> (u32, u32) {
        self.scaled_from.unwrap_or((self.width, self.height))
    }
}

/// `bytes` (an image of `media_type`) within `accepts`' limits; why not, when it cannot be
/// read or will not fit.
pub fn fit(bytes: &[u8], media_type: &str, accepts: &Accepts) -> Result<Fitted, String> {
    let format = ImageFormat::from_mime_type(media_type)
        .ok_or_else(|| format!("{media_type} is not an image type Tandem reads"))?;
    // The header alone, read without limits (it allocates nothing), so a refusal can
    // say how large the image claims to be.
    let (width, height) = ImageReader::with_format(Cursor::new(bytes), format)
        .into_dimensions()
        .map_err(|e| format!("it could not be read ({e})"))?;
    if width.max(height) > MAX_READ_EDGE
        || u64::from(width) * u64::from(height) * 4 > MAX_READ_ALLOC
    {
        return Err(format!(
            "at {width}×{height} it is larger than the {MAX_READ_EDGE} pixels a side Tandem reads"
        ));
    }
    let edge = accepts.max_image_edge;
    if width.max(height) <= edge && bytes.len() <= accepts.max_image_bytes {
        return Ok(Fitted {
            media_type: media_type.to_string(),
            bytes: bytes.to_vec(),
            width,
            height,
            scaled_from: None,
        });
    }
    let image = reader(bytes, format)
        .decode()
        .map_err(|e| format!("it could not be read ({e})"))?;
    let mut edge = edge.min(width.max(height));
    for attempt in 0..ATTEMPTS {
        let scaled = image.resize(edge, edge, FilterType::Triangle);
        // The first try keeps a PNG lossless; later ones take JPEG, far smaller for photos.
        let jpeg = format == ImageFormat::Jpeg || attempt > 0;
        let (media_type, bytes) = encode(&scaled, jpeg)?;
        if bytes.len() <= accepts.max_image_bytes {
            return Ok(Fitted {
                media_type: media_type.into(),
                bytes,
                width: scaled.width(),
                height: scaled.height(),
                scaled_from: Some((width, height)),
            });
        }
        edge = edge * 3 / 4;
    }
    Err(format!(
        "it stays larger than the {} bytes the model takes, even scaled down",
        accepts.max_image_bytes
    ))
}

/// A reader of `bytes` as `format`, under the limits.
fn reader(bytes: &[u8], format: ImageFormat) -> ImageReader<Cursor<&[u8]>> {
    let mut reader = ImageReader::with_format(Cursor::new(bytes), format);
    let mut limits = Limits::default();
    limits.max_image_width = Some(MAX_READ_EDGE);
    limits.max_image_height = Some(MAX_READ_EDGE);
    limits.max_alloc = Some(MAX_READ_ALLOC);
    reader.limits(limits);
    reader
}

/// `image` as JPEG (quality 85; transparency dropped) or PNG.
fn encode(image: &DynamicImage, jpeg: bool) -> Result<(&'static str, Vec<u8>), String> {
    let mut out = Vec::new();
    let written = if jpeg {
        let rgb = DynamicImage::ImageRgb8(image.to_rgb8());
        rgb.write_with_encoder(JpegEncoder::new_with_quality(&mut out, 85))
    } else {
        image.write_to(&mut Cursor::new(&mut out), ImageFormat::Png)
    };
    written.map_err(|e| format!("it could not be scaled down ({e})"))?;
    Ok((if jpeg { "image/jpeg" } else { "image/png" }, out))
}
