//! How a Pod resolves names, as `pkg/apis/core/validation` checks it: its
//! DNS policy (`validateDNSPolicy`), its DNS config (`validatePodDNSConfig`:
//! the `None` policy's needs, at most 3 name servers, each an IP address,
//! at most 32 search domains in at most 2048 characters, each a subdomain
//! that may hold `_` (the relaxed search validation of v1.33), options
//! named) and its host aliases (`ValidateHostAliases`).

use serde_json::Value;

use super::{Cause, invalid_list, items, names, one_of, sloppy_ip, strings, text};

const POLICIES: [&str; 4] = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const MAX_NAMESERVERS: usize = 3;
const MAX_SEARCH_PATHS: usize = 32;
const MAX_SEARCH_LIST_CHARS: usize = 2048;

/// A Pod spec's DNS policy, under `path`. Defaulting has set a missing one
/// to `ClusterFirst`.
pub(super) fn policy(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let field = format!("{path}.dnsPolicy");
    one_of(text(spec, "/dnsPolicy"), &field, &POLICIES, None, causes);
}

/// A Pod spec's DNS config, under `path`.
pub(super) fn config(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let at = format!("{path}.dnsConfig");
    let config = spec.get("dnsConfig").filter(|c| c.is_object());
    let nameservers = strings(config.and_then(|c| c.get("nameservers")));
    if text(spec, "/dnsPolicy") == "None" {
        let Some(_) = config else {
            causes.push(Cause::required(
                &at,
                "must provide `dnsConfig` when `dnsPolicy` is None",
            ));
            return;
        };
        if nameservers.is_empty() {
            causes.push(Cause::required(
                &format!("{at}.nameservers"),
                "must provide at least one DNS nameserver when `dnsPolicy` is None",
            ));
            return;
        }
    }
    let Some(config) = config else {
        return;
    };
    if nameservers.len() > MAX_NAMESERVERS {
        causes.push(invalid_list(
            &format!("{at}.nameservers"),
            &nameservers,
            &format!("must not have more than {MAX_NAMESERVERS} nameservers"),
        ));
    }
    for (i, nameserver) in nameservers.iter().enumerate() {
        ip(nameserver, &format!("{at}.nameservers[{i}]"), causes);
    }
    let searches = strings(config.get("searches"));
    if searches.len() > MAX_SEARCH_PATHS {
        causes.push(invalid_list(
            &format!("{at}.searches"),
            &searches,
            &format!("must not have more than {MAX_SEARCH_PATHS} search paths"),
        ));
    }
    if searches.join(" ").len() > MAX_SEARCH_LIST_CHARS {
        causes.push(invalid_list(
            &format!("{at}.searches"),
            &searches,
            &format!(
                "must not have more than {MAX_SEARCH_LIST_CHARS} characters (including spaces) in the search list"
            ),
        ));
    }
    for (i, search) in searches.iter().enumerate() {
        if *search == "." {
            continue;
        }
        let search = search.strip_suffix('.').unwrap_or(search);
        for problem in names::dns1123_subdomain_with_underscore(search) {
            causes.push(names::invalid(
                &format!("{at}.searches[{i}]"),
                search,
                problem,
            ));
        }
    }
    for (i, option) in items(config.get("options")).iter().enumerate() {
        if text(option, "/name").is_empty() {
            causes.push(Cause::required(
                &format!("{at}.options[{i}]"),
                "must not be empty",
            ));
        }
    }
}

/// A Pod spec's host aliases, under `path`: each an IP address and
/// subdomain host names.
pub(super) fn host_aliases(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    for (i, alias) in items(spec.get("hostAliases")).iter().enumerate() {
        let at = format!("{path}.hostAliases[{i}]");
        ip(text(alias, "/ip"), &format!("{at}.ip"), causes);
        for (j, hostname) in strings(alias.get("hostnames")).iter().enumerate() {
            for problem in names::dns1123_subdomain(hostname) {
                causes.push(names::invalid(
                    &format!("{at}.hostnames[{j}]"),
                    hostname,
                    problem,
                ));
            }
        }
    }
}

