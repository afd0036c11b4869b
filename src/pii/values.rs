//! Value classification: which PII category a column's sampled values show,
//! whatever the column is called (`attr_1` holding e-mails). Each detector
//! checks the shape and, where there is one, the checksum (Luhn for cards,
//! mod-97 for IBANs), so ids and amounts do not pass for personal data.
//!
//! A column is tagged when most of its non-empty sampled values match one
//! detector (`MIN_SHARE`); the evidence names the detector and the share.
//!
//! Architecture invariant: pure over strings; sampling is `index`'s job.

/// Share of non-empty samples that must match a detector.
pub const MIN_SHARE: f64 = 0.8;

/// Fewest non-empty samples a verdict is drawn from.
pub const MIN_SAMPLES: usize = 3;

/// A detector's verdict on a column's samples.
#[derive(Clone, Debug, PartialEq)]
pub struct ValueMatch {
    pub category: &'static str,
    /// What matched: `email`, `payment card (Luhn)`, …
    pub kind: &'static str,
    /// Share of non-empty samples that matched, 0..=1.
    pub share: f64,
}

impl ValueMatch {
    pub fn evidence(&self) -> String {
        format!("values: {:.0}% of samples look like {}", self.share * 100.0, self.kind)
    }
}

type Detector = (&'static str, &'static str, fn(&str) -> bool);

/// Most specific first: a card number is also all digits, an SSN also
/// looks like a phone fragment.
const DETECTORS: &[Detector] = &[
    ("payment_card", "payment card numbers (Luhn)", is_card_number),
    ("financial", "IBANs (mod-97)", is_iban),
    ("government_id", "US social security numbers", is_ssn),
    ("contact", "e-mail addresses", is_email),
    ("online_identifier", "IP addresses", is_ip),
    ("location", "coordinates", is_coordinate_pair),
    ("contact", "phone numbers", is_phone),
];

/// The detector most samples match, if any reaches `MIN_SHARE`.
pub fn classify_values<S: AsRef<str>>(samples: &[S]) -> Option<ValueMatch> {
    let values: Vec<&str> = samples.iter().map(|s| s.as_ref().trim()).filter(|s| !s.is_empty()).collect();
    if values.len() < MIN_SAMPLES {
        return None;
    }
    let n = values.len() as f64;
    DETECTORS
        .iter()
        .map(|(category, kind, f)| ValueMatch { category, kind, share: values.iter().filter(|v| f(v)).count() as f64 / n })
        .filter(|m| m.share >= MIN_SHARE)
        // The highest share wins; on a tie, the more specific detector (listed first).
        .fold(None, |best: Option<ValueMatch>, m| match best {
            Some(b) if b.share >= m.share => Some(b),
            _ => Some(m),
        })
}

/// Birth dates from a date column's range: nobody younger than 13, nobody
/// born before 1900, and a spread of at least 20 years (event dates such as
/// signups span a few years and reach the present).
pub fn looks_like_birth_dates(min_year: i32, max_year: i32, current_year: i32) -> bool {
    min_year >= 1900 && max_year <= current_year - 13 && max_year - min_year >= 20
}

fn digits(s: &str) -> Vec<u32> {
    s.chars().filter_map(|c| c.to_digit(10)).collect()
}

/// A payment card number: 13 to 19 digits (spaces and dashes allowed) passing Luhn.
pub fn is_card_number(s: &str) -> bool {
    if !s.chars().all(|c| c.is_ascii_digit() || c == ' ' || c == '-') {
        return false;
    }
    let d = digits(s);
    if !(13..=19).contains(&d.len()) || d.windows(2).all(|w| w.first() == w.last()) {
        return false;
    }
    let sum: u32 = d
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &x)| if i % 2 == 1 { if x * 2 > 9 { x * 2 - 9 } else { x * 2 } } else { x })
        .sum();
    sum.is_multiple_of(10)
}

fn is_iban(s: &str) -> bool {
    let compact: String = s.chars().filter(|c| *c != ' ').collect::<String>().to_ascii_uppercase();
    let b = compact.as_bytes();
    let starts_like_iban = matches!(b, [c0, c1, d0, d1, ..] if c0.is_ascii_alphabetic() && c1.is_ascii_alphabetic() && d0.is_ascii_digit() && d1.is_ascii_digit());
    if !(15..=34).contains(&b.len()) || !starts_like_iban || !b.iter().all(u8::is_ascii_alphanumeric) {
        return false;
    }
    let rearranged = compact[4..].chars().chain(compact[..4].chars());
    let mut rem: u64 = 0;
    for c in rearranged {
        let v = c.to_digit(36).unwrap_or(0) as u64;
        rem = if v >= 10 { (rem * 100 + v) % 97 } else { (rem * 10 + v) % 97 };
    }
    rem == 1
}

