//! The lookup form of a target name (SPEC §5): how the API matches a name asked for with
//! the names recorded, without ever replacing one package by another.

/// The normalised form of `target` used for lookups: `pypi:` names by PEP 503 (lower case,
/// every run of `-`, `_` and `.` becomes one `-`), `npm:` names lower case (npm refuses
/// upper-case names for new packages, and the registry treats them as one). Every other
/// name is returned unchanged: `mcp:` Registry names and short names keep their case.
pub fn lookup_form(target: &str) -> String {
    if let Some(name) = target.strip_prefix("pypi:") {
        let mut out = String::with_capacity(target.len());
        out.push_str("pypi:");
        let mut run = false;
        for c in name.chars() {
            if matches!(c, '-' | '_' | '.') {
                if !run {
                    out.push('-');
                }
                run = true;
            } else {
                out.extend(c.to_lowercase());
                run = false;
            }
        }
        return out;
    }
    if let Some(name) = target.strip_prefix("npm:") {
        return format!("npm:{}", name.to_lowercase());
    }
    target.to_owned()
}

#[cfg(test)]
mod tests {
    use super::lookup_form;

    #[test]
    fn pep_503_and_npm_lower_case() {
        assert_eq!(
            lookup_form("pypi:Mcp_Server_Fetch"),
            "pypi:mcp-server-fetch"
        );
        assert_eq!(lookup_form("pypi:a-_.-b..C"), "pypi:a-b-c");
        assert_eq!(
            lookup_form("pypi:mcp-server-fetch"),
            "pypi:mcp-server-fetch"
        );
        assert_eq!(lookup_form("npm:@Scope/Pkg"), "npm:@scope/pkg");
        assert_eq!(
            lookup_form("mcp:io.github.User/Server"),
            "mcp:io.github.User/Server"
        );
        assert_eq!(lookup_form("Brave-Search"), "Brave-Search");
    }
}
