//! Drawing images from prompts through the providers' own HTTP APIs, one adapter per provider:
//! OpenAI Images (`gptImage2`), Google's Gemini API (`nanoBanana`, `nanoBananaPro` through
//! generateContent, `imagen4Fast` through predict), BytePlus ModelArk (`seedream4`), Black
//! Forest Labs (`flux2Pro`, polled) and fal's queue (`fluxKreaDev`, polled).
//!
//! A provider's key and base URL come from the environment ([`Generators::from_environment`]);
//! a model whose provider has no key is unavailable, and [`Generators::missing`] names what to
//! set. Providers are called at the address the operator configured, with no redirects
//! followed; an image a provider hands over as a link is fetched through `drive-fetch`, like
//! any link from outside. The worker's supervisor calls these (the keys are credentials),
//! never a job process.

mod bfl;
mod fal;
mod google;
mod http;
mod modelark;
mod openai;

use std::time::Duration;

use drive_domain::config::{self, ConfigError};
use drive_domain::generation::{AspectRatio, ImageModel, Quality};
use serde::{Deserialize, Serialize};

use crate::http::Api;

/// The largest image taken from a provider.
pub const MAX_IMAGE_BYTES: usize = 64 << 20;

/// What to draw.
#[derive(Debug, Clone, Copy)]
pub struct Ask<'a> {
    pub model: ImageModel,
    pub prompt: &'a str,
    pub aspect_ratio: AspectRatio,
    /// For `gptImage2`; `None` for the others.
    pub quality: Option<Quality>,
}

/// A picture a provider made, checked to be a PNG, a JPEG or a WebP by its first bytes.
#[derive(Debug, Clone)]
pub struct Image {
    pub bytes: Vec<u8>,
    pub mime_type: &'static str,
    /// The file name's extension for it (`png`, `jpg`, `webp`).
    pub extension: &'static str,
}

impl Image {
    /// The file name extension of a picture of `mime_type` (one `sniffed` gave).
    pub fn extension_for(mime_type: &str) -> &'static str {
        match mime_type {
            "image/jpeg" => "jpg",
            "image/webp" => "webp",
            _ => "png",
        }
    }

    /// `bytes` as an image, when they are one of the kinds the drive keeps.
    pub fn sniffed(bytes: Vec<u8>, provider: &str) -> Result<Image, GenerateError> {
        let mime_type = if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            "image/png"
        } else if bytes.starts_with(&[0xff, 0xd8, 0xff]) {
            "image/jpeg"
        } else if bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            "image/webp"
        } else {
            return Err(GenerateError(format!(
                "{provider} answered something that is not a PNG, JPEG or WebP picture"
            )));
        };
        let extension = Image::extension_for(mime_type);
        Ok(Image {
            bytes,
            mime_type,
            extension,
        })
    }
}

/// A provider that works in the background answers a task to ask about later; it is kept on
/// the generation's row so that a new attempt (its worker died) asks about the same task
/// rather than paying for a second one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "provider", rename_all = "camelCase")]
pub enum Task {
    /// Black Forest Labs: the `polling_url` its submission answered.
    Bfl { polling_url: String },
    /// fal's queue: where to ask for the status and then for the result.
    Fal {
        status_url: String,
        response_url: String,
    },
}

/// What starting a generation gave.
#[derive(Debug)]
pub enum Started {
    Image(Image),
    Pending(Task),
}

/// The provider did not draw the image; the sentence says why (its own words when it gave
/// some), and becomes the generation's `error`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct GenerateError(pub String);

/// Where one provider is, and its key.
#[derive(Clone)]
struct Provider {
    base: String,
    key: String,
    /// Hosts besides the base URL's a link the provider answers may name (Black Forest Labs
    /// polls on regional hosts), exactly: the key is sent to these and the base's host only.
    other_hosts: Vec<String>,
}

impl Provider {
    /// `{prefix}_API_KEY` (none: the provider is off) and `{prefix}_BASE_URL` (default
    /// `default_base`).
    fn from_environment(key: &'static str, base: &'static str, default_base: &str) -> Option<Provider> {
        let key = std::env::var(key).ok().filter(|k| !k.is_empty())?;
        Some(Provider {
            base: config::or(base, default_base).trim_end_matches('/').to_string(),
            key,
            other_hosts: Vec::new(),
        })
    }

    /// With the hosts listed in `name` (comma-separated; `default` when unset) as its own too.
    fn with_hosts_of(mut self, name: &'static str, default: &str) -> Provider {
        self.other_hosts = config::or(name, default)
            .split(',')
            .map(|host| host.trim().to_ascii_lowercase())
            .filter(|host| !host.is_empty())
            .collect();
        self
    }

