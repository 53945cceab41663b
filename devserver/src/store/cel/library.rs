//! The CEL environment of the dev server's rules: CEL's standard library,
//! the strings extension Kubernetes enables, and the functions of
//! Kubernetes' own CEL libraries that the dev server has (lists, regex,
//! quantities, IP addresses and CIDRs, URLs, named formats), with their
//! errors as those libraries word them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::{Arc, LazyLock};

use cel::common::types::{self, Type};
use cel::common::value::{CowVal, Val};
use cel::objects::{Opaque, OptionalValue, ValueType};
use cel::{Context, DeclarationError, Env, ExecutionError};

use crate::store::{format, names};

/// A context for one rule's evaluation, its variables still to add: a
/// scope of [`BASE`], which holds the functions.
pub(super) fn context() -> Context<'static, 'static> {
    BASE.new_inner_scope()
}

/// CEL's standard library, the extensions Kubernetes enables that the
/// `cel` crate has, and Kubernetes' functions; built once.
static BASE: LazyLock<Context<'static, 'static>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the strings extension declares once");
    overloads(&mut env).expect("Kubernetes' overloads have signatures of their own");
    let mut context = Context::with_env(Arc::new(env));
    kubernetes(&mut context);
    context
});

/// Kubernetes' functions whose names the standard library or the strings
/// extension already declare, added as overloads beside theirs: a list's
/// `indexOf()` and `lastIndexOf()`, and `string()` of an IP address or a
/// CIDR.
fn overloads(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload(
        "indexOf",
        "list_a_index_of_int",
        types::LIST_TYPE,
        vec![types::DYN_TYPE],
        list_index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_a_last_index_of_int",
        types::LIST_TYPE,
        vec![types::DYN_TYPE],
        list_last_index_of,
    )?;
    env.add_overload(
        "string",
        "ip_to_string",
        vec![Type::new_opaque_type("net.IP")],
        address_to_string,
    )?;
    env.add_overload(
        "string",
        "cidr_to_string",
        vec![Type::new_opaque_type("net.IPPrefix")],
        address_to_string,
    )
}

/// The lists library's `indexOf()`: the first index of an element equal
/// to the argument, else -1.
fn list_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (list, item) = list_and_item(&args)?;
    let found = list.iter().position(|element| *element == item);
    int(found.map_or(-1, |i| i as i64))
}

/// The lists library's `lastIndexOf()`: the last index of an element
/// equal to the argument, else -1.
fn list_last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (list, item) = list_and_item(&args)?;
    let found = list.iter().rposition(|element| *element == item);
    int(found.map_or(-1, |i| i as i64))
}

/// The receiver list and the argument of `indexOf()` or `lastIndexOf()`.
fn list_and_item(args: &[CowVal]) -> Result<(Arc<Vec<cel::Value>>, cel::Value), ExecutionError> {
    let [list, item] = args else {
        return Err(ExecutionError::function_error(
            "indexOf",
            "no such overload",
        ));
    };
    match cel::Value::try_from(list.as_ref())? {
        cel::Value::List(list) => Ok((list, cel::Value::try_from(item.as_ref())?)),
        _ => Err(ExecutionError::function_error(
            "indexOf",
            "no such overload",
        )),
    }
}

fn int<'b, 'v>(n: i64) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value: Box<dyn Val> = cel::Value::Int(n).try_into()?;
    Ok(CowVal::from(value))
}

/// `string()` of an IP address (Go's `netip.Addr.String`, RFC 5952 for
/// IPv6) or a CIDR (`address/length`).
fn address_to_string<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let address = match args.first().map(|a| cel::Value::try_from(a.as_ref())) {
        Some(Ok(cel::Value::Opaque(a))) => Address::of(&a)?,
        _ => return Err(ExecutionError::function_error("string", "no such overload")),
    };
    let text = match address.prefix {
        Some(prefix) => format!("{}/{prefix}", address.ip),
        None => address.ip.to_string(),
    };
    let value: Box<dyn Val> = cel::Value::String(Arc::new(text)).try_into()?;
    Ok(CowVal::from(value))
}

