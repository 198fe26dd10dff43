//! How counts are written for people: one rule for every command's messages and tables.

/// A count with thousands separators, as every command prints counts for people (CSV and JSON
/// keep plain digits).
///
/// ```
/// use pawndex::model::numbers::thousands;
/// assert_eq!(thousands(1_234_567u64), "1,234,567");
/// assert_eq!(thousands(999u64), "999");
/// assert_eq!(thousands(-12_345i64), "-12,345");
/// ```
#[must_use]
pub fn thousands(n: impl Into<i128>) -> String {
    let n: i128 = n.into();
    let digits = n.unsigned_abs().to_string();
    let mut s = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if n < 0 {
        s.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            s.push(',');
        }
        s.push(c);
    }
    s
}
