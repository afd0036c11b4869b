//! Filter values checked against their column's type.

use chrono::{NaiveDate, NaiveDateTime};

use crate::model::{Literal, TypeClass};

/// A value ready to bind as a SQL parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Date(NaiveDate),
    Timestamp(NaiveDateTime),
}

impl Value {
    /// The JSON form used in `data.params`.
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Bool(b) => (*b).into(),
            Value::Int(i) => (*i).into(),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(serde_json::Value::Null, Into::into),
            Value::Text(s) => s.clone().into(),
            Value::Date(d) => d.format("%Y-%m-%d").to_string().into(),
            Value::Timestamp(t) => t.format("%Y-%m-%d %H:%M:%S%.f").to_string().into(),
        }
    }

    /// Checks `lit` against a column of class `class`. Text is parsed when the
    /// column is not text (the CLI passes every value as text). The error is
    /// the expected shape with an example, for the message.
    pub fn typed(lit: &Literal, class: TypeClass) -> Result<Value, String> {
        use Literal as L;
        match (class, lit) {
            (TypeClass::Boolean, L::Bool(b)) => Ok(Value::Bool(*b)),
            (TypeClass::Boolean, L::Text(s)) => match s.to_ascii_lowercase().as_str() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err("a boolean, e.g. true".into()),
            },
            (TypeClass::Integer, L::Int(i)) => Ok(Value::Int(*i)),
            (TypeClass::Integer, L::Float(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Value::Int(*f as i64)),
            (TypeClass::Integer, L::Text(s)) => s.trim().parse().map(Value::Int).map_err(|_| "an integer, e.g. 42".into()),
            (TypeClass::Decimal | TypeClass::Float, L::Int(i)) => Ok(Value::Float(*i as f64)),
            (TypeClass::Decimal | TypeClass::Float, L::Float(f)) => Ok(Value::Float(*f)),
            (TypeClass::Decimal | TypeClass::Float, L::Text(s)) => match s.trim().parse::<f64>() {
                Ok(f) if f.is_finite() => Ok(Value::Float(f)),
                _ => Err("a number, e.g. 19.99".into()),
            },
            (TypeClass::Text, L::Text(s)) => Ok(Value::Text(s.clone())),
            (TypeClass::Date, L::Text(s)) => parse_date(s).map(Value::Date).ok_or_else(|| "an ISO date, e.g. 2024-03-01".into()),
            (TypeClass::Timestamp, L::Text(s)) => parse_timestamp(s)
                .map(Value::Timestamp)
                .ok_or_else(|| "an ISO timestamp, e.g. 2024-03-01 08:00:00 (or a date, 2024-03-01)".into()),
            // Unknown or exotic types: pass scalars through as given.
            (TypeClass::Unknown | TypeClass::Other | TypeClass::Time, l) => Ok(match l {
                L::Bool(b) => Value::Bool(*b),
                L::Int(i) => Value::Int(*i),
                L::Float(f) => Value::Float(*f),
                L::Text(s) => Value::Text(s.clone()),
            }),
            (TypeClass::Boolean, _) => Err("a boolean, e.g. true".into()),
            (TypeClass::Integer, _) => Err("an integer, e.g. 42".into()),
            (TypeClass::Decimal | TypeClass::Float, _) => Err("a number, e.g. 19.99".into()),
            (TypeClass::Text, _) => Err("a string, e.g. \"DE\"".into()),
            (TypeClass::Date, _) => Err("an ISO date string, e.g. \"2024-03-01\"".into()),
            (TypeClass::Timestamp, _) => Err("an ISO timestamp string, e.g. \"2024-03-01 08:00:00\"".into()),
        }
    }
}

fn parse_date(s: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").ok()
}

fn parse_timestamp(s: &str) -> Option<NaiveDateTime> {
    let s = s.trim();
    ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(s, f).ok())
        .or_else(|| parse_date(s).and_then(|d| d.and_hms_opt(0, 0, 0)))
}

/// A CLI value: always text, typed later against the column.
pub fn parse_cli_value(s: &str) -> Literal {
    Literal::Text(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_values_against_columns() {
        assert_eq!(Value::typed(&Literal::Text("42".into()), TypeClass::Integer), Ok(Value::Int(42)));
        assert!(Value::typed(&Literal::Text("x".into()), TypeClass::Integer).is_err());
        assert!(Value::typed(&Literal::Int(1), TypeClass::Text).is_err());
        assert_eq!(
            Value::typed(&Literal::Text("2024-03-01T08:00:00".into()), TypeClass::Timestamp),
            Ok(Value::Timestamp(NaiveDate::from_ymd_opt(2024, 3, 1).unwrap().and_hms_opt(8, 0, 0).unwrap()))
        );
        assert!(Value::typed(&Literal::Text("2024-13-01".into()), TypeClass::Date).is_err());
        assert_eq!(Value::typed(&Literal::Bool(true), TypeClass::Boolean), Ok(Value::Bool(true)));
    }
}
