//! Column-name classification into PII categories. Names are split into
//! lower-case words (snake_case and camelCase), so `customerEmail`,
//! `customer_email` and `EMAIL` classify alike, while `product_name` is not
//! contact data and `emailed_count` is not an email.
//!
//! Names only: a column named `attr_1` that holds emails is not caught here
//! (value sampling belongs to indexing). Overrides in `pii_policy.yaml` win.

/// One rule: the category, and word sequences any of which must appear
/// contiguously in the name.
struct Rule {
    category: &'static str,
    any_of: &'static [&'static [&'static str]],
}

const RULES: &[Rule] = &[
    Rule {
        category: "credential",
        any_of: &[
            &["password"], &["passwd"], &["pwd"], &["secret"], &["api", "key"], &["apikey"], &["private", "key"],
            &["access", "token"], &["refresh", "token"], &["auth", "token"], &["token"], &["salt"], &["otp"],
            &["credential"], &["credentials"], &["passwordhash"], &["pin", "code"],
            // es, fr, de, pt, it, nl
            &["contrasena"], &["clave"], &["mot", "de", "passe"], &["motdepasse"], &["passwort"], &["kennwort"],
            &["senha"], &["parola", "chiave"], &["wachtwoord"],
        ],
    },
    Rule {
        category: "payment_card",
        any_of: &[
            &["card", "number"], &["card", "no"], &["card", "num"], &["cc", "number"], &["cc", "num"], &["ccn"], &["cardnumber"], &["credit", "card"],
            &["creditcard"], &["pan"], &["cvv"], &["cvc"], &["card", "fingerprint"], &["card", "last4"],
            &["tarjeta"], &["numero", "tarjeta"], &["carte", "bancaire"], &["kreditkarte"], &["kartennummer"], &["cartao"],
        ],
    },
    Rule {
        category: "government_id",
        any_of: &[
            &["ssn"], &["social", "security"], &["passport"], &["national", "id"], &["tax", "id"], &["taxid"],
            &["tin"], &["driver", "license"], &["drivers", "license"], &["driving", "licence"], &["aadhaar"],
            &["nino"], &["dni"], &["nif"], &["nie"], &["curp"], &["cpf"], &["insee"], &["nir"],
            &["numero", "secu"], &["steuernummer"], &["steuer", "id"], &["personalausweis"], &["ausweisnummer"],
            &["codice", "fiscale"], &["bsn"], &["pesel"], &["personnummer"], &["sin"], &["nhs", "number"],
        ],
    },
    Rule {
        category: "contact",
        any_of: &[
            &["email"], &["e", "mail"], &["phone"], &["mobile"], &["telephone"], &["fax"], &["first", "name"],
            &["last", "name"], &["full", "name"], &["surname"], &["given", "name"], &["family", "name"],
            &["firstname"], &["lastname"], &["fullname"], &["contact", "name"],
            &["correo"], &["telefono"], &["celular"], &["apellido"], &["apellidos"], &["courriel"], &["telephone"],
            &["prenom"], &["nom", "de", "famille"], &["telefon"], &["handy"], &["vorname"],
            &["nachname"], &["telefone"], &["sobrenome"], &["cognome"], &["achternaam"], &["voornaam"],
        ],
    },
    Rule {
        category: "location",
        any_of: &[
            &["address"], &["street"], &["postal", "code"], &["postcode"], &["zip"], &["zipcode"], &["latitude"],
            &["longitude"], &["lat"], &["lon"], &["lng"], &["geo"], &["gps"], &["geolocation"],
            &["direccion"], &["domicilio"], &["codigo", "postal"], &["adresse"], &["code", "postal"], &["strasse"],
            &["anschrift"], &["postleitzahl"], &["plz"], &["endereco"], &["cep"], &["indirizzo"],
        ],
    },
    Rule {
        category: "demographic_protected",
        any_of: &[
            &["dob"], &["birth"], &["birthdate"], &["birthday"], &["gender"], &["sex"], &["race"], &["ethnicity"],
            &["religion"], &["sexual", "orientation"], &["marital", "status"],
            &["fecha", "nacimiento"], &["nacimiento"], &["naissance"], &["geburtsdatum"], &["geburtstag"],
            &["nascimento"], &["nascita"], &["geslacht"], &["sexo"], &["genero"], &["geschlecht"],
        ],
    },
    Rule {
        category: "health",
        any_of: &[
            &["diagnosis"], &["medical"], &["health"], &["blood", "type"], &["prescription"], &["allergy"],
            &["allergies"], &["disability"], &["icd"], &["diagnostico"],
            &["krankheit"], &["medicamento"], &["patient", "notes"],
        ],
    },
    Rule { category: "genetic", any_of: &[&["dna"], &["genome"], &["genetic"], &["genotype"]] },
    Rule {
        category: "biometric",
        any_of: &[&["fingerprint"], &["face", "id"], &["faceprint"], &["retina"], &["iris"], &["voiceprint"], &["biometric"]],
    },
    Rule {
        category: "financial",
        any_of: &[
            &["salary"], &["income"], &["iban"], &["account", "number"], &["bank", "account"], &["routing", "number"],
            &["swift"], &["bic"], &["credit", "score"], &["net", "worth"], &["salario"], &["sueldo"], &["salaire"],
            &["gehalt"], &["einkommen"], &["cuenta", "bancaria"], &["kontonummer"], &["rib"],
        ],
    },
    Rule {
        category: "online_identifier",
        any_of: &[
            &["ip"], &["ip", "address"], &["ipaddress"], &["mac", "address"], &["device", "id"], &["cookie"],
            &["user", "agent"], &["username"], &["user", "name"], &["login"], &["session", "id"], &["imei"], &["idfa"],
        ],
    },
    Rule {
        category: "behavioral",
        any_of: &[&["browsing"], &["clickstream"], &["search", "history"], &["location", "history"]],
    },
];

/// Lower-case words of an identifier: `customerEmail_2` → [customer, email, 2].
pub(crate) fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_ascii_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_ascii_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        cur.push(c.to_ascii_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

fn contains_seq(words: &[String], seq: &[&str]) -> bool {
    words.windows(seq.len()).any(|w| w.iter().zip(seq).all(|(a, b)| a == b))
}

/// The categories a column name suggests, in taxonomy order; empty when the
/// name says nothing sensitive.
///
/// Every request asks this of every column it reads, and the answer depends
/// on the name alone: each name is classified once per process (the map is
/// bounded: past `MAX_REMEMBERED` names it starts over).
pub fn classify_name(name: &str) -> Vec<&'static str> {
    use std::collections::HashMap;
    use std::sync::{OnceLock, RwLock};
    const MAX_REMEMBERED: usize = 65_536;
    static SEEN: OnceLock<RwLock<HashMap<String, Vec<&'static str>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    if let Some(categories) = seen.read().unwrap_or_else(|p| p.into_inner()).get(name) {
        return categories.clone();
    }
    let categories = classify_words(name);
    let mut seen = seen.write().unwrap_or_else(|p| p.into_inner());
    if seen.len() >= MAX_REMEMBERED {
        seen.clear();
    }
    seen.insert(name.to_string(), categories.clone());
    categories
}