/// The functions of Kubernetes' CEL libraries that the dev server has: the
/// lists library's `isSorted()`, `sum()`, `min()`, `max()`, the regex
/// library's `find()` and `findAll()`, and the quantity, IP, CIDR, URL and
/// format libraries.
fn kubernetes(context: &mut Context) {
    use cel::extractors::This;
    let declared = [
        context.add_function("isSorted", |This(list): This<Arc<Vec<cel::Value>>>| {
            list.windows(2)
                .all(|pair| pair[0].partial_cmp(&pair[1]).is_some_and(|o| o.is_le()))
        }),
        context.add_function("sum", |This(list): This<Arc<Vec<cel::Value>>>| sum(&list)),
        context.add_function("min", |This(list): This<Arc<Vec<cel::Value>>>| {
            extreme(&list, "min", std::cmp::Ordering::Less)
        }),
        context.add_function("max", |This(list): This<Arc<Vec<cel::Value>>>| {
            extreme(&list, "max", std::cmp::Ordering::Greater)
        }),
        context.add_function(
            "find",
            |This(text): This<Arc<String>>,
             pattern: Arc<String>|
             -> Result<cel::Value, ExecutionError> {
                let re = regex(&pattern, "find")?;
                let found = re.find(&text).map(|m| m.as_str().to_string());
                Ok(cel::Value::String(Arc::new(found.unwrap_or_default())))
            },
        ),
        context.add_function(
            "findAll",
            |This(text): This<Arc<String>>,
             pattern: Arc<String>|
             -> Result<cel::Value, ExecutionError> {
                let re = regex(&pattern, "findAll")?;
                let found: Vec<cel::Value> = re
                    .find_iter(&text)
                    .map(|m| cel::Value::String(Arc::new(m.as_str().to_string())))
                    .collect();
                Ok(cel::Value::List(Arc::new(found)))
            },
        ),
    ];
    let quantities = [
        context.add_function("quantity", |text: Arc<String>| {
            Quantity::parse(&text).map(Quantity::value)
        }),
        context.add_function("isQuantity", |text: Arc<String>| {
            Quantity::parse(&text).is_ok()
        }),
        context.add_function("sign", |This(q): This<Arc<dyn Opaque>>| {
            Quantity::of(&q).map(|q| cel::Value::Int(q.0.signum() as i64))
        }),
        context.add_function("isInteger", |This(q): This<Arc<dyn Opaque>>| {
            Quantity::of(&q).map(|q| cel::Value::Bool(q.0 % NANO == 0))
        }),
        context.add_function("asInteger", |This(q): This<Arc<dyn Opaque>>| {
            let q = Quantity::of(&q)?;
            match i64::try_from(q.0 / NANO) {
                Ok(n) if q.0 % NANO == 0 => Ok(cel::Value::Int(n)),
                _ => Err(ExecutionError::function_error(
                    "asInteger",
                    "cannot convert value to integer",
                )),
            }
        }),
        context.add_function("asApproximateFloat", |This(q): This<Arc<dyn Opaque>>| {
            Quantity::of(&q).map(|q| cel::Value::Float(q.0 as f64 / NANO as f64))
        }),
        context.add_function(
            "compareTo",
            |This(q): This<Arc<dyn Opaque>>, other: cel::Value| {
                let order = Quantity::of(&q)?.0.cmp(&Quantity::operand(&other)?.0);
                Ok::<_, ExecutionError>(cel::Value::Int(order as i64))
            },
        ),
        context.add_function(
            "isGreaterThan",
            |This(q): This<Arc<dyn Opaque>>, other: cel::Value| {
                Ok::<_, ExecutionError>(cel::Value::Bool(
                    Quantity::of(&q)?.0 > Quantity::operand(&other)?.0,
                ))
            },
        ),
        context.add_function(
            "isLessThan",
            |This(q): This<Arc<dyn Opaque>>, other: cel::Value| {
                Ok::<_, ExecutionError>(cel::Value::Bool(
                    Quantity::of(&q)?.0 < Quantity::operand(&other)?.0,
                ))
            },
        ),
        context.add_function(
            "add",
            |This(q): This<Arc<dyn Opaque>>, other: cel::Value| {
                let sum = Quantity::of(&q)?
                    .0
                    .saturating_add(Quantity::operand(&other)?.0);
                Ok::<_, ExecutionError>(Quantity(sum).value())
            },
        ),
        context.add_function(
            "sub",
            |This(q): This<Arc<dyn Opaque>>, other: cel::Value| {
                let difference = Quantity::of(&q)?
                    .0
                    .saturating_sub(Quantity::operand(&other)?.0);
                Ok::<_, ExecutionError>(Quantity(difference).value())
            },
        ),
    ];
    let addresses = [
        context.add_function("ip", |This(value): This<cel::Value>| match value {
            cel::Value::String(text) => Address::ip(&text).map(Address::value),
            // A CIDR's address, as written: `cidr('10.1.2.3/8').ip()`.
            cel::Value::Opaque(a) => {
                let cidr = Address::of(&a)?;
                cidr.prefix.ok_or_else(not_cidr)?;
                Ok(Address {
                    ip: cidr.ip,
                    prefix: None,
                }
                .value())
            }
            _ => Err(not_cidr()),
        }),
        context.add_function("ip.isCanonical", |text: Arc<String>| {
            Address::ip(&text).map(|a| a.ip.to_string() == *text)
        }),
        context.add_function("isIP", |text: Arc<String>| Address::ip(&text).is_ok()),
        context.add_function("cidr", |text: Arc<String>| {
            Address::cidr(&text).map(Address::value)
        }),
        context.add_function("isCIDR", |text: Arc<String>| Address::cidr(&text).is_ok()),
        context.add_function("family", |This(a): This<Arc<dyn Opaque>>| {
            let ip = Address::of(&a)?.ip;
            Ok::<_, ExecutionError>(cel::Value::Int(if ip.is_ipv4() { 4 } else { 6 }))
        }),
        context.add_function("isUnspecified", |This(a): This<Arc<dyn Opaque>>| {
            Ok::<_, ExecutionError>(cel::Value::Bool(Address::of(&a)?.ip.is_unspecified()))
        }),
        context.add_function("isLoopback", |This(a): This<Arc<dyn Opaque>>| {
            Ok::<_, ExecutionError>(cel::Value::Bool(Address::of(&a)?.ip.is_loopback()))
        }),
        context.add_function("isLinkLocalMulticast", |This(a): This<Arc<dyn Opaque>>| {
            Ok::<_, ExecutionError>(cel::Value::Bool(link_local_multicast(Address::of(&a)?.ip)))
        }),
        context.add_function("isLinkLocalUnicast", |This(a): This<Arc<dyn Opaque>>| {
            Ok::<_, ExecutionError>(cel::Value::Bool(link_local_unicast(Address::of(&a)?.ip)))
        }),
        context.add_function("isGlobalUnicast", |This(a): This<Arc<dyn Opaque>>| {
            let ip = Address::of(&a)?.ip;
            let global = !(ip.is_unspecified()
                || ip.is_loopback()
                || ip.is_multicast()
                || link_local_unicast(ip)
                || ip == IpAddr::V4(Ipv4Addr::BROADCAST));
            Ok::<_, ExecutionError>(cel::Value::Bool(global))
        }),
        context.add_function("prefixLength", |This(a): This<Arc<dyn Opaque>>| {
            let prefix = Address::of(&a)?.prefix.ok_or_else(not_cidr)?;
            Ok::<_, ExecutionError>(cel::Value::Int(i64::from(prefix)))
        }),
        context.add_function("masked", |This(a): This<Arc<dyn Opaque>>| {
            let cidr = Address::of(&a)?;
            let prefix = cidr.prefix.ok_or_else(not_cidr)?;
            Ok::<_, ExecutionError>(
                Address {
                    ip: masked(cidr.ip, prefix),
                    prefix: Some(prefix),
                }
                .value(),
            )
        }),
        context.add_function(
            "containsIP",
            |This(a): This<Arc<dyn Opaque>>, other: cel::Value| {
                let cidr = Address::of(&a)?;
                let ip = Address::operand(&other, Address::ip)?.ip;
                Ok::<_, ExecutionError>(cel::Value::Bool(cidr.contains(ip, 0)?))
            },
        ),
        context.add_function(
            "containsCIDR",
            |This(a): This<Arc<dyn Opaque>>, other: cel::Value| {
                let cidr = Address::of(&a)?;
                let inner = Address::operand(&other, Address::cidr)?;
                let inner_prefix = inner.prefix.ok_or_else(not_cidr)?;
                Ok::<_, ExecutionError>(cel::Value::Bool(cidr.contains(inner.ip, inner_prefix)?))
            },
        ),
    ];
    let urls = [
        context.add_function("url", |text: Arc<String>| {
            Link::parse(&text).map(|link| cel::Value::Opaque(Arc::new(link)))
        }),
        context.add_function("isURL", |text: Arc<String>| Link::parse(&text).is_ok()),
        context.add_function("getScheme", |This(u): This<Arc<dyn Opaque>>| {
            Link::of(&u).map(|l| text(if l.path_only { "" } else { l.url.scheme() }))
        }),
        context.add_function("getHost", |This(u): This<Arc<dyn Opaque>>| {
            Link::of(&u).map(|l| text(&l.host()))
        }),
        context.add_function("getHostname", |This(u): This<Arc<dyn Opaque>>| {
            Link::of(&u).map(|l| text(l.hostname()))
        }),
        context.add_function("getPort", |This(u): This<Arc<dyn Opaque>>| {
            Link::of(&u).map(|l| text(&l.url.port().map(|p| p.to_string()).unwrap_or_default()))
        }),
        context.add_function("getEscapedPath", |This(u): This<Arc<dyn Opaque>>| {
            Link::of(&u).map(|l| text(l.url.path()))
        }),
        context.add_function("getQuery", |This(u): This<Arc<dyn Opaque>>| {
            Link::of(&u).map(|l| l.query())
        }),
    ];
    let formats = [
        context.add_function("format.named", |name: Arc<String>| {
            let named = NamedFormat::NAMES.iter().find(|n| **n == name.as_str());
            let value = match named {
                Some(name) => OptionalValue::of(NamedFormat(name).value()),
                None => OptionalValue::none(),
            };
            cel::Value::Opaque(Arc::new(value))
        }),
        context.add_function(
            "validate",
            |This(f): This<Arc<dyn Opaque>>, text: Arc<String>| {
                let problems = NamedFormat::of(&f)?.validate(&text);
                let value = if problems.is_empty() {
                    OptionalValue::none()
                } else {
                    let list = problems
                        .into_iter()
                        .map(|p| cel::Value::String(Arc::new(p)));
                    OptionalValue::of(cel::Value::List(Arc::new(list.collect())))
                };
                Ok::<_, ExecutionError>(cel::Value::Opaque(Arc::new(value)))
            },
        ),
    ];
    let constructors = NamedFormat::NAMES.iter().map(|name| {
        context.add_function(&format!("format.{name}"), move || NamedFormat(name).value())
    });
    let constructors: Vec<_> = constructors.collect();
    for result in declared
        .into_iter()
        .chain(quantities)
        .chain(addresses)
        .chain(urls)
        .chain(formats)
        .chain(constructors)
    {
        result.expect("Kubernetes' functions do not shadow the standard library's");
    }
}

