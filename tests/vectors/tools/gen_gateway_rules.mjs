// Generates what the sampling gateway carries (SPEC §10, issue "the gateway is an open
// proxy"): gateway_route.json (allow rules, modes, path refusals), gateway_request_headers.json
// (what a client sends the gateway) and gateway_forward_headers.json (what crosses the
// gateway both ways). Every expected value is computed here, in JavaScript, from the rules'
// text: regular expressions over the path as sent, and the two header allowlists.
import { writeVectors, assertEq } from "./common.mjs";

// ---- paths and rules ----------------------------------------------------------------------
/** The first problem of a path, scanning left to right for characters, then segments. */
function pathProblem(p) {
  if (!p.startsWith("/")) return "not_absolute";
  const bad = p.search(/[\\# \u0000-\u001f\u007f-\uffff]/u);
  const enc = p.search(/%(?![0-9a-fA-F]{2})|%(2e|2f|5c|25)/i);
  const first = [bad, enc].filter((i) => i >= 0).sort((a, b) => a - b)[0];
  if (first !== undefined) return first === bad ? "bad_char" : "encoded";
  if (p.split("/").some((s) => s === "." || s === "..")) return "dot_segment";
  if (p.includes("//")) return "empty_segment";
  return null;
}

function parseRule(entry) {
  const m = /^([A-Z]{1,16}) (\/[^?]*)$/.exec(entry);
  if (!m || pathProblem(m[2])) return null;
  return { method: m[1], prefix: m[2].replace(/\/+$/, "") || "/" };
}

function route({ allow = [], mode = null, credential_header = null, method, target }) {
  if (mode !== null && mode !== "inject" && mode !== "passthrough") return { error: "bad_mode" };
  if (mode === "passthrough" && !credential_header) return { error: "missing_header" };
  const rules = allow.map(parseRule);
  if (rules.includes(null)) return { error: "bad_allow_rule" };
  const path = target.split("?")[0] || "/";
  const why = pathProblem(path);
  if (why) return { expected: { verdict: "bad_path", why } };
  const hit = rules.some((r) => r.method === method && (r.prefix === "/" || path === r.prefix || path.startsWith(r.prefix + "/")));
  return { expected: { verdict: hit ? "allowed" : "not_allowed" } };
}

const SEARCH = ["GET /v1/search", "POST /v1/embed"];
const routeCases = [
  ["prefix itself", SEARCH, "GET", "/v1/search"],
  ["under the prefix", SEARCH, "GET", "/v1/search/x"],
  ["prefix with a query", SEARCH, "GET", "/v1/search?q=stripe"],
  ["prefix continued without a slash", SEARCH, "GET", "/v1/searchy"],
  ["another method on an allowed path", SEARCH, "POST", "/v1/search"],
  ["lower-case method", SEARCH, "get", "/v1/search"],
  ["second rule", SEARCH, "POST", "/v1/embed"],
  ["the issue's customers read", SEARCH, "GET", "/v1/customers"],
  ["the issue's refund", SEARCH, "POST", "/v1/refunds"],
  ["no allow key: nothing", [], "GET", "/v1/search"],
  ["root prefix allows every path", ["GET /"], "GET", "/anything/at/all"],
  ["root prefix, empty path", ["GET /"], "GET", ""],
  ["trailing slash in the rule", ["GET /v1/"], "GET", "/v1/x"],
  ["trailing slash in the path", SEARCH, "GET", "/v1/search/"],
  ["backslash dot-dot", SEARCH, "GET", "/v1/search/\\..\\..\\admin/secret"],
  ["the issue's backslash escape", ["GET /"], "GET", "/\\..\\..\\admin/secret"],
  ["encoded backslash", SEARCH, "GET", "/v1/search/%5c..%5cadmin"],
  ["encoded backslash, upper case", SEARCH, "GET", "/v1/search/%5C"],
  ["encoded dots", SEARCH, "GET", "/v1/search/%2e%2e/admin"],
  ["the issue's encoded-dot escape", ["GET /"], "GET", "/\\%2e%2e\\admin"],
  ["encoded dots, upper case", SEARCH, "GET", "/v1/search/%2E%2E/admin"],
  ["one encoded dot", SEARCH, "GET", "/v1/search/.%2e/admin"],
  ["encoded slash", SEARCH, "GET", "/v1/search%2f..%2fadmin"],
  ["double encoding", SEARCH, "GET", "/v1/search/%252e%252e/admin"],
  ["malformed percent", SEARCH, "GET", "/v1/search/%zz"],
  ["percent at the end", SEARCH, "GET", "/v1/search/%"],
  ["other encodings are fine", SEARCH, "GET", "/v1/search/caf%C3%A9"],
  ["dot-dot segment", SEARCH, "GET", "/v1/search/../admin"],
  ["dot segment", SEARCH, "GET", "/v1/search/./x"],
  ["dots inside a name are fine", SEARCH, "GET", "/v1/search/a..b"],
  ["double slash", SEARCH, "GET", "/v1/search//admin"],
  ["leading double slash", ["GET /"], "GET", "//evil.example/x"],
  ["not absolute", SEARCH, "GET", "v1/search"],
  ["space", SEARCH, "GET", "/v1/search x"],
  ["control character", SEARCH, "GET", "/v1/search\u0001"],
  ["non-ASCII", SEARCH, "GET", "/v1/search/café"],
  ["fragment", SEARCH, "GET", "/v1/search#x"],
  ["dots in the query are the vendor's", SEARCH, "GET", "/v1/search?q=../..%2e"],
  ["passthrough mode", SEARCH, "GET", "/v1/search", "passthrough", "Authorization"],
  ["inject mode named", SEARCH, "GET", "/v1/search", "inject", "X-Api-Key"],
  ["rule without a space", ["GET/v1"], "GET", "/v1"],
  ["rule with a lower-case method", ["get /v1"], "GET", "/v1"],
  ["rule with two spaces", ["GET  /v1"], "GET", "/v1"],
  ["rule not starting with a slash", ["GET v1"], "GET", "/v1"],
  ["rule with dot-dot", ["GET /v1/../admin"], "GET", "/v1"],
  ["rule with a query", ["GET /v1?x=1"], "GET", "/v1"],
  ["rule with an encoded dot", ["GET /v1/%2e%2e"], "GET", "/v1"],
  ["rule with a backslash", ["GET /v1\\x"], "GET", "/v1"],
  ["unknown mode", SEARCH, "GET", "/v1/search", "proxy", "Authorization"],
  ["passthrough without a header", SEARCH, "GET", "/v1/search", "passthrough", null],
].map(([name, allow, method, target, mode = null, credential_header = null]) => {
  const input = { allow, method, target };
  if (mode !== null) input.mode = mode;
  if (credential_header !== null) input.credential_header = credential_header;
  return { name, input, ...route(input) };
});
assertEq(route({ allow: SEARCH, method: "GET", target: "/v1/searchy" }).expected.verdict, "not_allowed", "segment boundary");
writeVectors("gateway_route.json", "gateway_route",
  "GatewayRules::new(allow, mode, credential_header)?.check(method, target): {verdict: allowed|not_allowed|bad_path, why?}; errors bad_allow_rule, bad_mode, missing_header.",
  routeCases);

// ---- headers ---------------------------------------------------------------------------------
const REQUEST = ["accept", "accept-encoding", "content-encoding", "content-length", "content-type", "idempotency-key", "if-match", "if-none-match", "user-agent"];
const RESPONSE = ["cache-control", "content-encoding", "content-length", "content-type", "etag", "last-modified", "request-id", "retry-after", "x-request-id"];
const listedOf = (lines) => lines.flatMap((l) => l.split(",")).map((t) => t.trim().toLowerCase()).filter(Boolean);
const keepRequest = (name, listed, passthrough) => (REQUEST.includes(name) || name === passthrough) && !listed.includes(name);
const keepResponse = (name, listed) => (RESPONSE.includes(name) || /^(x-)?ratelimit-/.test(name)) && !listed.includes(name);

const USER = ["Accept", "Content-Type", "Content-Length", "User-Agent", "Idempotency-Key", "Authorization", "Cookie",
  "Proxy-Authorization", "X-Api-Key", "X-Agent-Key", "X-Prowl-Salt-Id", "Forwarded", "X-Forwarded-For", "X-Real-IP",
  "X-Client-IP", "Client-IP", "Fastly-Client-IP", "CF-Connecting-IP", "True-Client-IP", "X-Lowdown-Node-Id",
  "traceparent", "tracestate", "baggage", "Connection", "Keep-Alive", "TE", "Upgrade", "Host", "X-Custom", "Transfer-Encoding"];
const requestCases = [
  ["inject service with no credential header", "inject", null],
  ["inject service keeps its Authorization credential behind", "inject", "Authorization"],
  ["inject service keeps its custom credential header behind", "inject", "X-Api-Key"],
  ["passthrough service sends the agent's Authorization", "passthrough", "Authorization"],
  ["passthrough service sends the agent's custom header", "passthrough", "x-api-key"],
].map(([name, mode, credential_header]) => {
  const pass = mode === "passthrough" ? credential_header.toLowerCase() : null;
  return {
    name,
    input: { allow: ["GET /"], mode, credential_header, names: USER },
    // Transfer-Encoding frames the body to the gateway, which frames it again.
    expected: USER.filter((n) => n.toLowerCase() === "transfer-encoding" || keepRequest(n.toLowerCase(), [], pass)),
  };
});
writeVectors("gateway_request_headers.json", "gateway_request_headers",
  "GatewayRules::new(allow, mode, credential_header)?.keep_request_headers(names): the request headers a client sends the gateway, as given.",
  requestCases);

const VENDOR = ["Content-Type", "Content-Length", "Retry-After", "X-RateLimit-Remaining", "RateLimit-Reset", "Request-Id",
  "ETag", "Set-Cookie", "X-Vendor", "Location", "Connection", "Transfer-Encoding", "Strict-Transport-Security", "X-Debug-Token"];
const forwardCases = [
  ["request: allowlist only", "request", [], null, USER],
  ["request: one Connection line", "request", ["close, Idempotency-Key"], null, USER],
  ["request: a second Connection line counts too", "request", ["close", "Content-Type , User-Agent"], null, USER],
  ["request: passthrough credential crosses", "request", [], "authorization", USER],
  ["request: passthrough credential named in Connection stays", "request", ["authorization"], "authorization", USER],
  ["response: allowlist and rate-limit prefixes", "response", [], null, VENDOR],
  ["response: Connection lines remove allowlisted names", "response", ["keep-alive", "ETag,Retry-After"], null, VENDOR],
].map(([name, direction, connection, passthrough, names]) => {
  const listed = listedOf(connection);
  const keep = direction === "request" ? (n) => keepRequest(n, listed, passthrough) : (n) => keepResponse(n, listed);
  const input = { direction, connection, names };
  if (passthrough !== null) input.passthrough = passthrough;
  return { name, input, expected: names.filter((n) => keep(n.toLowerCase())) };
});
writeVectors("gateway_forward_headers.json", "gateway_forward_headers",
  "the names among `names` that forward_request_header / forward_response_header (direction) keep, with connection_listed(connection) and the passthrough credential header.",
  forwardCases);

// ---- PROWL_GATEWAY_SERVICES --------------------------------------------------------------------
const selected = (filter, slug, id) => {
  if (filter === null || filter.trim() === "") return true;
  return filter.split(",").map((t) => t.trim()).filter(Boolean).some((t) => t === slug || t === id);
};
const selectCases = [
  ["unset: every service", null, "search", "svc_search"],
  ["blank: every service", "  ", "search", "svc_search"],
  ["listed by slug", "search,maps", "search", "svc_search"],
  ["listed by service id", "svc_maps, svc_search", "search", "svc_search"],
  ["spaces around names", " maps , search ", "search", "svc_search"],
  ["not listed", "maps", "search", "svc_search"],
  ["a prefix is not the name", "sear", "search", "svc_search"],
  ["names are exact", "Search", "search", "svc_search"],
  ["only commas: nothing", ",,", "search", "svc_search"],
  ["none: nothing", "none", "search", "svc_search"],
].map(([name, filter, slug, service_id]) => ({ name, input: { filter, slug, service_id }, expected: selected(filter, slug, service_id) }));
writeVectors("gateway_service_selected.json", "gateway_service_selected",
  "service_selected(filter = PROWL_GATEWAY_SERVICES or null, slug, service_id): whether a client routes this service.",
  selectCases);
