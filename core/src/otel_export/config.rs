//! Whether the proxy exports OpenTelemetry, and where each signal goes, from the host's
//! environment (a lookup, as [`crate::settings`] takes it).
//!
//! Export is on only with `LOWDOWN_OTEL=1` (or `true`/`on`/`yes`), so a user's existing OTel
//! settings never turn it on by surprise, and off with `OTEL_SDK_DISABLED=true`. The rest is the
//! OTel specification's exporter configuration:
//! - `OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT` is used as is; else
//!   `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` or `/v1/metrics` appended to its path; else
//!   `http://localhost:4318` with those paths. Only `http` and `https` URLs.
//! - `OTEL_EXPORTER_OTLP[_SIGNAL]_PROTOCOL`: `http/protobuf` (default) or `http/json`; `grpc`
//!   (or anything else) turns that signal off, as it is not spoken here.
//! - `OTEL_EXPORTER_OTLP[_SIGNAL]_HEADERS`: `k=v,k2=v2`, values percent-decoded, the signal's
//!   own list overriding the generic one key by key.
//! - `OTEL_EXPORTER_OTLP[_SIGNAL]_TIMEOUT`: milliseconds per request (default 10 000).
//! - `OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER`: a list without `otlp` (e.g. `none`)
//!   turns that signal off.
//! - `OTEL_SERVICE_NAME`, else `service.name` of `OTEL_RESOURCE_ATTRIBUTES`, else
//!   `lowdown-proxy`; `OTEL_RESOURCE_ATTRIBUTES` (`k=v,...`, percent-decoded) is the resource.

use serde::Serialize;

/// The Lowdown switch.
pub const SWITCH_ENV: &str = "LOWDOWN_OTEL";
/// Where OTLP/HTTP goes when no endpoint is set (the specification's default).
pub const DEFAULT_ENDPOINT: &str = "http://localhost:4318";
/// The specification's default request timeout.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;
/// `service.name` when neither `OTEL_SERVICE_NAME` nor the resource attributes name one.
pub const DEFAULT_SERVICE_NAME: &str = "lowdown-proxy";

/// OTLP/HTTP's two encodings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Protocol {
    /// `http/protobuf`: `application/x-protobuf`.
    #[serde(rename = "http/protobuf")]
    Protobuf,
    /// `http/json`: `application/json`.
    #[serde(rename = "http/json")]
    Json,
}

impl Protocol {
    /// The request's `content-type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Protocol::Protobuf => "application/x-protobuf",
            Protocol::Json => "application/json",
        }
    }
}

/// Where one signal goes and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SignalConfig {
    /// The full URL to `POST` to.
    pub url: String,
    /// The encoding.
    pub protocol: Protocol,
    /// Request headers: `content-type` first, then the configured ones.
    pub headers: Vec<(String, String)>,
    /// The longest one request may take.
    pub timeout_ms: u64,
}

/// Export's configuration; at least one signal is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ExportConfig {
    /// Spans, when on.
    pub traces: Option<SignalConfig>,
    /// The duration histogram, when on.
    pub metrics: Option<SignalConfig>,
    /// `service.name`.
    pub service_name: String,
    /// The other resource attributes (`OTEL_RESOURCE_ATTRIBUTES`, without `service.name`).
    pub resource: Vec<(String, String)>,
}

/// Export's configuration as a host reads it: `{"export": "on", traces, metrics,
/// service_name, resource}` or `{"export": "off", "reason": ...}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "export", rename_all = "snake_case")]
pub enum Decision {
    /// Export is on, as configured.
    On(ExportConfig),
    /// Export is off, and why (a sentence for `LOWDOWN_DEBUG`).
    Off {
        /// Why.
        reason: String,
    },
}

/// [`from_env`] as a [`Decision`].
pub fn decide(env: &dyn Fn(&str) -> Option<String>) -> Decision {
    match from_env(env) {
        Ok(c) => Decision::On(c),
        Err(reason) => Decision::Off { reason },
    }
}

