//! The CEL environment of the dev server's rules: CEL's standard library,
//! the strings extension Kubernetes enables, and the functions of
//! Kubernetes' own CEL libraries that the dev server has (lists, regex,
//! quantities), with their errors as those libraries word them.

use std::sync::{Arc, LazyLock};

use cel::objects::{Opaque, ValueType};
use cel::{Context, Env, ExecutionError};

/// A context for one rule's evaluation, its variables still to add.
pub(super) fn context() -> Context<'static, 'static> {
    let mut context = Context::with_env(Arc::clone(&ENV));
    kubernetes(&mut context);
    context
}

/// CEL's standard library and the extensions Kubernetes enables that the
/// `cel` crate has.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the strings extension declares once");
    Arc::new(env)
});

/// The functions of Kubernetes' CEL libraries that the dev server has: the
/// lists library's `isSorted()`, `sum()`, `min()`, `max()`, the regex
/// library's `find()` and `findAll()`, and the quantity library.
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
    for result in declared.into_iter().chain(quantities) {
        result.expect("Kubernetes' functions do not shadow the standard library's");
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
        crate::store::qos::parse_quantity(text).map(Quantity).ok_or_else(|| {
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
