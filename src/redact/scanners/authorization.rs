//! The scanner of Authorization headers: schemes, auth-params, folded and escaped whitespace, serialized quotes.

use crate::redact::engine::Rule;
use crate::redact::masking::{masked_edit, Edit, ELLIPSIS};

fn is_auth_token_char(c: char, quote: Option<char>) -> bool {
    Some(c) != quote && (c.is_ascii_alphanumeric() || "._~+/=-!$%*^|".contains(c) || c == ELLIPSIS)
}

/// Length of whitespace at the start of `s`: blanks, line breaks only when `folded_only` is false or they are
/// followed by a blank (header folding), and JSON-escaped `\t`, `\n`, `\r`.
fn auth_space(s: &str, allow_newline: bool) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    loop {
        match b.get(i) {
            Some(b' ' | b'\t') => i += 1,
            Some(b'\r' | b'\n') => {
                let mut j = i;
                while matches!(b.get(j), Some(b'\r' | b'\n')) {
                    j += 1;
                }
                if allow_newline || matches!(b.get(j), Some(b' ' | b'\t')) {
                    i = j;
                } else {
                    return i;
                }
            }
            Some(b'\\') => {
                let mut j = i;
                while b.get(j) == Some(&b'\\') {
                    j += 1;
                }
                match b.get(j) {
                    Some(b't') => i = j + 1,
                    Some(b'n' | b'r') => {
                        // An escaped line break continues the value only if blank (or escaped tab) follows.
                        let mut k = j + 1;
                        while k + 1 < b.len() && b[k] == b'\\' && matches!(b[k + 1], b'r' | b'n') {
                            k += 2;
                        }
                        let rest = &b[k..];
                        if allow_newline
                            || rest.first().is_some_and(|c| *c == b' ' || *c == b'\t')
                            || rest.starts_with(b"\\t")
                            || rest.starts_with(b"\\\\t")
                        {
                            i = k;
                        } else {
                            return i;
                        }
                    }
                    _ => return i,
                }
            }
            _ => return i,
        }
    }
}

/// Whether a quote after `run` backslashes closes a value opened by a quote escaped `depth` times: the run is the
/// quote's own escape plus escaped backslashes (a literal backslash at that nesting level costs `2 * (depth + 1)`).
fn closes_quote(run: usize, depth: usize) -> bool {
    run >= depth && (run - depth).is_multiple_of(2 * (depth + 1))
}

/// Whether the text after an auth-param word continues a parameter list damaged by empty items
/// (`Digest damaged,,response="…"`): commas, then `name=`.
fn damaged_params_follow(rest: &str) -> bool {
    // An empty item (`,,`) marks the damage: `Token abc, status=401` is a token68 and prose.
    let Some(rest) = rest.strip_prefix(',') else { return false };
    let rest = rest.trim_start_matches([' ', '\t']);
    let Some(rest) = rest.strip_prefix(',') else { return false };
    let rest = rest.trim_start_matches([',', ' ', '\t']);
    let name = rest.bytes().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')).count();
    name > 0 && rest[name..].trim_start_matches([' ', '\t']).starts_with('=')
}

/// Whether a `;` followed by `rest` lies inside an auth-param value (AWS4 `SignedHeaders=:authority;x_custom`)
/// rather than ending the list: a non-blank follows, and not a `name=` pair (`;status=403`).
fn semicolon_continues(rest: &[u8]) -> bool {
    let name = rest.iter().take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-')).count();
    rest.first().is_some_and(|n| !n.is_ascii_whitespace()) && rest.get(name) != Some(&b'=')
}

