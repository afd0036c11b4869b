//! Engine type names reduced to the classes the planner reasons about.

/// What the planner needs to know of a column type: which filter values fit,
/// which aggregations make sense, which grains a time column allows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    Integer,
    Decimal,
    Float,
    Text,
    Boolean,
    Date,
    Timestamp,
    Time,
    Other,
    /// Neither the model nor a catalog declared a type.
    Unknown,
}

impl TypeClass {
    /// Classifies an engine type name (`DECIMAL(12,2)`, `timestamp with time zone`,
    /// `int8`, `VARCHAR`…). Case and parameters are ignored.
    pub fn of(type_name: &str) -> TypeClass {
        let t = type_name.trim().to_ascii_lowercase();
        let base = t.split(['(', '[']).next().unwrap_or("").trim();
        match base {
            "tinyint" | "smallint" | "integer" | "int" | "bigint" | "hugeint" | "int1" | "int2" | "int4"
            | "int8" | "int16" | "int32" | "int64" | "utinyint" | "usmallint" | "uinteger" | "ubigint"
            | "uhugeint" | "serial" | "bigserial" | "smallserial" | "mediumint" => TypeClass::Integer,
            "decimal" | "numeric" | "number" => TypeClass::Decimal,
            "real" | "float" | "double" | "float4" | "float8" | "double precision" => TypeClass::Float,
            "varchar" | "text" | "string" | "char" | "bpchar" | "character varying" | "character" | "uuid"
            | "nvarchar" | "nchar" | "enum" => TypeClass::Text,
            "boolean" | "bool" => TypeClass::Boolean,
            "date" => TypeClass::Date,
            "time" | "time with time zone" | "time without time zone" | "timetz" => TypeClass::Time,
            _ if base.starts_with("timestamp") || base == "datetime" || base == "timestamptz" => TypeClass::Timestamp,
            _ => TypeClass::Other,
        }
    }

    pub fn is_temporal(self) -> bool {
        matches!(self, TypeClass::Date | TypeClass::Timestamp)
    }

    pub fn is_numeric(self) -> bool {
        matches!(self, TypeClass::Integer | TypeClass::Decimal | TypeClass::Float)
    }
}

#[cfg(test)]
mod tests {
    use super::TypeClass;

    #[test]
    fn classifies_common_names() {
        assert_eq!(TypeClass::of("DECIMAL(12,2)"), TypeClass::Decimal);
        assert_eq!(TypeClass::of("timestamp with time zone"), TypeClass::Timestamp);
        assert_eq!(TypeClass::of("TIMESTAMP_NS"), TypeClass::Timestamp);
        assert_eq!(TypeClass::of("int8"), TypeClass::Integer);
        assert_eq!(TypeClass::of("VARCHAR"), TypeClass::Text);
        assert_eq!(TypeClass::of("date"), TypeClass::Date);
        assert_eq!(TypeClass::of("INTEGER[]"), TypeClass::Integer);
        assert_eq!(TypeClass::of("blob"), TypeClass::Other);
    }
}