/// One of the format library's named formats (`format.dns1123Label()`,
/// `format.named('uri')`), by its name there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NamedFormat(&'static str);

impl Opaque for NamedFormat {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.NamedFormat"
    }
}

impl NamedFormat {
    /// The names of `ConstantFormats`.
    const NAMES: [&'static str; 13] = [
        "dns1123Label",
        "dns1123Subdomain",
        "dns1035Label",
        "qualifiedName",
        "dns1123LabelPrefix",
        "dns1123SubdomainPrefix",
        "dns1035LabelPrefix",
        "labelValue",
        "uri",
        "uuid",
        "byte",
        "date",
        "datetime",
    ];

    fn value(self) -> cel::Value {
        cel::Value::Opaque(Arc::new(self))
    }

    fn of(value: &Arc<dyn Opaque>) -> Result<NamedFormat, ExecutionError> {
        value
            .downcast_ref::<NamedFormat>()
            .copied()
            .ok_or_else(|| ExecutionError::function_error("validate", "no such overload"))
    }

    /// What `validate()` lists against `text`: the validation's messages,
    /// as `ConstantFormats` words them; empty when it passes.
    fn validate(self, text: &str) -> Vec<String> {
        let failed = |format_name: &str, message: &str| {
            if format::check(format_name, text) == Some(true) {
                Vec::new()
            } else {
                vec![message.to_string()]
            }
        };
        match self.0 {
            "dns1123Label" => names::dns1123_label(text),
            "dns1123Subdomain" => names::dns1123_subdomain(text),
            "dns1035Label" => names::dns1035_label(text),
            "qualifiedName" => names::qualified_name(text),
            "dns1123LabelPrefix" => names::dns1123_label(&mask_trailing_dash(text)),
            "dns1123SubdomainPrefix" => names::dns1123_subdomain(&mask_trailing_dash(text)),
            "dns1035LabelPrefix" => names::dns1035_label(&mask_trailing_dash(text)),
            "labelValue" => names::label_value(text),
            "uri" => format::parse_request_uri(text).err().into_iter().collect(),
            "uuid" => failed("uuid", "does not match the UUID format"),
            "byte" => failed("byte", "invalid base64"),
            "date" => failed("date", "invalid date"),
            _ => failed("datetime", "invalid datetime"),
        }
    }
}