fn is_ssn(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [area, group, serial] = parts.as_slice() else { return false };
    [3, 2, 4].iter().zip(&parts).all(|(n, p)| p.len() == *n && p.bytes().all(|b| b.is_ascii_digit()))
        && *area != "000"
        && *area != "666"
        && *group != "00"
        && *serial != "0000"
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.split_once('@') else { return false };
    !local.is_empty()
        && !domain.contains('@')
        && !s.contains(char::is_whitespace)
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && domain.rsplit('.').next().is_some_and(|tld| tld.len() >= 2 && tld.chars().all(|c| c.is_ascii_alphabetic()))
}

fn is_ip(s: &str) -> bool {
    s.parse::<std::net::IpAddr>().is_ok()
}

fn is_coordinate_pair(s: &str) -> bool {
    let Some((a, b)) = s.split_once(',') else { return false };
    let precise = |x: &str| x.trim().split_once('.').is_some_and(|(_, frac)| frac.len() >= 3);
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(lat), Ok(lon)) => lat.abs() <= 90.0 && lon.abs() <= 180.0 && precise(a) && precise(b),
        _ => false,
    }
}

fn is_phone(s: &str) -> bool {
    if !s.chars().all(|c| c.is_ascii_digit() || " +-().".contains(c)) || is_iso_date(s) {
        return false;
    }
    let n = digits(s).len();
    let formatted = s.starts_with('+') || s.contains('(') || s.contains(' ') || s.matches('-').count() >= 2 || s.matches('.').count() >= 2;
    (7..=15).contains(&n) && formatted && s.chars().filter(|c| "+".contains(*c)).count() <= 1
}

fn is_iso_date(s: &str) -> bool {
    let b = s.as_bytes();
    matches!(b, [y0, y1, y2, y3, b'-', _, _, b'-', _, _, ..] if [y0, y1, y2, y3].iter().all(|d| d.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detectors_check_shapes_and_checksums() {
        assert!(is_card_number("4111 1111 1111 1111"));
        assert!(!is_card_number("4111 1111 1111 1112"), "Luhn fails");
        assert!(!is_card_number("1111111111111111"), "one repeated digit is a placeholder, not a card");
        assert!(is_iban("DE89 3704 0044 0532 0130 00"));
        assert!(is_iban("GB82WEST12345698765432"));
        assert!(!is_iban("GB82WEST12345698765433"));
        assert!(is_ssn("123-45-6789"));
        assert!(!is_ssn("000-45-6789"));
        assert!(is_email("a.b@example.co.uk"));
        assert!(!is_email("not an email @ x"));
        assert!(!is_email("store@template"));
        assert!(is_ip("192.168.0.1") && is_ip("2001:db8::1"));
        assert!(!is_ip("1.2.3"));
        assert!(is_coordinate_pair("52.5200, 13.4050"));
        assert!(!is_coordinate_pair("1,2"));
        assert!(is_phone("+49 30 1234567") && is_phone("(555) 123-4567"));
        assert!(!is_phone("2024-01-02") && !is_phone("12345"));
    }

    #[test]
    fn a_column_is_tagged_by_most_of_its_samples() {
        let emails = ["a@x.com", "b@y.org", "c@z.net", "d@w.io", "n/a"];
        let m = classify_values(&emails).expect("4 of 5 are e-mails");
        assert_eq!(m.category, "contact");
        let mixed = ["a@x.com", "b", "c", "d"];
        assert_eq!(classify_values(&mixed), None);
        let ids = ["10045", "10046", "10047", "10048"];
        assert_eq!(classify_values(&ids), None, "plain ids are not phones");
        let amounts = ["12.50", "3.99", "100.00"];
        assert_eq!(classify_values(&amounts), None);
        assert!(looks_like_birth_dates(1940, 2005, 2026));
        assert!(!looks_like_birth_dates(2019, 2026, 2026), "signup dates reach the present");
    }
}
