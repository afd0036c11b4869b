//! Measure expressions: anchor columns, numeric literals, `+ - * /` and
//! parentheses. Nothing else parses, so nothing else reaches SQL.
//!
//! Expressions are bounded ([`MAX_EXPRESSION_CHARS`], [`MAX_EXPRESSION_DEPTH`])
//! before any tree is built deeper than the bound: every later pass (column
//! collection, SQL building, drop) recurses over the tree, and a tree 100,000
//! levels deep would overflow the stack instead of failing with a message.

use super::is_identifier;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl ArithOp {
    pub fn symbol(self) -> char {
        match self {
            ArithOp::Add => '+',
            ArithOp::Sub => '-',
            ArithOp::Mul => '*',
            ArithOp::Div => '/',
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum MeasureExpr {
    Column(String),
    /// The literal's text as written, checked to be a finite number.
    Number(String),
    Neg(Box<MeasureExpr>),
    Binary(ArithOp, Box<MeasureExpr>, Box<MeasureExpr>),
}

/// The longest expression text accepted, in characters.
pub const MAX_EXPRESSION_CHARS: usize = 4096;
/// The deepest expression tree accepted: nested parentheses, signs and
/// chained operators each add a level.
pub const MAX_EXPRESSION_DEPTH: usize = 64;

impl MeasureExpr {
    /// Parses an expression; the error says what was wrong and where
    /// (a character offset).
    pub fn parse(text: &str) -> Result<MeasureExpr, String> {
        let chars = text.chars().count();
        if chars > MAX_EXPRESSION_CHARS {
            return Err(format!("the expression is {chars} characters long; at most {MAX_EXPRESSION_CHARS} are allowed"));
        }
        let tokens = tokenize(text)?;
        let mut p = Parser { tokens: &tokens, pos: 0 };
        let (expr, _) = p.sum(0)?;
        if let Some(t) = p.tokens.get(p.pos) {
            if t.text == "(" {
                return Err(format!(
                    "function calls are not allowed (offset {}): write the arithmetic with columns, numbers, + - * / and parentheses",
                    t.offset
                ));
            }
            return Err(format!("unexpected `{}` at offset {}", t.text, t.offset));
        }
        if expr.columns().is_empty() {
            return Err("an expression must use at least one column".to_string());
        }
        Ok(expr)
    }

    /// Columns in first-use order, without repeats.
    pub fn columns(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_columns(&mut out);
        out
    }

    fn collect_columns<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            MeasureExpr::Column(c) => {
                if !out.contains(&c.as_str()) {
                    out.push(c);
                }
            }
            MeasureExpr::Number(_) => {}
            MeasureExpr::Neg(e) => e.collect_columns(out),
            MeasureExpr::Binary(_, l, r) => {
                l.collect_columns(out);
                r.collect_columns(out);
            }
        }
    }
}

struct Token {
    text: String,
    offset: usize,
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    while let Some(&(offset, c)) = chars.get(i) {
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == '_' {
            while chars.get(i).is_some_and(|(_, c)| c.is_ascii_alphanumeric() || *c == '_' || *c == '$') {
                i += 1;
            }
        } else if c.is_ascii_digit() || c == '.' {
            while chars.get(i).is_some_and(|(_, c)| c.is_ascii_digit() || *c == '.') {
                i += 1;
            }
        } else if "+-*/()".contains(c) {
            i += 1;
        } else {
            return Err(format!("`{c}` at offset {offset} is not allowed; use columns, numbers, + - * / and parentheses"));
        }
        out.push(Token { text: chars.get(start..i).unwrap_or_default().iter().map(|(_, c)| c).collect(), offset });
    }
    Ok(out)
}

struct Parser<'t> {
    tokens: &'t [Token],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.tokens.get(self.pos).map(|t| t.text.as_str())
    }

    /// Fails once a subtree would be deeper than the bound; `depth` is the
    /// level the next node sits at.
    fn deeper(&self, depth: usize) -> Result<usize, String> {
        if depth >= MAX_EXPRESSION_DEPTH {
            let offset = self.tokens.get(self.pos).map_or(0, |t| t.offset);
            return Err(format!(
                "the expression nests deeper than {MAX_EXPRESSION_DEPTH} levels (at offset {offset}); split it into measures or derived metrics"
            ));
        }
        Ok(depth + 1)
    }

    /// Each parse function returns the tree and its height.
    fn sum(&mut self, depth: usize) -> Result<(MeasureExpr, usize), String> {
        let (mut left, mut height) = self.product(depth)?;
        while let Some(op) = self.peek().and_then(|t| match t {
            "+" => Some(ArithOp::Add),
            "-" => Some(ArithOp::Sub),
            _ => None,
        }) {
            self.pos += 1;
            // A chain `a + b + c` is a left-deep tree: each operator adds a level.
            self.deeper(depth + height)?;
            let (right, h) = self.product(depth + 1)?;
            left = MeasureExpr::Binary(op, Box::new(left), Box::new(right));
            height = height.max(h) + 1;
        }
        Ok((left, height))
    }

    fn product(&mut self, depth: usize) -> Result<(MeasureExpr, usize), String> {
        let (mut left, mut height) = self.unary(depth)?;
        while let Some(op) = self.peek().and_then(|t| match t {
            "*" => Some(ArithOp::Mul),
            "/" => Some(ArithOp::Div),
            _ => None,
        }) {
            self.pos += 1;
            self.deeper(depth + height)?;
            let (right, h) = self.unary(depth + 1)?;
            left = MeasureExpr::Binary(op, Box::new(left), Box::new(right));
            height = height.max(h) + 1;
        }
        Ok((left, height))
    }

    fn unary(&mut self, depth: usize) -> Result<(MeasureExpr, usize), String> {
        if self.peek() == Some("-") {
            self.pos += 1;
            let (inner, h) = self.unary(self.deeper(depth)?)?;
            return Ok((MeasureExpr::Neg(Box::new(inner)), h + 1));
        }
        self.atom(depth)
    }

    fn atom(&mut self, depth: usize) -> Result<(MeasureExpr, usize), String> {
        let Some(token) = self.tokens.get(self.pos) else {
            return Err("the expression ends too early".to_string());
        };
        self.pos += 1;
        let t = token.text.as_str();
        if t == "(" {
            let inner = self.sum(self.deeper(depth)?)?;
            if self.peek() != Some(")") {
                return Err(format!("missing `)` for the `(` at offset {}", token.offset));
            }
            self.pos += 1;
            return Ok(inner);
        }
        if is_identifier(t) {
            return Ok((MeasureExpr::Column(t.to_string()), 1));
        }
        if t.parse::<f64>().is_ok_and(f64::is_finite) && t.chars().next().is_some_and(|c| c.is_ascii_digit()) {
            return Ok((MeasureExpr::Number(t.to_string()), 1));
        }
        Err(format!("unexpected `{}` at offset {}", crate::model::echo(t), token.offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_precedence_and_columns() {
        let e = MeasureExpr::parse("quantity * (unit_price - 0.5) / quantity").unwrap();
        assert_eq!(e.columns(), vec!["quantity", "unit_price"]);
        match e {
            MeasureExpr::Binary(ArithOp::Div, l, _) => assert!(matches!(*l, MeasureExpr::Binary(ArithOp::Mul, _, _))),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn rejects_what_is_not_arithmetic() {
        assert!(MeasureExpr::parse("1 + 2").unwrap_err().contains("at least one column"));
        assert!(MeasureExpr::parse("a; drop table x").is_err());
        assert!(MeasureExpr::parse("sum(a)").is_err());
        assert!(MeasureExpr::parse("(a + b").unwrap_err().contains("missing `)`"));
        assert!(MeasureExpr::parse("a 'x'").is_err());
        assert!(MeasureExpr::parse("1..2 * a").is_err());
    }

    #[test]
    fn deep_or_long_expressions_fail_with_a_message() {
        let nested = format!("{}a{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(MeasureExpr::parse(&nested).unwrap_err().contains("characters long"));
        let nested = format!("{}a{}", "(".repeat(1000), ")".repeat(1000));
        assert!(MeasureExpr::parse(&nested).unwrap_err().contains("nests deeper than 64"));
        let chain = vec!["a"; 1000].join(" + ");
        assert!(MeasureExpr::parse(&chain).unwrap_err().contains("nests deeper"));
        let signs = format!("{}a", "-".repeat(1000));
        assert!(MeasureExpr::parse(&signs).unwrap_err().contains("nests deeper"));
        // Up to the bound, it parses.
        let ok = vec!["a"; 60].join(" + ");
        assert_eq!(MeasureExpr::parse(&ok).unwrap().columns(), ["a"]);
        let ok = format!("{}a{}", "(".repeat(60), ")".repeat(60));
        assert!(MeasureExpr::parse(&ok).is_ok());
    }
}
