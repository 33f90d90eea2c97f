//! Kubernetes quantities (`4Gi`, `4096Mi`, `1.5G`, `2e9`) as whole bytes, as far as the memory
//! rules compare them (`k8s.io/apimachinery/pkg/api/resource`: `Value()` rounds up). Exact
//! integer arithmetic: no float parsing or rounding in the module.

/// The quantity's value rounded up to a whole number; `None` when it is not a quantity, is
/// negative, or does not fit a `u64`.
pub(super) fn bytes(text: &str) -> Option<u64> {
    let text = text.strip_prefix('+').unwrap_or(text);
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.len() + fraction.len() == 0 || fraction.contains('.') {
        return None;
    }
    let digits = format!("{whole}{fraction}").parse::<u64>().ok()?;
    let (factor, exponent) = scale(suffix)?;
    let exponent = exponent.checked_sub(i32::try_from(fraction.len()).ok()?)?;
    let value = digits.checked_mul(factor)?;
    let value = match u32::try_from(exponent) {
        Ok(up) => value.checked_mul(10u64.checked_pow(up)?)?,
        Err(_) => value.div_ceil(10u64.checked_pow(exponent.unsigned_abs())?),
    };
    Some(value)
}

/// A suffix as a factor and a power of ten.
fn scale(suffix: &str) -> Option<(u64, i32)> {
    let binary = ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        .iter()
        .position(|s| *s == suffix);
    if let Some(power) = binary {
        return Some((1 << (10 * (power + 1)), 0));
    }
    let exponent = match suffix {
        "n" => -9,
        "u" => -6,
        "m" => -3,
        "" => 0,
        "k" => 3,
        "M" => 6,
        "G" => 9,
        "T" => 12,
        "P" => 15,
        "E" => 18,
        exponent => exponent.strip_prefix(['e', 'E'])?.parse().ok()?,
    };
    Some((1, exponent))
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn binary_decimal_and_exponent_suffixes() {
        assert_eq!(bytes("4Gi"), Some(4 << 30));
        assert_eq!(bytes("4096Mi"), Some(4 << 30));
        assert_eq!(bytes("1.5Gi"), Some(3 << 29));
        assert_eq!(bytes("2G"), Some(2_000_000_000));
        assert_eq!(bytes("2e9"), Some(2_000_000_000));
        assert_eq!(bytes("1500m"), Some(2));
        assert_eq!(bytes("1024"), Some(1024));
        assert_eq!(bytes("+.5Ki"), Some(512));
        assert_eq!(bytes("1.000000001G"), Some(1_000_000_001));
        assert_eq!(bytes("15e-1"), Some(2));
        assert_eq!(bytes("1n"), Some(1));
        assert_eq!(bytes("16Ei"), None, "2^64 does not fit");
    }

    #[test]
    fn not_quantities() {
        for text in [
            "", "Gi", ".", "1.2.3", "4Xi", "four", "-1Gi", "1e999", "1e-999", "1e",
        ] {
            assert_eq!(bytes(text), None, "{text}");
        }
    }
}
