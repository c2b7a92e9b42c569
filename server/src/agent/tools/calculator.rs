//! The `calculator` tool: evaluates arithmetic with `+ - * / % ^`, parentheses and
//! decimals, by recursive descent. Errors (syntax, division by zero) are results.

use serde_json::{json, Value};

use super::{Tool, ToolCall, ToolSpec};

/// Longest expression accepted.
const MAX_LEN: usize = 500;
/// Deepest parenthesis nesting accepted.
const MAX_DEPTH: usize = 64;

/// Evaluates arithmetic.
pub struct Calculator;

impl Tool for Calculator {
    fn spec(&self) -> ToolSpec {
        ToolSpec {
            name: "calculator".into(),
            description: "Evaluates an arithmetic expression, e.g. \"(2 + 3) * 4 ^ 2 / 7\".".into(),
            parameters: json!({
                "type": "object",
                "properties": {"expression": {"type": "string", "minLength": 1, "maxLength": MAX_LEN}},
                "required": ["expression"],
                "additionalProperties": false
            }),
        }
    }

    fn call(&self, arguments: Value, _: &super::ToolContext) -> ToolCall {
        let expression = arguments["expression"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        Box::pin(async move {
            let result = evaluate(&expression)?;
            Ok(json!({"expression": expression, "result": number(result)}))
        })
    }
}

/// A whole result as a JSON integer (`84`, not `84.0`), anything else as a float.
fn number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 9.0e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// Evaluates `expression`.
pub fn evaluate(expression: &str) -> Result<f64, String> {
    let tokens: Vec<char> = expression
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '×' | 'x' => '*',
            '÷' => '/',
            other => other,
        })
        .collect();
    let mut parser = Parser { tokens, at: 0 };
    let value = parser.sum(0)?;
    if parser.at < parser.tokens.len() {
        return Err(format!("unexpected `{}`", parser.tokens[parser.at]));
    }
    if !value.is_finite() {
        return Err("the result is not a finite number".into());
    }
    Ok(value)
}

struct Parser {
    tokens: Vec<char>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.tokens.get(self.at).copied()
    }

    fn sum(&mut self, depth: usize) -> Result<f64, String> {
        let mut value = self.product(depth)?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.at += 1;
            let rhs = self.product(depth)?;
            value = if op == '+' { value + rhs } else { value - rhs };
        }
        Ok(value)
    }

    fn product(&mut self, depth: usize) -> Result<f64, String> {
        let mut value = self.power(depth)?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.at += 1;
            let rhs = self.power(depth)?;
            if op != '*' && rhs == 0.0 {
                return Err("division by zero".into());
            }
            value = match op {
                '*' => value * rhs,
                '/' => value / rhs,
                _ => value % rhs,
            };
        }
        Ok(value)
    }

    fn power(&mut self, depth: usize) -> Result<f64, String> {
        let base = self.unary(depth)?;
        if self.peek() == Some('^') {
            self.at += 1;
            let exponent = self.power(depth + 1)?;
            return Ok(base.powf(exponent));
        }
        Ok(base)
    }

    fn unary(&mut self, depth: usize) -> Result<f64, String> {
        if depth > MAX_DEPTH {
            return Err("the expression is nested too deeply".into());
        }
        match self.peek() {
            Some('-') => {
                self.at += 1;
                Ok(-self.unary(depth + 1)?)
            }
            Some('+') => {
                self.at += 1;
                self.unary(depth + 1)
            }
            Some('(') => {
                self.at += 1;
                let value = self.sum(depth + 1)?;
                if self.peek() != Some(')') {
                    return Err("missing `)`".into());
                }
                self.at += 1;
                Ok(value)
            }
            _ => self.number(),
        }
    }

    fn number(&mut self) -> Result<f64, String> {
        let start = self.at;
        while matches!(self.peek(), Some('0'..='9' | '.')) {
            self.at += 1;
        }
        if start == self.at {
            return Err(match self.peek() {
                Some(c) => format!("expected a number, found `{c}`"),
                None => "the expression ended early".into(),
            });
        }
        let text: String = self.tokens[start..self.at].iter().collect();
        text.parse()
            .map_err(|_| format!("`{text}` is not a number"))
    }
}

#[cfg(test)]
mod tests {
    use super::evaluate;

    #[test]
    fn precedence_parentheses_and_unary_minus() {
        assert_eq!(evaluate("2 + 3 * 4"), Ok(14.0));
        assert_eq!(evaluate("(2 + 3) * 4"), Ok(20.0));
        assert_eq!(evaluate("-2 ^ 2"), Ok(4.0));
        assert_eq!(evaluate("2 ^ 3 ^ 2"), Ok(512.0));
        assert_eq!(evaluate("12 × 7"), Ok(84.0));
        assert_eq!(evaluate("7 % 4"), Ok(3.0));
    }

    #[test]
    fn errors_are_explained() {
        assert_eq!(evaluate("1/0"), Err("division by zero".into()));
        assert!(evaluate("(1+2").unwrap_err().contains("missing"));
        assert!(evaluate("1+").unwrap_err().contains("ended early"));
        assert!(evaluate(&"(".repeat(200)).unwrap_err().contains("nested"));
    }
}
