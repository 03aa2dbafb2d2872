//! Defaults shared by every host (SPEC §2). Each host re-exports these; none redefines them.

/// Default Lowdown API base URL (`LOWDOWN_API_URL`).
pub const API_URL: &str = "http://127.0.0.1:7077";
/// Environment variable naming the API base URL.
pub const API_URL_ENV: &str = "LOWDOWN_API_URL";
/// Environment variable read first by the Python and WASM telemetry clients.
pub const PROWL_API_URL_ENV: &str = "PROWL_API_URL";
/// Environment variable naming the state directory (default `~/.lowdown`).
pub const HOME_ENV: &str = "LOWDOWN_HOME";
/// Default state directory, relative to the user's home directory.
pub const HOME_DIR_NAME: &str = ".lowdown";
/// Header carrying the node id on queries.
pub const NODE_ID_HEADER: &str = "x-lowdown-node-id";
/// Header carrying an agent key on telemetry.
pub const AGENT_KEY_HEADER: &str = "x-agent-key";