    /// Refuses a link a provider answered (where to ask about a task) that is not on one of
    /// the provider's own hosts, since its key is sent there: the base URL's host and port, or
    /// one of [`Provider::other_hosts`] on the base's port, over the base's scheme. Exactly
    /// those: a subdomain or a sibling of them may be anyone's (a customer's bucket, a
    /// hosted page).
    fn owns(&self, link: &str, provider: &str) -> Result<(), GenerateError> {
        let refused = || {
            GenerateError(format!(
                "{provider} pointed the drive at {link:?}, which is not one of the hosts its key goes to"
            ))
        };
        let (Ok(base), Ok(url)) = (drive_fetch::Url::parse(&self.base), drive_fetch::Url::parse(link)) else {
            return Err(refused());
        };
        let (Some(home), Some(host)) = (base.host_str(), url.host_str()) else {
            return Err(refused());
        };
        let own_host = host == home || self.other_hosts.iter().any(|other| other == host);
        if own_host
            && url.scheme() == base.scheme()
            && url.port_or_known_default() == base.port_or_known_default()
        {
            Ok(())
        } else {
            Err(refused())
        }
    }
}

/// Every configured provider, and how long to wait on them.
#[derive(Clone)]
pub struct Generators {
    api: Api,
    openai: Option<Provider>,
    google: Option<Provider>,
    modelark: Option<Provider>,
    bfl: Option<Provider>,
    fal: Option<Provider>,
    /// The providers' names for the models.
    ids: ModelIds,
}

/// What each provider calls the model: Google retires its image models every few months
/// (`gemini-2.5-flash-image` is listed for shutdown from October 2026), so each name can be
/// set without a new release.
#[derive(Debug, Clone)]
struct ModelIds {
    gpt_image: String,
    nano_banana: String,
    nano_banana_pro: String,
    imagen: String,
    seedream: String,
}

impl ModelIds {
    fn from_environment() -> Result<ModelIds, ConfigError> {
        let id = |name: &'static str, default: &str| -> Result<String, ConfigError> {
            let value = config::or(name, default);
            // It goes into a URL's path: a plain name only.
            if value.is_empty()
                || !value
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
            {
                return Err(ConfigError::Invalid {
                    name,
                    value,
                    reason: "a model name is letters, digits, '-', '.' and '_'".into(),
                });
            }
            Ok(value)
        };
        Ok(ModelIds {
            gpt_image: id("DRIVE_OPENAI_IMAGE_MODEL", "gpt-image-2")?,
            nano_banana: id("DRIVE_NANO_BANANA_MODEL", "gemini-2.5-flash-image")?,
            nano_banana_pro: id("DRIVE_NANO_BANANA_PRO_MODEL", "gemini-3-pro-image")?,
            imagen: id("DRIVE_IMAGEN_MODEL", "imagen-4.0-fast-generate-001")?,
            seedream: id("DRIVE_SEEDREAM_MODEL", "seedream-4-0-250828")?,
        })
    }

    fn of(&self, model: ImageModel) -> &str {
        match model {
            ImageModel::GptImage2 => &self.gpt_image,
            ImageModel::NanoBanana => &self.nano_banana,
            ImageModel::NanoBananaPro => &self.nano_banana_pro,
            ImageModel::Imagen4Fast => &self.imagen,
            ImageModel::Seedream4 => &self.seedream,
            // Named by the endpoint's path (`/flux-2-pro`, `/fal-ai/flux/krea`).
            ImageModel::Flux2Pro => "flux-2-pro",
            ImageModel::FluxKreaDev => "fal-ai/flux/krea",
        }
    }
}

impl std::fmt::Debug for Generators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let on = |p: &Option<Provider>| p.as_ref().map(|p| p.base.clone());
        f.debug_struct("Generators")
            .field("openai", &on(&self.openai))
            .field("google", &on(&self.google))
            .field("modelark", &on(&self.modelark))
            .field("bfl", &on(&self.bfl))
            .field("fal", &on(&self.fal))
            .finish_non_exhaustive()
    }
}