/// apimachinery's `maskTrailingDash`, which lets a name prefix end in a
/// dash: the last two bytes become `a`.
fn mask_trailing_dash(text: &str) -> String {
    if text.len() > 1 && text.ends_with('-') {
        let kept = &text.as_bytes()[..text.len() - 2];
        format!("{}a", String::from_utf8_lossy(kept))
    } else {
        text.to_string()
    }
}

/// Nano units in one.
const NANO: i128 = 1_000_000_000;

/// A Kubernetes quantity as the quantity library's values, in nano units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Quantity(i128);

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

impl Quantity {
    fn parse(text: &str) -> Result<Quantity, ExecutionError> {
        crate::store::quantity::parse(text).map(Quantity).ok_or_else(|| {
            ExecutionError::function_error(
                "quantity",
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
            )
        })
    }

    fn value(self) -> cel::Value {
        cel::Value::Opaque(Arc::new(self))
    }

    fn of(value: &Arc<dyn Opaque>) -> Result<Quantity, ExecutionError> {
        value
            .downcast_ref::<Quantity>()
            .copied()
            .ok_or_else(|| ExecutionError::function_error("quantity", "no such overload"))
    }

    /// The other operand of a comparison or sum: a quantity or an integer.
    fn operand(value: &cel::Value) -> Result<Quantity, ExecutionError> {
        match value {
            cel::Value::Opaque(q) => Quantity::of(q),
            cel::Value::Int(n) => Ok(Quantity(i128::from(*n) * NANO)),
            _ => Err(ExecutionError::function_error(
                "quantity",
                "no such overload",
            )),
        }
    }
}

