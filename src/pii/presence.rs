//! Presence tests in a computed column's SQL: `col IS NULL` and
//! `col IS NOT NULL` say whether a value is there, never which one, so a
//! column read only that way is not read for its value (DESIGN, PII: a
//! presence test is allowed on any column, as `COUNT(col)` is).
//!
//! Owns which words of an expression are read for their value. Parses with
//! sqlparser's generic dialect, never with our `sql` module, and fails
//! closed: an expression it cannot parse reads every word it holds.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Value};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

/// The words of `expr` (as `model::expr_words` finds them) that it may
/// read for their value: every one, except those that appear only as the
/// bare operand of `IS NULL` / `IS NOT NULL`. `phone is not null` reads
/// nothing; `case when phone is null then 'none' else phone end` reads
/// `phone`; `nullif(phone, '555') is null` reads `phone` (the test is on
/// an expression that depends on the value, not on the column alone).
pub fn value_words(expr: &str) -> Vec<String> {
    let all = crate::model::expr_words(expr);
    // Nothing to take away without a presence test (the common case costs no parse).
    if !all.iter().any(|w| w.eq_ignore_ascii_case("null")) {
        return all;
    }
    let Some(mut parsed) = parse(expr) else { return all };
    let _ = sqlparser::ast::visit_expressions_mut(&mut parsed, |node| {
        let presence = matches!(node, Expr::IsNull(x) | Expr::IsNotNull(x) if is_bare_column(x));
        if presence {
            *node = Expr::value(Value::Boolean(true));
        }
        ControlFlow::<()>::Continue(())
    });
    crate::model::expr_words(&parsed.to_string())
}

fn parse(expr: &str) -> Option<Expr> {
    let mut parser = Parser::new(&GenericDialect {}).try_with_sql(expr).ok()?;
    let e = parser.parse_expr().ok()?;
    matches!(parser.peek_token().token, sqlparser::tokenizer::Token::EOF).then_some(e)
}

/// A column named alone (`phone`, `c.phone`, `(phone)`).
fn is_bare_column(e: &Expr) -> bool {
    match e {
        Expr::Identifier(_) | Expr::CompoundIdentifier(_) => true,
        Expr::Nested(inner) => is_bare_column(inner),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::value_words;

    fn reads(expr: &str, word: &str) -> bool {
        value_words(expr).iter().any(|w| w == word)
    }

    #[test]
    fn presence_alone_reads_no_value() {
        for e in ["phone is not null", "PHONE IS NULL", "(phone) IS NOT NULL", "c.phone is null", "\"phone\" is not null", "not phone is null"] {
            assert!(!reads(e, "phone") && !reads(e, "PHONE"), "{e}: {:?}", value_words(e));
        }
        let e = "case when phone is null then 'none' when email is not null then 'mail' else 'phone' end";
        assert!(!reads(e, "phone") && !reads(e, "email"), "{:?}", value_words(e));
    }

    #[test]
    fn a_value_anywhere_is_read() {
        for e in [
            "case when phone is null then 'none' else phone end",
            "nullif(phone, '555') is null",
            "phone || 'x' is null",
            "phone = '555' is null",
            "coalesce(phone, 'x')",
            "split_part(phone, '-', 1)",
            // Not one expression: every word counts.
            "phone is null; select phone",
            "phone is null)",
        ] {
            assert!(reads(e, "phone"), "{e}: {:?}", value_words(e));
        }
        // No presence test: the words as they are.
        assert_eq!(value_words("upper(email)"), crate::model::expr_words("upper(email)"));
    }
}