impl Generators {
    /// Reads each provider's key and base URL (docs/configuration.md): `DRIVE_OPENAI_API_KEY`,
    /// `DRIVE_GEMINI_API_KEY`, `DRIVE_MODELARK_API_KEY`, `DRIVE_BFL_API_KEY`, `DRIVE_FAL_API_KEY`
    /// and their `…_BASE_URL`s; the providers' model names `DRIVE_OPENAI_IMAGE_MODEL`,
    /// `DRIVE_NANO_BANANA_MODEL`, `DRIVE_NANO_BANANA_PRO_MODEL`, `DRIVE_IMAGEN_MODEL`,
    /// `DRIVE_SEEDREAM_MODEL` ([`ModelIds`]);
    /// `DRIVE_GENERATION_TIMEOUT_SECONDS` (default 120), the longest one call to a provider
    /// may take.
    /// Links a provider hands over are fetched with `links` (what may be reached beyond the
    /// public internet: see `drive_fetch::Allowances`).
    pub fn from_environment(links: drive_fetch::Allowances) -> Result<Generators, ConfigError> {
        let timeout: f64 = config::parsed_or("DRIVE_GENERATION_TIMEOUT_SECONDS", 120.0)?;
        Ok(Generators {
            api: Api::new(Duration::from_secs_f64(timeout.max(1.0)), links),
            openai: Provider::from_environment(
                "DRIVE_OPENAI_API_KEY",
                "DRIVE_OPENAI_BASE_URL",
                "https://api.openai.com/v1",
            ),
            google: Provider::from_environment(
                "DRIVE_GEMINI_API_KEY",
                "DRIVE_GEMINI_BASE_URL",
                "https://generativelanguage.googleapis.com/v1beta",
            ),
            modelark: Provider::from_environment(
                "DRIVE_MODELARK_API_KEY",
                "DRIVE_MODELARK_BASE_URL",
                "https://ark.ap-southeast.bytepluses.com/api/v3",
            ),
            // The global and regional endpoints BFL documents, and a cluster seen answering.
            bfl: Provider::from_environment(
                "DRIVE_BFL_API_KEY",
                "DRIVE_BFL_BASE_URL",
                "https://api.bfl.ai/v1",
            )
            .map(|bfl| {
                bfl.with_hosts_of(
                    "DRIVE_BFL_POLLING_HOSTS",
                    "api.bfl.ai,api.eu.bfl.ai,api.us.bfl.ai,api.eu1.bfl.ai,api.us1.bfl.ai,api.eu2.bfl.ai",
                )
            }),
            fal: Provider::from_environment(
                "DRIVE_FAL_API_KEY",
                "DRIVE_FAL_BASE_URL",
                "https://queue.fal.run",
            ),
            ids: ModelIds::from_environment()?,
        })
    }

    /// The environment variable to set for `model` when its provider has no key; `None` when
    /// the model is available.
    pub fn missing(&self, model: ImageModel) -> Option<&'static str> {
        let (provider, key) = match model {
            ImageModel::GptImage2 => (&self.openai, "DRIVE_OPENAI_API_KEY"),
            ImageModel::NanoBanana | ImageModel::NanoBananaPro | ImageModel::Imagen4Fast => {
                (&self.google, "DRIVE_GEMINI_API_KEY")
            }
            ImageModel::Seedream4 => (&self.modelark, "DRIVE_MODELARK_API_KEY"),
            ImageModel::Flux2Pro => (&self.bfl, "DRIVE_BFL_API_KEY"),
            ImageModel::FluxKreaDev => (&self.fal, "DRIVE_FAL_API_KEY"),
        };
        provider.is_none().then_some(key)
    }

    fn provider<'a>(
        &self,
        provider: &'a Option<Provider>,
        model: ImageModel,
    ) -> Result<&'a Provider, GenerateError> {
        provider.as_ref().ok_or_else(|| {
            GenerateError(format!(
                "{} is not available here: {} is not set",
                model.as_str(),
                self.missing(model).unwrap_or("its key")
            ))
        })
    }

    /// Asks the model's provider for the image: the image itself from the providers that
    /// answer with it, or a task to [`Generators::poll`] from those that work in the
    /// background.
    pub async fn start(&self, ask: &Ask<'_>) -> Result<Started, GenerateError> {
        match ask.model {
            ImageModel::GptImage2 => {
                let provider = self.provider(&self.openai, ask.model)?;
                openai::generate(&self.api, provider, self.ids.of(ask.model), ask)
                    .await
                    .map(Started::Image)
            }
            ImageModel::NanoBanana | ImageModel::NanoBananaPro => {
                let provider = self.provider(&self.google, ask.model)?;
                google::generate_content(&self.api, provider, self.ids.of(ask.model), ask)
                    .await
                    .map(Started::Image)
            }
            ImageModel::Imagen4Fast => {
                let provider = self.provider(&self.google, ask.model)?;
                google::predict(&self.api, provider, self.ids.of(ask.model), ask)
                    .await
                    .map(Started::Image)
            }
            ImageModel::Seedream4 => {
                let provider = self.provider(&self.modelark, ask.model)?;
                modelark::generate(&self.api, provider, self.ids.of(ask.model), ask)
                    .await
                    .map(Started::Image)
            }
            ImageModel::Flux2Pro => {
                let provider = self.provider(&self.bfl, ask.model)?;
                bfl::submit(&self.api, provider, ask).await.map(Started::Pending)
            }
            ImageModel::FluxKreaDev => {
                let provider = self.provider(&self.fal, ask.model)?;
                fal::submit(&self.api, provider, ask).await.map(Started::Pending)
            }
        }
    }

    /// Asks about a task once: its image when it is ready, `None` while it is still working.
    pub async fn poll(&self, task: &Task) -> Result<Option<Image>, GenerateError> {
        let unavailable =
            |model: ImageModel| GenerateError(format!("{} is no longer configured here", model.as_str()));
        match task {
            Task::Bfl { polling_url } => {
                let provider = self
                    .bfl
                    .as_ref()
                    .ok_or_else(|| unavailable(ImageModel::Flux2Pro))?;
                bfl::poll(&self.api, provider, polling_url).await
            }
            Task::Fal {
                status_url,
                response_url,
            } => {
                let provider = self
                    .fal
                    .as_ref()
                    .ok_or_else(|| unavailable(ImageModel::FluxKreaDev))?;
                fal::poll(&self.api, provider, status_url, response_url).await
            }
        }
    }

    /// Polls `task` until its image is ready, waiting a little longer each time (from half a
    /// second up to five), for at most `patience`.
    pub async fn wait(&self, task: &Task, patience: Duration) -> Result<Image, GenerateError> {
        let deadline = tokio::time::Instant::now() + patience;
        let mut pause = Duration::from_millis(500);
        loop {
            if let Some(image) = self.poll(task).await? {
                return Ok(image);
            }
            if tokio::time::Instant::now() + pause > deadline {
                return Err(GenerateError(format!(
                    "the provider had not finished the image after {} seconds",
                    patience.as_secs()
                )));
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 3 / 2).min(Duration::from_secs(5));
        }
    }
}

