//! `Condition`: a boolean tree of filters (AND, OR; negation pushed into
//! the atoms), generic over the atom so the request (`FilterArg`), the
//! resolved query (`ir::Filter`), the plan (`PlannedFilter`) and the dbt
//! where-string reader share one shape.
//!
//! Architecture invariant: pure data; depends on nothing in the crate.

/// A boolean combination of filters. Negation is pushed into the atoms'
/// operators (`NOT a = 1` is `a != 1`, `NOT (x OR y)` is `NOT x AND NOT y`;
/// both hold in SQL's three-valued logic), so there is no `Not`.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition<F> {
    Atom(F),
    All(Vec<Condition<F>>),
    Any(Vec<Condition<F>>),
}

impl<F> Condition<F> {
    /// Every atom, in reading order.
    pub fn atoms(&self) -> Vec<&F> {
        match self {
            Condition::Atom(f) => vec![f],
            Condition::All(cs) | Condition::Any(cs) => cs.iter().flat_map(Condition::atoms).collect(),
        }
    }

    pub fn atoms_mut(&mut self) -> Vec<&mut F> {
        match self {
            Condition::Atom(f) => vec![f],
            Condition::All(cs) | Condition::Any(cs) => cs.iter_mut().flat_map(Condition::atoms_mut).collect(),
        }
    }

    /// The same tree with each atom mapped; the first error stops it.
    pub fn try_map<G, E>(&self, f: &mut impl FnMut(&F) -> Result<G, E>) -> Result<Condition<G>, E> {
        Ok(match self {
            Condition::Atom(a) => Condition::Atom(f(a)?),
            Condition::All(cs) => Condition::All(cs.iter().map(|c| c.try_map(f)).collect::<Result<_, _>>()?),
            Condition::Any(cs) => Condition::Any(cs.iter().map(|c| c.try_map(f)).collect::<Result<_, _>>()?),
        })
    }
}