/// An IP address as these legacy fields take it (`IsValidIPForLegacyField`
/// without the strict checks v1.33 leaves off): what Go's sloppy parser
/// reads, leading zeros in an IPv4 address included.
fn ip(value: &str, field: &str, causes: &mut Vec<Cause>) {
    if sloppy_ip(value).is_none() {
        causes.push(names::invalid(
            field,
            value,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".into(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::spec_messages as messages;
    use super::*;
    use serde_json::json;

    #[test]
    fn an_unknown_policy_is_not_supported() {
        assert_eq!(
            messages(policy, json!({"dnsPolicy": "Custom"})),
            [
                "spec.dnsPolicy: Unsupported value: \"Custom\": supported values: \"ClusterFirstWithHostNet\", \"ClusterFirst\", \"Default\", \"None\""
            ]
        );
        assert!(messages(policy, json!({"dnsPolicy": "None"})).is_empty());
    }

    #[test]
    fn the_none_policy_needs_a_config_with_a_nameserver() {
        assert_eq!(
            messages(config, json!({"dnsPolicy": "None"})),
            ["spec.dnsConfig: Required value: must provide `dnsConfig` when `dnsPolicy` is None"]
        );
        assert_eq!(
            messages(
                config,
                json!({"dnsPolicy": "None", "dnsConfig": {"searches": ["bad_"]}})
            ),
            [
                "spec.dnsConfig.nameservers: Required value: must provide at least one DNS nameserver when `dnsPolicy` is None"
            ]
        );
        assert!(
            messages(
                config,
                json!({"dnsPolicy": "None", "dnsConfig": {"nameservers": ["1.1.1.1"]}})
            )
            .is_empty()
        );
    }

    #[test]
    fn nameservers_searches_and_options_are_checked() {
        let spec = json!({"dnsPolicy": "ClusterFirst", "dnsConfig": {
            "nameservers": ["1.1.1.1", "010.0.0.1", "2001:db8::1", "dns.example.com"],
            "searches": ["_sip._tcp.example.com.", ".", "Bad.example.com", "a..b"],
            "options": [{"name": "ndots", "value": "2"}, {"value": "1"}]}});
        let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '_', '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?(\\._?[a-z0-9]([-_a-z0-9]*[a-z0-9])?)*')";
        assert_eq!(
            messages(config, spec),
            [
                "spec.dnsConfig.nameservers: Invalid value: []string{\"1.1.1.1\", \"010.0.0.1\", \"2001:db8::1\", \"dns.example.com\"}: must not have more than 3 nameservers".to_string(),
                "spec.dnsConfig.nameservers[3]: Invalid value: \"dns.example.com\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".to_string(),
                format!("spec.dnsConfig.searches[2]: Invalid value: \"Bad.example.com\": {subdomain}"),
                format!("spec.dnsConfig.searches[3]: Invalid value: \"a..b\": {subdomain}"),
                "spec.dnsConfig.options[1]: Required value: must not be empty".to_string(),
            ]
        );
    }

    #[test]
    fn too_many_searches_or_characters_are_refused_as_a_list() {
        let many: Vec<String> = (0..33).map(|i| format!("s{i}.example.com")).collect();
        let found = messages(config, json!({"dnsConfig": {"searches": many}}));
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with(
                "spec.dnsConfig.searches: Invalid value: []string{\"s0.example.com\", "
            )
        );
        assert!(found[0].ends_with("}: must not have more than 32 search paths"));
        let long: Vec<String> = (0..9).map(|i| format!("{i}{}", "a".repeat(250))).collect();
        let found = messages(config, json!({"dnsConfig": {"searches": long}}));
        assert_eq!(found.len(), 1);
        assert!(found[0].ends_with(
            "}: must not have more than 2048 characters (including spaces) in the search list"
        ));
    }

    #[test]
    fn host_aliases_have_an_address_and_subdomain_names() {
        let spec = json!({"hostAliases": [
            {"ip": "127.0.0.1", "hostnames": ["foo.local", "Bar"]},
            {"ip": "::1"},
            {"ip": "256.0.0.1"}]});
        assert_eq!(
            messages(host_aliases, spec),
            [
                "spec.hostAliases[0].hostnames[1]: Invalid value: \"Bar\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.hostAliases[2].ip: Invalid value: \"256.0.0.1\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ]
        );
    }
}