/// An IP address (`prefix` `None`) or a CIDR, as the IP and CIDR
/// libraries' values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Address {
    ip: IpAddr,
    prefix: Option<u8>,
}

impl Opaque for Address {
    fn runtime_type_name(&self) -> &str {
        if self.prefix.is_some() {
            "net.IPPrefix"
        } else {
            "net.IP"
        }
    }
}

impl Address {
    /// An address as `ip()` takes it: no zone, no IPv4-mapped IPv6.
    fn ip(text: &str) -> Result<Address, ExecutionError> {
        let ip: IpAddr = text.parse().map_err(|_| {
            ExecutionError::function_error("ip", format!("IP Address {text:?} parse error during conversion from string: ParseAddr({text:?}): unable to parse IP"))
        })?;
        if let IpAddr::V6(v6) = ip
            && v6.to_ipv4_mapped().is_some()
        {
            return Err(ExecutionError::function_error(
                "ip",
                "IPv4-mapped IPv6 address is not allowed",
            ));
        }
        Ok(Address { ip, prefix: None })
    }

    fn cidr(text: &str) -> Result<Address, ExecutionError> {
        let invalid = || {
            ExecutionError::function_error(
                "cidr",
                format!(
                    "network address parse error during conversion from string: netip.ParsePrefix({text:?}): bad prefix"
                ),
            )
        };
        let (address, prefix) = text.split_once('/').ok_or_else(invalid)?;
        let ip = Address::ip(address).map_err(|_| invalid())?.ip;
        let prefix: u8 = prefix.parse().map_err(|_| invalid())?;
        let most = if ip.is_ipv4() { 32 } else { 128 };
        if prefix > most {
            return Err(invalid());
        }
        Ok(Address {
            ip,
            prefix: Some(prefix),
        })
    }

