//! The scanners, one per rule [`Kind`]: a rule's match says where to look, its scanner says what to mask.

mod authorization;
mod form_body;
mod keys;
mod pem;
mod regex_rules;

use authorization::authorization_edits;
use form_body::form_body_edits;
pub(super) use form_body::FORM_KEY;
use pem::pem_edits;
use regex_rules::regex_edits;

use crate::redact::engine::Rule;
use crate::redact::masking::Edit;
use crate::redact::rules::Kind;

pub(super) fn rule_edits(rule: &Rule, text: &str) -> Vec<Edit> {
    match rule.spec.kind {
        Kind::Regex => regex_edits(rule, text),
        Kind::Pem => pem_edits(rule, text),
        Kind::Authorization => authorization_edits(rule, text),
        Kind::FormBody => form_body_edits(text),
    }
}