/// Export's configuration from `env`, or why it is off (a sentence for `LOWDOWN_DEBUG`).
/// Empty variables count as unset.
pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Result<ExportConfig, String> {
    let get = |k: &str| {
        env(k)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let on = |k: &str| {
        get(k)
            .is_some_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "on" | "yes"))
    };
    if !on(SWITCH_ENV) {
        return Err(format!("{SWITCH_ENV} is not 1"));
    }
    if get("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return Err("OTEL_SDK_DISABLED=true".to_owned());
    }
    let mut why = Vec::new();
    let mut signal = |name: &str, path: &str| match signal_config(&get, name, path) {
        Ok(s) => Some(s),
        Err(e) => {
            why.push(e);
            None
        }
    };
    let traces = signal("TRACES", "v1/traces");
    let metrics = signal("METRICS", "v1/metrics");
    if traces.is_none() && metrics.is_none() {
        return Err(why.join("; "));
    }
    let mut resource = get("OTEL_RESOURCE_ATTRIBUTES")
        .map(|v| pairs(&v))
        .unwrap_or_default();
    let from_resource = resource
        .iter()
        .position(|(k, _)| k == "service.name")
        .map(|i| resource.remove(i).1);
    Ok(ExportConfig {
        traces,
        metrics,
        service_name: get("OTEL_SERVICE_NAME")
            .or(from_resource)
            .unwrap_or_else(|| DEFAULT_SERVICE_NAME.to_owned()),
        resource,
    })
}

/// One signal's configuration (`name`: `TRACES` or `METRICS`; `path`: appended to a generic
/// endpoint), or why it is off.
fn signal_config(
    get: &dyn Fn(&str) -> Option<String>,
    name: &str,
    path: &str,
) -> Result<SignalConfig, String> {
    let exporter_env = format!("OTEL_{name}_EXPORTER");
    if let Some(list) = get(&exporter_env) {
        if !list.split(',').any(|e| e.trim() == "otlp") {
            return Err(format!("{exporter_env}={list}"));
        }
    }
    let specific = |what: &str| get(&format!("OTEL_EXPORTER_OTLP_{name}_{what}"));
    let generic = |what: &str| get(&format!("OTEL_EXPORTER_OTLP_{what}"));
    let protocol = match specific("PROTOCOL")
        .or_else(|| generic("PROTOCOL"))
        .as_deref()
    {
        None | Some("http/protobuf") => Protocol::Protobuf,
        Some("http/json") => Protocol::Json,
        Some(other) => return Err(format!("{name}: protocol {other} is not supported")),
    };
    let url = match specific("ENDPOINT") {
        Some(url) => url,
        None => {
            let base = generic("ENDPOINT").unwrap_or_else(|| DEFAULT_ENDPOINT.to_owned());
            format!("{}/{path}", base.trim_end_matches('/'))
        }
    };
    let scheme_ok = ["http://", "https://"]
        .iter()
        .any(|s| url.len() > s.len() && url[..s.len()].eq_ignore_ascii_case(s));
    if !scheme_ok {
        return Err(format!("{name}: the endpoint is not an http(s) URL"));
    }
    let mut headers = vec![(
        "content-type".to_owned(),
        protocol.content_type().to_owned(),
    )];
    for (k, v) in generic("HEADERS")
        .map(|h| pairs(&h))
        .unwrap_or_default()
        .into_iter()
        .chain(specific("HEADERS").map(|h| pairs(&h)).unwrap_or_default())
    {
        match headers.iter_mut().find(|(h, _)| h.eq_ignore_ascii_case(&k)) {
            Some(slot) => slot.1 = v,
            None => headers.push((k, v)),
        }
    }
    let timeout_ms = specific("TIMEOUT")
        .or_else(|| generic("TIMEOUT"))
        .and_then(|t| t.parse::<u64>().ok())
        .unwrap_or(DEFAULT_TIMEOUT_MS);
    Ok(SignalConfig {
        url,
        protocol,
        headers,
        timeout_ms,
    })
}

/// A `k=v,k2=v2` list (W3C Baggage-like, as the OTel specification reads headers and
/// resource attributes): spaces around items trimmed, values percent-decoded, items without
/// `=` or with an empty key skipped. A later key wins.
pub fn pairs(list: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for item in list.split(',') {
        let Some((k, v)) = item.split_once('=') else {
            continue;
        };
        let (k, v) = (percent_decode(k.trim()), percent_decode(v.trim()));
        if k.is_empty() {
            continue;
        }
        match out.iter_mut().find(|(have, _)| *have == k) {
            Some(slot) => slot.1 = v,
            None => out.push((k, v)),
        }
    }
    out
}

