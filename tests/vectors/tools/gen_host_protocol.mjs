// node_identity.json and settings.json: the host protocol every host follows (SPEC §2, §3.5),
// expectations written here by hand from the SPEC.
import { writeVectors } from "./common.mjs";

const ID = { node_id: "ld_ab00010203ff", created_at: "2026-12-01T00:00:00.000Z" };
const TEXT = `{"node_id":"ld_ab00010203ff","created_at":"2026-12-01T00:00:00.000Z"}\n`;
writeVectors("node_identity.json", "node_identity", "LOWDOWN_HOME/node.json (core identity): input.op is parse(text) → {node_id, created_at} | null, format(node_id, created_at) → the file's text, or new(random_hex: 12 hex digits, now_iso) → {node_id, created_at}.", [
  { name: "a written identity reads back", input: { op: "parse", text: TEXT }, expected: ID },
  { name: "extra keys and whitespace are fine", input: { op: "parse", text: ` {"created_at":"x","node_id":"ld_000000000000","v":2} ` }, expected: { node_id: "ld_000000000000", created_at: "x" } },
  { name: "not JSON", input: { op: "parse", text: "{not json" }, expected: null },
  { name: "empty file", input: { op: "parse", text: "" }, expected: null },
  { name: "an array", input: { op: "parse", text: "[]" }, expected: null },
  { name: "a malformed id", input: { op: "parse", text: '{"node_id":"ld_XYZ","created_at":"x"}' }, expected: null },
  { name: "upper-case hex is not an id this host writes", input: { op: "parse", text: '{"node_id":"ld_AB00010203FF","created_at":"x"}' }, expected: null },
  { name: "no creation time", input: { op: "parse", text: '{"node_id":"ld_ab00010203ff"}' }, expected: null },
  { name: "the file's text", input: { op: "format", node_id: ID.node_id, created_at: ID.created_at }, expected: TEXT },
  { name: "a new identity from six random bytes", input: { op: "new", random_hex: "ab00010203ff", now_iso: ID.created_at }, expected: ID },
]);

const defaults = { api_url: "http://127.0.0.1:7077", home: "/home/ann/.lowdown", record: true, telemetry: true, debug: false, local_node: true, autostart: true };
const configured = { local_node: false, autostart: false };
writeVectors("settings.json", "settings", "settings from_env(env, user_home, client proxy|telemetry) → {api_url, home, record, telemetry, debug, local_node, autostart} (core settings).", [
  { name: "nothing set", input: { env: {}, user_home: "/home/ann", client: "proxy" }, expected: defaults },
  { name: "the proxy reads LOWDOWN_API_URL, without a trailing slash", input: { env: { LOWDOWN_API_URL: "https://lowdown.example/", PROWL_API_URL: "https://p.example" }, user_home: "/home/ann", client: "proxy" }, expected: { ...defaults, ...configured, api_url: "https://lowdown.example" } },
  { name: "telemetry clients read PROWL_API_URL first", input: { env: { LOWDOWN_API_URL: "https://l.example", PROWL_API_URL: "https://p.example//" }, user_home: "/home/ann", client: "telemetry" }, expected: { ...defaults, ...configured, api_url: "https://p.example" } },
  { name: "telemetry clients fall back to LOWDOWN_API_URL", input: { env: { LOWDOWN_API_URL: "https://l.example" }, user_home: "/home/ann", client: "telemetry" }, expected: { ...defaults, ...configured, api_url: "https://l.example" } },
  { name: "an empty variable is unset", input: { env: { LOWDOWN_API_URL: "", LOWDOWN_HOME: "" }, user_home: "/home/ann", client: "proxy" }, expected: defaults },
  { name: "LOWDOWN_HOME wins", input: { env: { LOWDOWN_HOME: "/srv/lowdown" }, user_home: "/home/ann", client: "proxy" }, expected: { ...defaults, home: "/srv/lowdown" } },
  { name: "a Windows home keeps its separator", input: { env: {}, user_home: "C:\\Users\\ann\\", client: "proxy" }, expected: { ...defaults, home: "C:\\Users\\ann\\.lowdown" } },
  { name: "recording and telemetry off, any spelling", input: { env: { LOWDOWN_RECORD: "0", PROWL_TELEMETRY: " Off " }, user_home: "/h", client: "proxy" }, expected: { ...defaults, home: "/h/.lowdown", record: false, telemetry: false } },
  { name: "anything else leaves them on", input: { env: { LOWDOWN_RECORD: "1", PROWL_TELEMETRY: "maybe" }, user_home: "/h", client: "telemetry" }, expected: { ...defaults, home: "/h/.lowdown" } },
  { name: "debug only with 1", input: { env: { LOWDOWN_DEBUG: "1" }, user_home: "/h", client: "proxy" }, expected: { ...defaults, home: "/h/.lowdown", debug: true } },
  { name: "no local node is started with LOWDOWN_AUTOSTART=0, but one running is used", input: { env: { LOWDOWN_AUTOSTART: "0" }, user_home: "/h", client: "proxy" }, expected: { ...defaults, home: "/h/.lowdown", autostart: false } },
  { name: "PROWL_API_URL configures a telemetry client, not the proxy", input: { env: { PROWL_API_URL: "https://p.example" }, user_home: "/h", client: "proxy" }, expected: { ...defaults, home: "/h/.lowdown" } },
]);