/// Width and height near `pixels` in all at `ratio`, each a multiple of `step`.
fn dimensions(ratio: AspectRatio, pixels: f64, step: u32) -> (u32, u32) {
    let (w, h) = ratio.sides();
    let r = w as f64 / h as f64;
    let round = |x: f64| ((x / step as f64).round() as u32).max(1) * step;
    (round((pixels * r).sqrt()), round((pixels / r).sqrt()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_keep_the_ratio_near_a_megapixel() {
        assert_eq!(dimensions(AspectRatio::Square, 1024.0 * 1024.0, 16), (1024, 1024));
        let (w, h) = dimensions(AspectRatio::Landscape16x9, 1024.0 * 1024.0, 16);
        assert!((w as f64 / h as f64 - 16.0 / 9.0).abs() < 0.02, "{w}x{h}");
        assert_eq!((w % 16, h % 16), (0, 0));
        let (w, h) = dimensions(AspectRatio::Portrait2x3, 1024.0 * 1024.0, 16);
        assert!(h > w);
    }

    #[test]
    fn task_links_stay_on_the_provider_s_own_hosts() {
        let bfl = Provider {
            base: "https://api.bfl.ai/v1".into(),
            key: "k".into(),
            other_hosts: vec!["api.eu2.bfl.ai".into()],
        };
        assert!(bfl.owns("https://api.eu2.bfl.ai/v1/get_result?id=1", "x").is_ok());
        assert!(bfl.owns("https://API.bfl.ai/v1/get_result?id=1", "x").is_ok());
        assert!(
            bfl.owns("https://api.eu3.bfl.ai/v1/get_result?id=1", "x")
                .is_err()
        );
        assert!(
            bfl.owns("https://poll.api.bfl.ai/v1/get_result?id=1", "x")
                .is_err()
        );
        assert!(bfl.owns("https://evil.example/v1/get_result", "x").is_err());
        assert!(bfl.owns("https://bfl.ai.evil.example/", "x").is_err());
        assert!(bfl.owns("http://api.eu2.bfl.ai/", "x").is_err());
        assert!(bfl.owns("https://api.eu2.bfl.ai:8443/", "x").is_err());
        let local = Provider {
            base: "http://127.0.0.1:4000/v1".into(),
            key: "k".into(),
            other_hosts: Vec::new(),
        };
        assert!(local.owns("http://127.0.0.1:4000/poll", "x").is_ok());
        assert!(local.owns("http://127.0.0.1:4001/poll", "x").is_err());
        assert!(local.owns("http://10.0.0.1:4000/poll", "x").is_err());
    }

    #[test]
    fn only_pictures_are_taken() {
        assert_eq!(
            Image::sniffed(b"\x89PNG\r\n\x1a\nrest".to_vec(), "x")
                .unwrap()
                .extension,
            "png"
        );
        assert_eq!(
            Image::sniffed(vec![0xff, 0xd8, 0xff, 0xe0], "x")
                .unwrap()
                .mime_type,
            "image/jpeg"
        );
        assert!(Image::sniffed(b"<html>".to_vec(), "x").is_err());
    }
}
