//! Secrets the drive must use again later and so cannot keep only as digests (a webhook's
//! signing secret, a receiver's token): sealed at rest with XChaCha20-Poly1305 under a key
//! derived from `DRIVE_SECRET`, each bound to the record it belongs to, so a database leak
//! alone reveals none of them and a sealed value moved to another row does not open.

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

const NONCE_LEN: usize = 24;

/// Seals and opens with the drive's sealing key. Every API and worker process derives the
/// same key from the same `DRIVE_SECRET`.
#[derive(Clone)]
pub struct Sealer {
    cipher: XChaCha20Poly1305,
    /// The key a job's notice secret is derived under ([`Sealer::job_notice_secret`]).
    notices: [u8; 32],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(…)")
    }
}

/// A sealed value that does not open: another key, another record, or altered bytes.
#[derive(Debug, thiserror::Error)]
#[error("a sealed secret does not open with this drive's key (DRIVE_SECRET changed, or the row was altered)")]
pub struct Unsealable;

impl Sealer {
    /// The sealer of `drive_secret`: its key is HMAC-SHA256 of a fixed label under the secret,
    /// so it is never the secret itself, nor the upload tokens' key.
    pub fn new(drive_secret: &str) -> Sealer {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(drive_secret.as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"drive: sealing key v1");
        let key = mac.finalize().into_bytes();
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(drive_secret.as_bytes())
            .expect("HMAC takes a key of any length");
        mac.update(b"drive: job notice key v1");
        Sealer {
            cipher: XChaCha20Poly1305::new(&key),
            notices: mac.finalize().into_bytes().into(),
        }
    }

    /// The secret a job's end notice (`notifyUrl`) is signed with: derived from the drive's key
    /// and the job's id, so the API can hand it to the caller and any worker can sign with it,
    /// and nothing of it is stored.
    pub fn job_notice_secret(&self, job: crate::id::JobId) -> String {
        let mut mac =
            <Hmac<Sha256> as Mac>::new_from_slice(&self.notices).expect("HMAC takes a key of any length");
        mac.update(job.as_uuid().as_bytes());
        format!("jnsec_{}", hex::encode(mac.finalize().into_bytes()))
    }

    /// `secret` sealed for the record `bound_to` (its id): a random nonce, then the
    /// ciphertext with its tag.
    pub fn seal(&self, secret: &[u8], bound_to: &[u8]) -> Vec<u8> {
        let mut nonce = [0u8; NONCE_LEN];
        rand::rng().fill_bytes(&mut nonce);
        let sealed = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: secret,
                    aad: bound_to,
                },
            )
            .expect("sealing a short secret cannot fail");
        [nonce.as_slice(), &sealed].concat()
    }

    pub fn open(&self, sealed: &[u8], bound_to: &[u8]) -> Result<Vec<u8>, Unsealable> {
        if sealed.len() < NONCE_LEN {
            return Err(Unsealable);
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        self.cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: body,
                    aad: bound_to,
                },
            )
            .map_err(|_| Unsealable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_its_record() {
        let sealer = Sealer::new("one drive secret");
        let sealed = sealer.seal(b"whsec_abc", b"row 1");
        assert!(
            !sealed.windows(9).any(|w| w == b"whsec_abc"),
            "the secret shows through"
        );
        assert_eq!(sealer.open(&sealed, b"row 1").unwrap(), b"whsec_abc");
        assert!(
            sealer.open(&sealed, b"row 2").is_err(),
            "opened for another record"
        );
        assert!(Sealer::new("another secret").open(&sealed, b"row 1").is_err());
        let mut altered = sealed.clone();
        *altered.last_mut().unwrap() ^= 1;
        assert!(sealer.open(&altered, b"row 1").is_err(), "opened altered bytes");
        assert!(sealer.open(&sealed[..10], b"row 1").is_err());
        assert_ne!(sealer.seal(b"whsec_abc", b"row 1"), sealed, "the nonce repeats");
    }
}