/// The end of a structured auth-param list starting at `from` (`Digest username="x", response="…"`).
fn auth_params_end(text: &str, from: usize, header_quote: Option<(char, usize)>) -> usize {
    let b = text.as_bytes();
    let mut i = from;
    let mut inner: Option<(u8, usize)> = None;
    let mut last_sig = b'='; // last significant byte outside quotes
    while i < b.len() {
        let c = b[i];
        if c == b'\\' {
            let mut j = i;
            while j < b.len() && b[j] == b'\\' {
                j += 1;
            }
            let depth = j - i;
            match b.get(j) {
                Some(&q @ (b'"' | b'\'')) => {
                    if let Some((iq, id)) = inner {
                        if iq == q && closes_quote(depth, id) {
                            inner = None;
                        }
                    } else if header_quote == Some((q as char, depth)) {
                        return i;
                    } else if last_sig == b'=' {
                        inner = Some((q, depth));
                    } else if q == b'"' {
                        return i;
                    }
                    i = j + 1;
                    last_sig = q;
                    continue;
                }
                Some(b'n' | b'r') if inner.is_none() => {
                    let n = auth_space(&text[i..], false);
                    if n == 0 {
                        return i;
                    }
                    i += n;
                    continue;
                }
                _ => {
                    i = j;
                    continue;
                }
            }
        }
        if let Some((q, depth)) = inner {
            if c == q && depth == 0 {
                inner = None;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' | b'\'' => {
                if header_quote == Some((c as char, 0)) {
                    return i;
                }
                if last_sig == b'=' {
                    inner = Some((c, 0));
                } else if c == b'"' {
                    return i;
                }
            }
            // `;` inside a value (AWS4 `SignedHeaders=:authority;x_custom`) continues; `; next` ends the list.
            b';' if semicolon_continues(&b[i + 1..]) && last_sig != b',' => {}
            b';' | b')' | b'}' | b']' => return i,
            b'\r' | b'\n' => {
                let n = auth_space(&text[i..], false);
                if n == 0 {
                    return i;
                }
                i += n;
                continue;
            }
            _ => {}
        }
        if !c.is_ascii_whitespace() {
            last_sig = c;
        }
        i += 1;
    }
    b.len()
}

pub(super) fn authorization_edits(rule: &Rule, text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut pos = 0;
    while let Some(m) = rule.regex().find_at(text, pos) {
        let mut i = m.end();
        i += auth_space(&text[i..], true);
        // An optional (serialized) quote opens the value: "…", \"…\", '…'.
        let mut header_quote = None;
        let backslashes = text[i..].bytes().take_while(|&b| b == b'\\').count();
        if let Some(q @ ('"' | '\'')) = text[i + backslashes..].chars().next() {
            header_quote = Some((q, backslashes));
            i += backslashes + 1;
        }
        if header_quote.is_none() {
            // A quote right before the header name (curl -H 'Authorization: …') closes the value too.
            if let Some(q @ ('"' | '\'')) = text[m.start()..].chars().next() {
                let depth = text[..m.start()].bytes().rev().take_while(|&b| b == b'\\').count();
                header_quote = Some((q, depth));
            }
        }
        let quote = header_quote.map(|(q, _)| q);
        let word_end = |from: usize| {
            text[from..]
                .char_indices()
                .find(|&(_, c)| !is_auth_token_char(c, quote))
                .map_or(text.len(), |(k, _)| from + k)
        };
        let w1_end = word_end(i);
        let mut next = w1_end.max(m.end());
        if w1_end > i {
            let gap = auth_space(&text[w1_end..], false);
            let w2 = w1_end + gap;
            let w2_end = if gap > 0 { word_end(w2) } else { w2 };
            if gap > 0 && w2_end > w2 {
                // word 1 is a scheme; auth-params (name=value, value not "=" padding) or one token68.
                let name_len = text[w2..w2_end].find('=').unwrap_or(w2_end - w2);
                let after = text[w2 + name_len..].trim_start_matches([' ', '\t']);
                let params = damaged_params_follow(&text[w2_end..])
                    || name_len > 0
                        && after.starts_with('=')
                        && after[1..]
                            .chars()
                            .next()
                            .is_some_and(|c| c != '=' && c != ',' && c != ';' && !c.is_whitespace());
                if params {
                    let end = auth_params_end(text, w2, header_quote);
                    let end = w2 + text[w2..end].trim_end().len();
                    if end > w2 && &text[w2..end] != "***" {
                        edits.push(Edit { start: w2, end, with: "***".to_owned() });
                    }
                    next = end.max(next);
                } else {
                    edits.extend(masked_edit(text, w2, w2_end, false));
                    next = w2_end;
                }
            } else {
                edits.extend(masked_edit(text, i, w1_end, false));
            }
        }
        pos = next.max(m.end());
        if pos >= text.len() {
            break;
        }
    }
    edits
}
