//! Sensitive keys of key=value pairs (query strings, form bodies): decoded and normalized, then matched against
//! the list of sensitive names.

fn normalize_key(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        // Hex digits read as bytes: `%` may be followed by a multi-byte character, which a `str` slice would cut.
        let hex = |at: usize| char::from(bytes[at]).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(high), Some(low)) = (hex(i + 1), hex(i + 2)) {
                decoded.push((high * 16 + low) as u8);
                i += 3;
                continue;
            }
        }
        decoded.push(bytes[i]);
        i += 1;
    }
    let mut out = String::with_capacity(decoded.len());
    let mut lower_before = false;
    for c in String::from_utf8_lossy(&decoded).chars() {
        if c.is_whitespace() || c.is_control() || c == '+' || is_invisible(c) || is_format(c) {
            continue;
        }
        // camelCase words: clientSecret -> client_secret.
        if c.is_ascii_uppercase() && lower_before {
            out.push('_');
        }
        lower_before = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(if c == '-' { '_' } else { c.to_ascii_lowercase() });
    }
    out
}

pub(super) fn is_invisible(c: char) -> bool {
    matches!(c, '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202F}' | '\u{2060}'..='\u{2064}' | '\u{FEFF}'
        | '\u{00AD}' | '\u{115F}' | '\u{1160}' | '\u{3164}' | '\u{FFA0}' | '\u{00A0}' | '\u{2000}'..='\u{200A}'
        | '\u{205F}' | '\u{3000}' | '\u{1680}')
}

const SENSITIVE_KEYS: &[&str] = &[
    "access_token",
    "auth_token",
    "awssecretaccesskey",
    "aws_secret_access_key",
    "hook_token",
    "refresh_token",
    "id_token",
    "token",
    "api_key",
    "apikey",
    "client_secret",
    "app_secret",
    "password",
    "pass",
    "passwd",
    "pwd",
    "auth",
    "jwt",
    "session",
    "code",
    "signature",
    "sig",
    "x_amz_signature",
    "x_amz_security_token",
    "x_amz_credential",
    "x_goog_signature",
    "x_goog_credential",
    "secret",
    "secretaccesskey",
    "credential",
    "private_key",
    "private_token",
    "authorization",
    "key",
    "card_number",
    "card_cvc",
    "card_cvv",
    "cvc",
    "cvv",
    "security_code",
    "payment_credential",
    "shared_payment_token",
    "x_api_key",
    "x_access_token",
    "x_auth_token",
    "x_goog_api_key",
    "secret_key",
    "api_secret",
    "client_assertion",
    "session_token",
    "accountkey",
    "secret_access_key",
    "account_key",
];

pub(super) fn sensitive_key(raw: &str) -> bool {
    let key = normalize_key(raw);
    SENSITIVE_KEYS.contains(&key.as_str())
        || key.contains("_token_")
        || ["_token", "_secret", "_password", "_passwd", "_api_key", "_apikey"].iter().any(|s| key.ends_with(s))
}

pub(super) fn is_format(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{0600}'..='\u{0605}' | '\u{061C}' | '\u{06DD}' | '\u{070F}' | '\u{180E}'
        | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}'
        | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_decode_and_a_character_after_a_percent_stays_whole() {
        assert_eq!(normalize_key("client%5Fsecret"), "client_secret");
        assert_eq!(normalize_key("%0\u{80}x"), "%0x", "the C1 control goes, no panic on its two bytes");
        assert_eq!(normalize_key("a%é1"), "a%é1");
    }
}
