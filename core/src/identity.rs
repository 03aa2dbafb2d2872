//! The node identity file `LOWDOWN_HOME/node.json` (SPEC §3.5): its format is defined here,
//! as functions of their inputs; hosts read and write the file (mode 0600, atomically) and
//! bring the randomness and the clock.

use serde::{Deserialize, Serialize};

/// The file's name under `LOWDOWN_HOME`.
pub const FILE_NAME: &str = "node.json";

/// One node's identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeIdentity {
    /// `ld_` and 12 lowercase hex digits.
    pub node_id: String,
    /// When it was created (ISO-8601, from the host's clock).
    pub created_at: String,
}

/// The identity a `node.json` holds, or `None` when its text is not one (not JSON, a
/// malformed id, no creation time): the host then makes a new one and replaces the file.
pub fn parse(text: &str) -> Option<NodeIdentity> {
    let id: NodeIdentity = serde_json::from_str(text).ok()?;
    is_node_id(&id.node_id).then_some(id)
}

/// Whether `id` is a node id this host would write: `ld_` and 12 lowercase hex digits.
pub fn is_node_id(id: &str) -> bool {
    id.strip_prefix("ld_").is_some_and(|hex| {
        hex.len() == 12 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// A new identity from six random bytes and the host's clock.
pub fn new_identity(random: [u8; 6], now_iso: &str) -> NodeIdentity {
    NodeIdentity {
        node_id: format!("ld_{}", hex::encode(random)),
        created_at: now_iso.to_owned(),
    }
}

/// A new identity from 12 hex digits of randomness (how hosts pass random bytes across a
/// binding) and the host's clock; `None` when `random_hex` is not 12 hex digits.
pub fn new_identity_hex(random_hex: &str, now_iso: &str) -> Option<NodeIdentity> {
    let bytes = hex::decode(random_hex).ok()?;
    let random: [u8; 6] = bytes.try_into().ok()?;
    Some(new_identity(random, now_iso))
}

/// The text of `node.json` for `id`.
pub fn format(id: &NodeIdentity) -> String {
    // The struct's field order (node_id first), as every host has always written it.
    serde_json::to_string(id).unwrap_or_default() + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_identity_reads_back_and_corrupt_ones_do_not() {
        let id = new_identity([0xab, 0, 1, 2, 3, 0xff], "2026-12-01T00:00:00.000Z");
        assert_eq!(id.node_id, "ld_ab00010203ff");
        assert_eq!(parse(&format(&id)), Some(id));
        for bad in [
            "",
            "{not json",
            "[]",
            r#"{"node_id":"ld_XYZ","created_at":"x"}"#,
            r#"{"node_id":"ld_ab00010203ff"}"#,
            r#"{"node_id":"ld_AB00010203FF","created_at":"x"}"#,
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }
}