fn classify_words(name: &str) -> Vec<&'static str> {
    let w = words(name);
    let mut out: Vec<&'static str> = Vec::new();
    for rule in RULES {
        if rule.any_of.iter().any(|seq| contains_seq(&w, seq)) && !out.contains(&rule.category) {
            out.push(rule.category);
        }
    }
    // A card fingerprint is payment data, not a biometric.
    if out.contains(&"payment_card") {
        out.retain(|c| *c != "biometric");
    }
    // Data about a personal field is not the field: `store_email_template`,
    // `is_phone_verified`, `email_count`. Catastrophic categories stay, on
    // the side of caution (`password_changed_at` still reads as a credential
    // column to a reviewer).
    if is_about_the_field(&w) {
        out.retain(|c| crate::pii::is_catastrophic(c));
    }
    // An e-mail, IP or MAC address is not a place.
    if out.contains(&"location") && only_non_physical_addresses(&w) {
        out.retain(|c| *c != "location");
    }
    // A key into another table (`shipping_address_id`, `home_phone_id`) is
    // a pointer, not the address or the phone: grouping or filtering by it
    // lists row ids. Identifiers that are personal in themselves stay
    // (`national_id`, `device_id`, `session_id`, `genome_id`).
    if w.len() > 1 && w.last().is_some_and(|l| l == "id") {
        out.retain(|c| !["contact", "location", "demographic_protected", "financial", "behavioral"].contains(c));
    }
    out
}

