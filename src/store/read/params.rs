//! `--param NAME=VALUE`: parsing values and binding them to a statement's named parameters.

use anyhow::Result;
use rusqlite::Statement;
/// A parameter's value (an integer, a real number, text, a blob or NULL).
pub use rusqlite::types::Value;

use crate::model::usage;

/// Parses a parameter value: an integer (decimal, or hex 0x… up to 64 bits, read as the signed
/// integer with the same bits, like the stored bitboards), a real number, or text.
#[must_use]
pub fn parse_value(v: &str) -> Value {
    let t = v.trim();
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let parsed = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        u64::from_str_radix(hex, 16).ok()
    } else if !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit()) {
        digits.parse::<u64>().ok()
    } else {
        None
    };
    match parsed {
        Some(u) if negative => match i64::try_from(u) {
            Ok(i) => Value::Integer(-i),
            Err(_) => Value::Text(v.to_string()),
        },
        Some(u) => Value::Integer(u as i64),
        None => match t.parse::<f64>() {
            Ok(f) if f.is_finite() && t.contains(['.', 'e', 'E']) => Value::Real(f),
            _ => Value::Text(v.to_string()),
        },
    }
}

/// Binds `NAME=VALUE` pairs to the statement's named parameters; every parameter must get a
/// value and every value must name a parameter.
pub fn bind_params(stmt: &mut Statement<'_>, params: &[(String, Value)]) -> Result<()> {
    let mut wanted = Vec::new();
    for i in 1..=stmt.parameter_count() {
        match stmt.parameter_name(i) {
            Some(n) => wanted.push((i, n[1..].to_string())),
            None => usage!(
                "the SQL uses a positional parameter (?); name it (:name) and pass \
                 --param name=VALUE"
            ),
        }
    }
    for (name, _) in params {
        if !wanted.iter().any(|(_, n)| n == name) {
            let known: Vec<String> = wanted.iter().map(|(_, n)| n.clone()).collect();
            usage!(
                "--param {name}: the query has no parameter :{name} (its parameters: {})",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            );
        }
    }
    for (i, name) in &wanted {
        let Some((_, value)) = params.iter().rev().find(|(n, _)| n == name) else {
            usage!("the query needs a value for :{name}: add --param {name}=VALUE");
        };
        stmt.raw_bind_parameter(*i, value)?;
    }
    Ok(())
}

/// Parses the `--param NAME=VALUE` arguments.
pub fn parse_params(args: &[String]) -> Result<Vec<(String, Value)>> {
    let mut out = Vec::new();
    for a in args {
        let Some((name, value)) = a.split_once('=') else {
            usage!("--param {a}: expected NAME=VALUE");
        };
        let name = name.trim().trim_start_matches([':', '@', '$']);
        if name.is_empty() {
            usage!("--param {a}: the parameter name is empty");
        }
        out.push((name.to_string(), parse_value(value)));
    }
    Ok(out)
}
