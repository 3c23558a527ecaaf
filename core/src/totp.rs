//! Time-based one-time passwords (RFC 6238 over RFC 4226): HMAC-SHA1 of the 30-second step,
//! six digits, the form every authenticator app reads from an `otpauth://` link.

use hmac::{Hmac, Mac};
use rand::RngCore;
use sha1::Sha1;

/// Seconds one code lasts.
const STEP: i64 = 30;
/// Steps either side of now whose code is taken too: a phone's clock a little off, or a code
/// typed as it turned.
const DRIFT: i64 = 1;

/// A new key: 160 bits, as RFC 4226 recommends.
pub fn new_key() -> Vec<u8> {
    let mut key = vec![0u8; 20];
    rand::rng().fill_bytes(&mut key);
    key
}

/// The key as authenticator apps take it typed in: base32 (RFC 4648), no padding.
pub fn base32(key: &[u8]) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::new();
    let (mut buffer, mut bits) = (0u32, 0);
    for &byte in key {
        buffer = (buffer << 8) | u32::from(byte);
        bits += 8;
        while bits >= 5 {
            bits -= 5;
            out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
        }
    }
    if bits > 0 {
        out.push(ALPHABET[((buffer << (5 - bits)) & 31) as usize] as char);
    }
    out
}

/// The link an authenticator app takes (as a QR code or pasted): the drive and the handle name it.
pub fn link(key: &[u8], issuer: &str, handle: &str) -> String {
    let encode =
        |s: &str| percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC).to_string();
    format!(
        "otpauth://totp/{}:{}?secret={}&issuer={}&algorithm=SHA1&digits=6&period={STEP}",
        encode(issuer),
        encode(handle),
        base32(key),
        encode(issuer)
    )
}

/// The step of a Unix time.
pub fn step_of(unix_seconds: i64) -> i64 {
    unix_seconds.div_euclid(STEP)
}

/// The six digits of `key` at `step`.
pub fn code_at(key: &[u8], step: i64) -> String {
    let mut mac = <Hmac<Sha1> as Mac>::new_from_slice(key).expect("HMAC takes a key of any length");
    mac.update(&step.to_be_bytes());
    let digest = mac.finalize().into_bytes();
    let offset = usize::from(digest[19] & 0x0f);
    let number = u32::from_be_bytes([
        digest[offset],
        digest[offset + 1],
        digest[offset + 2],
        digest[offset + 3],
    ]) & 0x7fff_ffff;
    format!("{:06}", number % 1_000_000)
}

/// The step whose code `code` is, within the drift of `now_step` and after `last_taken` (a code
/// is good once); `None` when it is none of them.
pub fn matching_step(key: &[u8], code: &str, now_step: i64, last_taken: Option<i64>) -> Option<i64> {
    let code = code.trim();
    if code.len() != 6 || !code.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    (now_step - DRIFT..=now_step + DRIFT)
        .filter(|step| last_taken.is_none_or(|last| *step > last))
        .find(|step| constant_time_eq(code_at(key, *step).as_bytes(), code.as_bytes()))
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6238's test vectors for SHA-1 (key "12345678901234567890"), the last six digits.
    #[test]
    fn codes_are_the_rfcs() {
        let key = b"12345678901234567890";
        for (time, code) in [
            (59, "287082"),
            (1_111_111_109, "081804"),
            (1_111_111_111, "050471"),
            (1_234_567_890, "005924"),
            (2_000_000_000, "279037"),
            (20_000_000_000, "353130"),
        ] {
            assert_eq!(code_at(key, step_of(time)), code, "at {time}");
        }
    }

    #[test]
    fn base32_is_rfc_4648s() {
        assert_eq!(base32(b"foobar"), "MZXW6YTBOI");
        assert_eq!(
            base32(b"12345678901234567890"),
            "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        );
    }

    #[test]
    fn a_code_is_taken_near_its_time_and_once() {
        let key = new_key();
        let now = 1_000_000;
        let code = code_at(&key, now - 1);
        assert_eq!(matching_step(&key, &code, now, None), Some(now - 1));
        assert_eq!(matching_step(&key, &code, now, Some(now - 1)), None, "taken once");
        assert_eq!(matching_step(&key, &code, now + 2, None), None, "too old");
        assert_eq!(matching_step(&key, "12345", now, None), None);
        assert_eq!(matching_step(&key, "abcdef", now, None), None);
    }
}