/// Whether `location` came only from `address` words that name something
/// other than a place (`email_address`, `ip_address`, `mac_address`).
fn only_non_physical_addresses(w: &[String]) -> bool {
    const NOT_A_PLACE: &[&str] = &["email", "mail", "ip", "mac", "web", "url", "wallet", "server", "host", "memory"];
    let Some(location) = RULES.iter().find(|r| r.category == "location") else { return false };
    let other_hit = location.any_of.iter().filter(|seq| **seq != ["address"]).any(|seq| contains_seq(w, seq));
    let addresses: Vec<usize> = w.iter().enumerate().filter(|(_, x)| *x == "address").map(|(i, _)| i).collect();
    !other_hit && !addresses.is_empty() && addresses.iter().all(|&i| i.checked_sub(1).and_then(|p| w.get(p)).is_some_and(|x| NOT_A_PLACE.contains(&x.as_str())))
}

/// Last words that make a name describe a field rather than hold it.
const META_SUFFIXES: &[&str] = &[
    "template", "templates", "count", "counts", "flag", "verified", "enabled", "sent", "opened", "bounced",
    "format", "domain", "provider", "preference", "preferences", "consent", "optin", "opt", "valid",
    "validated", "length", "changed", "updated", "source", "label", "field", "mask", "regex",
];

/// First words that make a name a yes/no or a tally about a field.
const META_PREFIXES: &[&str] = &["is", "has", "num", "n", "count", "total", "max", "min"];

fn is_about_the_field(w: &[String]) -> bool {
    w.len() > 1
        && (w.last().is_some_and(|l| META_SUFFIXES.contains(&l.as_str()))
            || w.first().is_some_and(|f| META_PREFIXES.contains(&f.as_str())))
}

#[cfg(test)]
mod tests {
    use super::classify_name;

    #[test]
    fn classifies_by_words_not_substrings() {
        assert_eq!(classify_name("customerEmail"), vec!["contact"]);
        assert_eq!(classify_name("EMAIL"), vec!["contact"]);
        assert_eq!(classify_name("password_hash"), vec!["credential"]);
        assert_eq!(classify_name("date_of_birth"), vec!["demographic_protected"]);
        assert_eq!(classify_name("card_fingerprint"), vec!["payment_card"]);
        assert!(classify_name("shipping_address_id").is_empty(), "a key is a pointer, not an address");
        assert_eq!(classify_name("national_id"), vec!["government_id"]);
        assert_eq!(classify_name("email_address"), vec!["contact"]);
        assert_eq!(classify_name("ip_address"), vec!["online_identifier"]);
        assert_eq!(classify_name("home_address"), vec!["location"]);
        assert_eq!(classify_name("device_id"), vec!["online_identifier"]);
        assert!(classify_name("product_name").is_empty());
        assert!(classify_name("emailed_count").is_empty());
        assert!(classify_name("zipper_color").is_empty());
        assert!(classify_name("amount").is_empty());
        assert!(classify_name("status").is_empty());
        assert!(classify_name("store_email_template").is_empty());
        assert!(classify_name("is_phone_verified").is_empty());
        assert!(classify_name("market_cap").is_empty());
        assert_eq!(classify_name("marital_status"), vec!["demographic_protected"]);
        assert_eq!(classify_name("blood_type"), vec!["health"]);
        assert_eq!(classify_name("password_changed_at"), vec!["credential"]);
        assert_eq!(classify_name("fecha_nacimiento"), vec!["demographic_protected"]);
        assert_eq!(classify_name("mot_de_passe"), vec!["credential"]);
        assert_eq!(classify_name("Geburtsdatum"), vec!["demographic_protected"]);
        assert_eq!(classify_name("codice_fiscale"), vec!["government_id"]);
        assert_eq!(classify_name("correoElectronico"), vec!["contact"]);
    }
}
