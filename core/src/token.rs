//! Secrets handed to clients: API tokens, session tokens and OAuth codes are random, shown
//! once, and stored only as SHA-256 digests, so a database leak does not leak a credential.

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

/// PKCE's S256 challenge of a code verifier (RFC 7636): `BASE64URL(SHA-256(verifier))`.
pub fn pkce_challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod unit {
    #[test]
    fn the_challenge_is_the_verifiers_sha256_in_unpadded_base64url() {
        // Worked out apart: Python's `base64.urlsafe_b64encode(hashlib.sha256(v).digest())`
        // without its `=`.
        assert_eq!(
            super::pkce_challenge("dBjftJeZ4CVP-mJ0kmwq9-wPUpSgoNzdg0xT6ZhzyAs"),
            "T1gqg9pTNgkCgaa3fZ7EY1xx3CLpOZqCJ2E_RRU6Iac"
        );
    }
}
