//! `drive-image-stand-in`: a stand-in for a provider, for development, not a model. It speaks
//! the OpenAI Images wire format (`POST /v1/images/generations`, a bearer key, `{ data: [{
//! b64_json }] }`) and answers a real PNG drawn from the prompt: a two-colour gradient chosen
//! by the prompt's SHA-256 with the prompt's words written over it, at the size asked for. With
//! it, `scripts/dev` shows the whole generation flow without a provider's key.
//!
//! `DRIVE_STAND_IN_LISTEN` (default `127.0.0.1:8090`), `DRIVE_FONT` (default DejaVu Sans). It
//! prints `listening on http://ADDRESS/v1` once it takes requests.

use std::io::Cursor;
use std::sync::Arc;

use ab_glyph::{Font, FontArc, PxScale, ScaleFont, point};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use base64::Engine;
use image::{Rgb, RgbImage};
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

#[derive(Deserialize)]
struct Generate {
    model: Option<String>,
    prompt: Option<String>,
    size: Option<String>,
    quality: Option<String>,
}

type Answer = (StatusCode, Json<Value>);

fn refused(status: StatusCode, kind: &str, param: Option<&str>, message: &str) -> Answer {
    let body = json!({ "error": { "message": message, "type": kind, "param": param, "code": null } });
    (status, Json(body))
}

async fn generate(State(font): State<Arc<FontArc>>, headers: HeaderMap, body: Json<Value>) -> Answer {
    let bearer = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    if bearer.is_none_or(str::is_empty) {
        return refused(
            StatusCode::UNAUTHORIZED,
            "invalid_request_error",
            None,
            "You didn't provide an API key.",
        );
    }
    let Ok(ask) = serde_json::from_value::<Generate>(body.0) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            None,
            "The body is not valid.",
        );
    };
    let Some(prompt) = ask.prompt.filter(|p| !p.trim().is_empty()) else {
        return refused(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            Some("prompt"),
            "Missing required parameter: 'prompt'.",
        );
    };
    let size = ask.size.unwrap_or_else(|| "1024x1024".to_string());
    let Some((width, height)) = ["1024x1024", "1536x1024", "1024x1536"]
        .contains(&size.as_str())
        .then(|| size.split_once('x'))
        .flatten()
        .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
    else {
        return refused(
            StatusCode::BAD_REQUEST,
            "invalid_request_error",
            Some("size"),
            "Invalid value for 'size': supported values are '1024x1024', '1536x1024' and '1024x1536'.",
        );
    };
    let picture = tokio::task::spawn_blocking(move || draw(&font, &prompt, width, height)).await;
    let Ok(Ok(png)) = picture else {
        return refused(
            StatusCode::INTERNAL_SERVER_ERROR,
            "server_error",
            None,
            "The picture could not be drawn.",
        );
    };
    let body = json!({
        "created": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        "data": [{ "b64_json": base64::engine::general_purpose::STANDARD.encode(png) }],
        "output_format": "png",
        "size": size,
        "quality": ask.quality.unwrap_or_else(|| "auto".to_string()),
        "model": ask.model,
    });
    (StatusCode::OK, Json(body))
}

/// A gradient between two colours taken from the prompt's digest, the prompt written across
/// it in lines, as a PNG.
fn draw(font: &FontArc, prompt: &str, width: u32, height: u32) -> Result<Vec<u8>, image::ImageError> {
    let digest = Sha256::digest(prompt.as_bytes());
    let from = [digest[0], digest[1], digest[2]];
    let to = [digest[3], digest[4], digest[5]];
    let mut picture = RgbImage::from_fn(width, height, |x, y| {
        let t = (x + y) as f32 / (width + height) as f32;
        Rgb(std::array::from_fn(|i| {
            (from[i] as f32 * (1.0 - t) + to[i] as f32 * t) as u8
        }))
    });
    let scaled = font.as_scaled(PxScale::from(height as f32 / 14.0));
    let margin = width as f32 / 12.0;
    let mut lines: Vec<String> = Vec::new();
    for word in prompt.split_whitespace() {
        let advance =
            |text: &str| -> f32 { text.chars().map(|c| scaled.h_advance(scaled.glyph_id(c))).sum() };
        match lines.last_mut() {
            Some(line) if advance(&format!("{line} {word}")) <= width as f32 - 2.0 * margin => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    let line_height = scaled.height() * 1.2;
    let top = ((height as f32 - line_height * lines.len() as f32) / 2.0).max(margin);
    for (n, line) in lines.iter().enumerate() {
        let baseline = top + scaled.ascent() + line_height * n as f32;
        if baseline > height as f32 - margin {
            break;
        }
        let mut x = margin;
        for c in line.chars() {
            let mut glyph = scaled.scaled_glyph(c);
            glyph.position = point(x, baseline);
            x += scaled.h_advance(glyph.id);
            if let Some(outlined) = font.outline_glyph(glyph) {
                let bounds = outlined.px_bounds();
                outlined.draw(|gx, gy, coverage| {
                    let (px, py) = (bounds.min.x as i64 + gx as i64, bounds.min.y as i64 + gy as i64);
                    if px >= 0 && py >= 0 && (px as u32) < width && (py as u32) < height {
                        let pixel = picture.get_pixel_mut(px as u32, py as u32);
                        for channel in pixel.0.iter_mut() {
                            *channel = (*channel as f32 * (1.0 - coverage) + 255.0 * coverage) as u8;
                        }
                    }
                });
            }
        }
    }
    let mut png = Vec::new();
    picture.write_to(&mut Cursor::new(&mut png), image::ImageFormat::Png)?;
    Ok(png)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let font_path = std::env::var("DRIVE_FONT")
        .unwrap_or_else(|_| "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf".to_string());
    let font = FontArc::try_from_vec(std::fs::read(&font_path)?)?;
    let listen = std::env::var("DRIVE_STAND_IN_LISTEN").unwrap_or_else(|_| "127.0.0.1:8090".to_string());
    let listener = tokio::net::TcpListener::bind(&listen).await?;
    let app = axum::Router::new()
        .route("/v1/images/generations", post(generate))
        .with_state(Arc::new(font));
    println!("listening on http://{}/v1", listener.local_addr()?);
    axum::serve(listener, app).await?;
    Ok(())
}
