//! What a host found out about a command line by reading files, handed to the core.
//!
//! The core reads no files, so a `node_modules/.bin/mcp-server-everything` link or a
//! virtualenv's `bin/mcp-server-time` script is only a file name to it. A host that can
//! look (the proxy, `wrap`, the editor extension, `prowl`) resolves such words and passes
//! what it found, so the same server gets the same label however it is launched (SPEC §3.2
//! "One server, one label").

use serde::{Deserialize, Serialize};

/// The registry a package is published in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Registry {
    /// npm: the `name` of the `package.json` the file belongs to.
    Npm,
    /// PyPI: the distribution that installed the script (its `*.dist-info`).
    Pypi,
}

/// One word of the command line that names a file belonging to a published package.
///
/// Hosts fill it for words that are files they can resolve:
/// - a `node_modules/.bin/X` link, or any script inside an npm package (`node
///   /path/node_modules/@scope/pkg/dist/index.js`): [`Registry::Npm`] with the `name` of
///   the nearest `package.json` above the link's target;
/// - a console script of a virtualenv or user install (`.venv/bin/mcp-server-time`,
///   `Scripts\\mcp-server-time.exe`): [`Registry::Pypi`] with the `Name` of the
///   `*.dist-info/METADATA` whose `entry_points.txt` (or `RECORD`) lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageFact {
    /// The word exactly as it appears in `argv` (the command or an argument).
    pub arg: String,
    /// Where the package is published.
    pub registry: Registry,
    /// The package's name as published (`@modelcontextprotocol/server-everything`,
    /// `mcp-server-time`); it is checked and normalised like any name on a command line.
    pub name: String,
}

/// Everything a host resolved about one command line. All fields may be left empty: the
/// label is then worked out from the words alone.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LabelFacts {
    /// Words of `argv` that belong to a package. @default empty
    pub packages: Vec<PackageFact>,
    /// The absolute working directory the command runs in, when the host knows it. It
    /// names the project of a relative file (`node index.js` in `/srv/weather` is
    /// `weather/index`) and of `go run .` or `cargo run`. @default none
    pub cwd: Option<String>,
}

impl LabelFacts {
    /// The package `word` belongs to, if the host found one.
    pub(super) fn package(&self, word: &str) -> Option<&PackageFact> {
        self.packages.iter().find(|f| f.arg == word)
    }
}
