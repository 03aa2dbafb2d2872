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

// LOWDOWN_HOME/config.json, what `lowdown-proxy config` stores (core stored).
const STORED = '{\n  "api_url": "https://team.example/lowdown"\n}\n';
writeVectors("stored_settings.json", "stored_settings", "LOWDOWN_HOME/config.json (core stored): input.op is get(text|null, key) or set(text|null, key, value|null: unset) → the value | null, the file's new text; error unknown_setting, invalid_value (not an http(s) base URL without credentials) or not_settings (the file is not a JSON object).", [
  { name: "no file, nothing stored", input: { op: "get", text: null, key: "api-url" }, expected: null },
  { name: "an empty file is no file", input: { op: "get", text: " \n", key: "api-url" }, expected: null },
  { name: "a stored URL reads back", input: { op: "get", text: STORED, key: "api-url" }, expected: "https://team.example/lowdown" },
  { name: "set into no file, trailing slash dropped", input: { op: "set", text: null, key: "api-url", value: "https://team.example/lowdown/" }, expected: STORED },
  { name: "set keeps keys it does not know (keys in order)", input: { op: "set", text: '{"later":1}', key: "api-url", value: "http://10.0.0.5:7077" }, expected: '{\n  "api_url": "http://10.0.0.5:7077",\n  "later": 1\n}\n' },
  { name: "unset", input: { op: "set", text: STORED, key: "api-url", value: null }, expected: "{}\n" },
  { name: "an unknown key", input: { op: "get", text: null, key: "api_url" }, error: "unknown_setting" },
  { name: "not a URL", input: { op: "set", text: null, key: "api-url", value: "lowdown.example" }, error: "invalid_value" },
  { name: "credentials are never stored", input: { op: "set", text: null, key: "api-url", value: "https://me:secret@team.example" }, error: "invalid_value" },
  { name: "a query is not a base URL", input: { op: "set", text: null, key: "api-url", value: "https://team.example/?x=1" }, error: "invalid_value" },
  { name: "no host", input: { op: "set", text: null, key: "api-url", value: "https://:7077" }, error: "invalid_value" },
  { name: "a corrupt file is reported, not overwritten", input: { op: "set", text: "[1]", key: "api-url", value: "https://team.example" }, error: "not_settings" },
  { name: "a hand-edited value is checked too", input: { op: "get", text: '{"api_url":"file:///etc"}', key: "api-url" }, error: "invalid_value" },
]);

const NODE = '{"url":"http://127.0.0.1:7081","pid":7,"started_at":"2026-12-07T12:00:00Z"}\n';
const local = { ...defaults, home: "/h/.lowdown" };
writeVectors("destination.json", "destination", "core stored::destination(settings, config.json text|null, local-node.json text|null) → {url, via: environment|stored|local_node|default, may_start, problem?}: where a host delivers and queries, whether it may start the local node when nothing answers there, and why an environment URL cannot be used.", [
  { name: "nothing anywhere: the default address, and start a node", input: { settings: local, stored: null, announcement: null }, expected: { url: "http://127.0.0.1:7077", via: "default", may_start: true } },
  { name: "the running node where it announces itself", input: { settings: local, stored: null, announcement: NODE }, expected: { url: "http://127.0.0.1:7081", via: "local_node", may_start: true } },
  { name: "a stored deployment wins over the node, which is then never started", input: { settings: local, stored: STORED, announcement: NODE }, expected: { url: "https://team.example/lowdown", via: "stored", may_start: false } },
  { name: "the environment wins over the stored URL", input: { settings: { ...local, ...configured, api_url: "https://env.example" }, stored: STORED, announcement: NODE }, expected: { url: "https://env.example", via: "environment", may_start: false } },
  { name: "LOWDOWN_AUTOSTART=0: a running node is used, none started", input: { settings: { ...local, autostart: false }, stored: null, announcement: NODE }, expected: { url: "http://127.0.0.1:7081", via: "local_node", may_start: false } },
  { name: "an announcement naming another host is no node", input: { settings: local, stored: null, announcement: '{"url":"http://evil.example:80","pid":7,"started_at":"x"}' }, expected: { url: "http://127.0.0.1:7077", via: "default", may_start: true } },
  { name: "a corrupt stored file does not stop records reaching the node", input: { settings: local, stored: "{oops", announcement: NODE }, expected: { url: "http://127.0.0.1:7081", via: "local_node", may_start: true } },
  { name: "an environment URL that is not one is said, and used nowhere else", input: { settings: { ...local, ...configured, api_url: "notaurl" }, stored: STORED, announcement: NODE }, expected: { url: "notaurl", via: "environment", may_start: false, problem: 'the API URL "notaurl" must start with http:// or https://' } },
  { name: "credentials in the environment URL are refused too", input: { settings: { ...local, ...configured, api_url: "https://me:pw@x.example" }, stored: null, announcement: null }, expected: { url: "https://me:pw@x.example", via: "environment", may_start: false, problem: 'the API URL "https://me:pw@x.example" must not carry credentials' } },
  { name: "a stored URL that is not allowed counts as none", input: { settings: local, stored: '{"api_url":"https://u:p@x.example"}', announcement: null }, expected: { url: "http://127.0.0.1:7077", via: "default", may_start: true } },
]);