/// `%XX` sequences decoded (invalid ones kept as they are; invalid UTF-8 replaced).
fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        }
    }

    #[test]
    fn off_without_the_lowdown_switch_whatever_otel_says() {
        let otel = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")];
        assert!(from_env(&env(&otel)).is_err());
        assert!(from_env(&env(&[("LOWDOWN_OTEL", "0")])).is_err());
        assert!(from_env(&env(&[
            ("LOWDOWN_OTEL", "1"),
            ("OTEL_SDK_DISABLED", "TRUE")
        ]))
        .is_err());
    }

    #[test]
    fn defaults_follow_the_specification() {
        let c = from_env(&env(&[("LOWDOWN_OTEL", "1")])).unwrap();
        let t = c.traces.unwrap();
        assert_eq!(t.url, "http://localhost:4318/v1/traces");
        assert_eq!(t.protocol, Protocol::Protobuf);
        assert_eq!(t.timeout_ms, 10_000);
        assert_eq!(
            t.headers,
            vec![("content-type".into(), "application/x-protobuf".into())]
        );
        assert_eq!(c.metrics.unwrap().url, "http://localhost:4318/v1/metrics");
        assert_eq!(c.service_name, "lowdown-proxy");
    }

    #[test]
    fn generic_endpoints_get_the_path_signal_ones_are_used_as_is() {
        let c = from_env(&env(&[
            ("LOWDOWN_OTEL", "true"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://c.example/otel/"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "http://m.example:9/custom",
            ),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
            ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf"),
            ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "250"),
        ]))
        .unwrap();
        let (t, m) = (c.traces.unwrap(), c.metrics.unwrap());
        assert_eq!(t.url, "https://c.example/otel/v1/traces");
        assert_eq!((t.protocol, t.timeout_ms), (Protocol::Json, 250));
        assert_eq!(t.headers[0].1, "application/json");
        assert_eq!(m.url, "http://m.example:9/custom");
        assert_eq!(m.protocol, Protocol::Protobuf);
    }

    #[test]
    fn headers_are_decoded_and_the_signal_list_wins() {
        let c = from_env(&env(&[
            ("LOWDOWN_OTEL", "1"),
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                " Authorization = Basic%20abc%3D ,x-team=a,broken, =v",
            ),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "x-team=b"),
        ]))
        .unwrap();
        let t = c.traces.unwrap();
        assert_eq!(
            t.headers[1..],
            [
                ("Authorization".into(), "Basic abc=".into()),
                ("x-team".into(), "b".into())
            ]
        );
        assert_eq!(c.metrics.unwrap().headers[2].1, "a");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }

    #[test]
    fn unsupported_or_disabled_signals_are_off() {
        let c = from_env(&env(&[
            ("LOWDOWN_OTEL", "1"),
            ("OTEL_METRICS_EXPORTER", "none"),
            ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "grpc"),
        ]));
        assert!(c.unwrap_err().contains("grpc"));
        let c = from_env(&env(&[
            ("LOWDOWN_OTEL", "1"),
            ("OTEL_TRACES_EXPORTER", "console"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://x"),
            ("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "http://m/v1/metrics"),
        ]))
        .unwrap();
        assert!(c.traces.is_none());
        assert_eq!(c.metrics.unwrap().url, "http://m/v1/metrics");
    }

    #[test]
    fn service_name_and_resource() {
        let c = from_env(&env(&[
            ("LOWDOWN_OTEL", "1"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "service.name=from-res,deployment.environment.name=dev%2C1",
            ),
        ]))
        .unwrap();
        assert_eq!(c.service_name, "from-res");
        assert_eq!(
            c.resource,
            vec![("deployment.environment.name".into(), "dev,1".into())]
        );
        let c = from_env(&env(&[
            ("LOWDOWN_OTEL", "1"),
            ("OTEL_SERVICE_NAME", "agent"),
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=x"),
        ]))
        .unwrap();
        assert_eq!(c.service_name, "agent");
    }
}
