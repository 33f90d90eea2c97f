//! Kubernetes quantities (`4Gi`, `4096Mi`, `1.5G`, `2e9`) as whole bytes, as far as the memory
//! rules compare them (`k8s.io/apimachinery/pkg/api/resource`: `Value()` rounds up).

/// The quantity's value rounded up to a whole number; `None` when it is not a quantity.
pub(super) fn bytes(text: &str) -> Option<u64> {
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(end);
    let number: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        exponent => 10f64.powi(exponent.strip_prefix(['e', 'E'])?.parse().ok()?),
    };
    let value = (number * scale).ceil();
    (value.is_finite() && value >= 0.0 && value < u64::MAX as f64).then_some(value as u64)
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
    }

    #[test]
    fn not_quantities() {
        for text in ["", "Gi", "4Xi", "four", "-1Gi", "1e999"] {
            assert_eq!(bytes(text), None, "{text}");
        }
    }
}
