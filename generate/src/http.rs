//! What every adapter shares: a client for the providers' APIs (the configured address only, no
//! redirects, a timeout), reading their answers within a cap, their error bodies in words, and
//! fetching an image a provider hands over as a link through `drive-fetch`.

use std::time::Duration;

use base64::Engine;
use drive_fetch::{Fetcher, SystemResolver};
use reqwest::RequestBuilder;
use serde_json::Value;

use crate::{GenerateError, Image, MAX_IMAGE_BYTES};

/// The most of one answer read: an image in base64 is a third larger than the image.
const MAX_ANSWER_BYTES: usize = MAX_IMAGE_BYTES / 3 * 4 + (1 << 20);

/// The longest provider's error sentence kept.
const MAX_ERROR_CHARS: usize = 300;

#[derive(Clone)]
pub(crate) struct Api {
    http: reqwest::Client,
    links: Fetcher,
}

impl Api {
    pub(crate) fn new(timeout: Duration, links: drive_fetch::Allowances) -> Api {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(Duration::from_secs(10))
            // A provider answers where it is asked; a redirect is not followed anywhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("a client with timeouts builds");
        Api {
            http,
            links: Fetcher::new(SystemResolver, links, timeout),
        }
    }

    pub(crate) fn post(&self, url: &str) -> RequestBuilder {
        self.http.post(url)
    }

    pub(crate) fn get(&self, url: &str) -> RequestBuilder {
        self.http.get(url)
    }

    /// Sends `request` and reads its JSON answer; a status other than success is an error in
    /// the provider's words.
    pub(crate) async fn json(&self, request: RequestBuilder, provider: &str) -> Result<Value, GenerateError> {
        let failed = |why: String| GenerateError(format!("{provider}: {why}"));
        let response = request.send().await.map_err(|e| failed(describe(&e)))?;
        let status = response.status();
        let body = drive_fetch::read_capped(response, MAX_ANSWER_BYTES)
            .await
            .map_err(|e| failed(e.to_string()))?;
        if !status.is_success() {
            return Err(failed(format!("answered {status}: {}", error_message(&body))));
        }
        serde_json::from_slice(&body).map_err(|e| failed(format!("its answer is not JSON: {e}")))
    }

    /// The image at a link a provider answered, fetched like any link from outside.
    pub(crate) async fn download(&self, link: &str, provider: &str) -> Result<Image, GenerateError> {
        let failed = |why: String| GenerateError(format!("{provider}'s image link: {why}"));
        let response = self.links.get(link).await.map_err(|e| failed(e.to_string()))?;
        if !response.status().is_success() {
            return Err(failed(format!("answered {}", response.status())));
        }
        let bytes = drive_fetch::read_capped(response, MAX_IMAGE_BYTES)
            .await
            .map_err(|e| failed(e.to_string()))?;
        Image::sniffed(bytes, provider)
    }
}

/// An image a provider answered in base64.
pub(crate) fn decoded(data: &str, provider: &str) -> Result<Image, GenerateError> {
    if data.len() > MAX_ANSWER_BYTES {
        return Err(GenerateError(format!("{provider}: the image is too large")));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| GenerateError(format!("{provider}: the image is not base64: {e}")))?;
    Image::sniffed(bytes, provider)
}

fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "it did not answer in time".into()
    } else if e.is_connect() {
        "it could not be reached".into()
    } else {
        format!("the call failed: {e}")
    }
}

/// A provider's error body in words: `error.message` (OpenAI, Google, ModelArk), `detail`
/// (Black Forest Labs and fal: a sentence, or a list of `{ msg }`), `message`, or the body's
/// start; one line, at most [`MAX_ERROR_CHARS`].
pub(crate) fn error_message(body: &[u8]) -> String {
    let json: Option<Value> = serde_json::from_slice(body).ok();
    let said = json.as_ref().and_then(|v| {
        let text = |v: &Value| v.as_str().map(str::to_string);
        text(&v["error"]["message"])
            .or_else(|| text(&v["detail"]))
            .or_else(|| {
                v["detail"].as_array().map(|items| {
                    items
                        .iter()
                        .filter_map(|item| item["msg"].as_str())
                        .collect::<Vec<_>>()
                        .join("; ")
                })
            })
            .or_else(|| text(&v["message"]))
            .or_else(|| text(&v["error"]))
    });
    let said = said.unwrap_or_else(|| String::from_utf8_lossy(body).into_owned());
    let line: String = said
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_ERROR_CHARS)
        .collect();
    match line.trim() {
        "" => "no reason given".to_string(),
        line => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_in_words() {
        assert_eq!(
            error_message(
                br#"{"error":{"message":"Your request was rejected","type":"invalid_request_error"}}"#
            ),
            "Your request was rejected"
        );
        assert_eq!(
            error_message(br#"{"detail":[{"loc":["body","width"],"msg":"too wide"},{"msg":"bad"}]}"#),
            "too wide; bad"
        );
        assert_eq!(
            error_message(br#"{"detail":"Not authenticated"}"#),
            "Not authenticated"
        );
        assert_eq!(error_message(b"upstream\ndown"), "upstream down");
        assert_eq!(error_message(b""), "no reason given");
    }
}
