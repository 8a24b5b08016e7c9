//! Numbers by value: integers compared exactly (as `i128`, never through `f64`), an integer
//! against a fraction without rounding, and `multipleOf` on the decimals as written.

use std::cmp::Ordering;

use serde_json::{Number, Value};

pub(super) fn number(value: &Value) -> Option<&Number> {
    value.as_number()
}

/// A number as its exact integer value, when it has no fractional part and fits.
pub(super) fn exact(n: &Number) -> Option<i128> {
    if let Some(i) = n.as_i64() {
        return Some(i.into());
    }
    if let Some(u) = n.as_u64() {
        return Some(u.into());
    }
    let f = n.as_f64()?;
    // Beyond ±2^100 an integer is only compared as a float (no JSON value needs more).
    (f.fract() == 0.0 && f.abs() < 1.0e30).then_some(f as i128)
}

/// Whether a number has no fractional part (2020-12's `integer`: `1.0` is one).
pub(super) fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.is_finite() && f.fract() == 0.0)
}

/// Numbers by value: exactly for integers, an integer against a fraction without rounding.
pub(super) fn compare(a: &Number, b: &Number) -> Ordering {
    match (exact(a), exact(b)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(x), None) => compare_int_float(x, b.as_f64().unwrap_or(0.0)),
        (None, Some(y)) => compare_int_float(y, a.as_f64().unwrap_or(0.0)).reverse(),
        (None, None) => {
            let (x, y) = (a.as_f64().unwrap_or(0.0), b.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
    }
}

/// An integer against a float that is not an exact integer (it has a fractional part, or is
/// beyond `i128`'s comfortable range): compared with the float's floor, so nothing rounds.
fn compare_int_float(i: i128, f: f64) -> Ordering {
    if f.abs() >= 1.0e30 {
        return if f > 0.0 { Ordering::Less } else { Ordering::Greater };
    }
    // `f` has a fractional part, so it lies strictly between floor(f) and floor(f) + 1.
    let floor = f.floor() as i128;
    if i <= floor { Ordering::Less } else { Ordering::Greater }
}

/// `multipleOf`, exactly: integers by remainder, and fractions as the decimals they are written
/// as (`0.3` is a multiple of `0.1`, although `0.3 / 0.1` in floating point is not a whole
/// number). Only numbers too large for that (beyond 38 digits once aligned) fall back to
/// floating point: the quotient must be a whole number.
pub(super) fn is_multiple_of(n: &Number, m: &Number) -> bool {
    if let (Some(x), Some(y)) = (exact(n), exact(m))
        && y != 0
    {
        return x % y == 0;
    }
    if let (Some((x, ex)), Some((y, ey))) = (decimal(n), decimal(m))
        && y != 0
    {
        let e = ex.min(ey);
        let scale = |mantissa: i128, by: i32| {
            u32::try_from(by).ok().and_then(|by| 10i128.checked_pow(by)).and_then(|p| mantissa.checked_mul(p))
        };
        if let (Some(x), Some(y)) = (scale(x, ex - e), scale(y, ey - e)) {
            return x % y == 0;
        }
    }
    let (x, y) = (n.as_f64().unwrap_or(0.0), m.as_f64().unwrap_or(1.0));
    let q = x / y;
    q.is_finite() && q.fract() == 0.0
}

/// A number as `mantissa × 10^exponent`, read from its shortest decimal form (`2.5e-3` is
/// `(25, -4)`); `None` past 38 digits.
fn decimal(n: &Number) -> Option<(i128, i32)> {
    let text = n.to_string();
    let (number, exponent) = match text.split_once(['e', 'E']) {
        Some((number, exponent)) => (number.to_owned(), exponent.parse::<i32>().ok()?),
        None => (text, 0),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((&number, ""));
    let digits = format!("{whole}{fraction}");
    let mantissa: i128 = digits.parse().ok()?;
    let places = i32::try_from(fraction.len()).ok()?;
    Some((mantissa, exponent.checked_sub(places)?))
}
