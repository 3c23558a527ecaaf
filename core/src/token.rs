//! Secrets handed to clients: API tokens and session tokens are random, shown once, and
//! stored only as SHA-256 digests, so a database leak does not leak a credential.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// A new random secret with a readable prefix (`drive_api_`, `drive_session_`).
pub fn generate(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}{}", URL_SAFE_NO_PAD.encode(bytes))
}

/// The digest under which a secret is stored and looked up.
pub fn digest(secret: &str) -> Vec<u8> {
    Sha256::digest(secret.as_bytes()).to_vec()
}