    fn value(self) -> cel::Value {
        cel::Value::Opaque(Arc::new(self))
    }

    fn of(value: &Arc<dyn Opaque>) -> Result<Address, ExecutionError> {
        value
            .downcast_ref::<Address>()
            .copied()
            .ok_or_else(|| ExecutionError::function_error("ip", "no such overload"))
    }

    /// The other operand: an address of this kind, or its text.
    fn operand(
        value: &cel::Value,
        parse: fn(&str) -> Result<Address, ExecutionError>,
    ) -> Result<Address, ExecutionError> {
        match value {
            cel::Value::Opaque(a) => Address::of(a),
            cel::Value::String(text) => parse(text),
            _ => Err(ExecutionError::function_error("cidr", "no such overload")),
        }
    }

    /// Whether this CIDR holds `ip` (and, with `prefix`, its network).
    fn contains(self, ip: IpAddr, prefix: u8) -> Result<bool, ExecutionError> {
        let own = self.prefix.ok_or_else(not_cidr)?;
        if ip.is_ipv4() != self.ip.is_ipv4() || (prefix != 0 && prefix < own) {
            return Ok(false);
        }
        Ok(masked(ip, own) == masked(self.ip, own))
    }
}

fn not_cidr() -> ExecutionError {
    ExecutionError::function_error("cidr", "no such overload")
}

/// `ip` with all but its first `prefix` bits cleared.
fn masked(ip: IpAddr, prefix: u8) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => {
            let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V4(Ipv4Addr::from(u32::from(v4) & mask))
        }
        IpAddr::V6(v6) => {
            let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from(u128::from(v6) & mask))
        }
    }
}

/// Go's `IsLinkLocalUnicast`: 169.254.0.0/16, fe80::/10.
fn link_local_unicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// Go's `IsLinkLocalMulticast`: 224.0.0.0/24, ff02::/16.
fn link_local_multicast(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// A URL as the URL library's values: an absolute URL (`https://host/x`)
/// or an absolute path (`/x`), as Go's `url.ParseRequestURI` takes them.
/// Unlike Go, an explicit default port (`https://x:443`) is dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Link {
    url: url::Url,
    /// An absolute path alone: no scheme, no host.
    path_only: bool,
}

impl Opaque for Link {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.URL"
    }
}

