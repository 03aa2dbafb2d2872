//! The node identity file `LOWDOWN_HOME/node.json` (SPEC §3.5): its format is defined here,
//! as functions of their inputs, and how a host loads it is the plan [`Load`]; hosts do the
//! file IO it asks for and bring the randomness and the clock.

use serde::{Deserialize, Serialize};

pub use crate::files::{Outcome, Step};

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

#[derive(Debug)]
enum LoadAt {
    Reading,
    Writing,
    Linking,
    Rereading,
    Replacing,
    Cleaning(Step),
    Over,
}

/// How a host loads `node.json`, as a sans-IO plan (see [`crate::files`]): read it; an
/// identity in it is this node's. Otherwise the fresh identity is written to a temporary
/// file and put in place: when there was no file, by creating it exclusively (a link), so
/// that two hosts starting at once agree on one id (when the link finds a file, the one in it
/// wins, unless it is no identity either: then it is replaced); when the file was corrupt or
/// unreadable, by replacing it. The temporary file never stays; an IO error that leaves no
/// identity ends the plan with [`Step::Failed`].
#[derive(Debug)]
pub struct Load {
    fresh: NodeIdentity,
    tmp: String,
    missing: bool,
    at: LoadAt,
}

impl Load {
    /// A plan that makes `fresh` this node's identity if `node.json` holds none; `pid` and
    /// `token` (random) name the temporary file.
    pub fn new(fresh: NodeIdentity, pid: u32, token: &str) -> Load {
        Load {
            fresh,
            tmp: format!("{FILE_NAME}.{pid}.{token}.tmp"),
            missing: false,
            at: LoadAt::Reading,
        }
    }

    /// The first step: read `node.json`.
    pub fn start(&mut self) -> Step {
        self.at = LoadAt::Reading;
        read()
    }

    /// What the last step did; the next step.
    pub fn feed(&mut self, outcome: Outcome) -> Step {
        let found = match &outcome {
            Outcome::Text(t) => parse(t),
            _ => None,
        };
        match (std::mem::replace(&mut self.at, LoadAt::Over), outcome) {
            (LoadAt::Reading, outcome) => match found {
                Some(id) => identity(id, false),
                None => {
                    self.missing = outcome == Outcome::Missing;
                    self.at = LoadAt::Writing;
                    Step::Write {
                        name: self.tmp.clone(),
                        text: format(&self.fresh),
                    }
                }
            },
            (LoadAt::Writing, Outcome::Ok) if self.missing => {
                self.at = LoadAt::Linking;
                Step::Link {
                    from: self.tmp.clone(),
                    to: FILE_NAME.to_owned(),
                }
            }
            (LoadAt::Writing, Outcome::Ok) => self.replace(),
            (LoadAt::Linking, Outcome::Ok) => self.clean(identity(self.fresh.clone(), true)),
            (LoadAt::Linking, Outcome::Exists) => {
                self.at = LoadAt::Rereading;
                read()
            }
            (LoadAt::Rereading, _) => match found {
                Some(winner) => self.clean(identity(winner, false)),
                None => self.replace(),
            },
            (LoadAt::Replacing, Outcome::Ok) => identity(self.fresh.clone(), true),
            (LoadAt::Writing | LoadAt::Linking | LoadAt::Replacing, _) => self.clean(Step::Failed),
            (LoadAt::Cleaning(then), _) => then,
            (LoadAt::Over, _) => Step::Done,
        }
    }

    fn replace(&mut self) -> Step {
        self.at = LoadAt::Replacing;
        Step::Rename {
            from: self.tmp.clone(),
            to: FILE_NAME.to_owned(),
        }
    }

    fn clean(&mut self, then: Step) -> Step {
        self.at = LoadAt::Cleaning(then);
        Step::Delete {
            name: self.tmp.clone(),
        }
    }
}

fn read() -> Step {
    Step::Read {
        name: FILE_NAME.to_owned(),
    }
}

fn identity(id: NodeIdentity, created: bool) -> Step {
    Step::Identity {
        node_id: id.node_id,
        created_at: id.created_at,
        created,
    }
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