impl Link {
    fn parse(text: &str) -> Result<Link, ExecutionError> {
        let invalid = || {
            ExecutionError::function_error(
                "url",
                format!(
                    "URL parse error during conversion from string: parse {text:?}: invalid URI for request"
                ),
            )
        };
        if text.starts_with('/') {
            let base = url::Url::parse("path:///").expect("a valid base");
            let url = base.join(text).map_err(|_| invalid())?;
            return Ok(Link {
                url,
                path_only: true,
            });
        }
        match url::Url::parse(text) {
            Ok(url) if !url.cannot_be_a_base() => Ok(Link {
                url,
                path_only: false,
            }),
            _ => Err(invalid()),
        }
    }

    fn of(value: &Arc<dyn Opaque>) -> Result<&Link, ExecutionError> {
        value
            .downcast_ref::<Link>()
            .ok_or_else(|| ExecutionError::function_error("url", "no such overload"))
    }

    /// The host as Go's `URL.Host` has it: brackets and port kept.
    fn host(&self) -> String {
        let host = self.url.host_str().unwrap_or_default();
        match self.url.port() {
            Some(port) => format!("{host}:{port}"),
            None => host.to_string(),
        }
    }

    /// The host without brackets or port.
    fn hostname(&self) -> &str {
        let host = self.url.host_str().unwrap_or_default();
        host.trim_start_matches('[').trim_end_matches(']')
    }

    /// The query as a map of each key to its values.
    fn query(&self) -> cel::Value {
        let mut query: std::collections::BTreeMap<String, Vec<cel::Value>> = Default::default();
        for (key, value) in self.url.query_pairs() {
            query
                .entry(key.into_owned())
                .or_default()
                .push(text(&value));
        }
        let map: std::collections::HashMap<cel::objects::Key, cel::Value> = query
            .into_iter()
            .map(|(k, v)| {
                (
                    cel::objects::Key::String(Arc::new(k)),
                    cel::Value::List(Arc::new(v)),
                )
            })
            .collect();
        cel::Value::Map(cel::objects::Map { map: Arc::new(map) })
    }
}

fn text(value: &str) -> cel::Value {
    cel::Value::String(Arc::new(value.to_string()))
}

fn regex(pattern: &str, function: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(pattern).map_err(|e| ExecutionError::function_error(function, e))
}

/// A list's sum: 0 for an empty list, else of its elements' type.
fn sum(list: &[cel::Value]) -> Result<cel::Value, ExecutionError> {
    let mut total = cel::Value::Int(0);
    for (i, item) in list.iter().enumerate() {
        total = match (i, &total, item) {
            (0, _, item) => item.clone(),
            (_, cel::Value::Int(a), cel::Value::Int(b)) => {
                a.checked_add(*b)
                    .map(cel::Value::Int)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?
            }
            (_, cel::Value::UInt(a), cel::Value::UInt(b)) => {
                a.checked_add(*b).map(cel::Value::UInt).ok_or_else(|| {
                    ExecutionError::function_error("sum", "unsigned integer overflow")
                })?
            }
            (_, cel::Value::Float(a), cel::Value::Float(b)) => cel::Value::Float(a + b),
            (_, _, item) => {
                return Err(ExecutionError::function_error(
                    "sum",
                    format!("no such overload: sum of {:?}", item.type_of()),
                ));
            }
        };
    }
    if !matches!(
        total.type_of(),
        ValueType::Int | ValueType::UInt | ValueType::Float
    ) {
        return Err(ExecutionError::function_error("sum", "no such overload"));
    }
    Ok(total)
}

/// A list's least (`Less`) or greatest (`Greater`) element.
fn extreme(
    list: &[cel::Value],
    name: &str,
    keep: std::cmp::Ordering,
) -> Result<cel::Value, ExecutionError> {
    let mut items = list.iter();
    let mut best = items.next().ok_or_else(|| {
        ExecutionError::function_error(name, format!("{name} called on empty list"))
    })?;
    for item in items {
        match item.partial_cmp(best) {
            Some(order) if order == keep => best = item,
            Some(_) => {}
            None => return Err(ExecutionError::function_error(name, "no such overload")),
        }
    }
    Ok(best.clone())
}
