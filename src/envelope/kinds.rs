//! The closed vocabularies of the envelope: status, error kinds, error codes
//! and degradation reasons.
//!
//! Variants carry no doc comments on purpose: a documented variant makes
//! schemars emit a `oneOf` of constants instead of a plain `enum` list, and
//! the schema must state each vocabulary as a plain `enum`. Each type's doc
//! comment (its schema description) explains the values instead.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Outcome of a tool call. `success`: the requested data. `empty`: ran, nothing matched (not an error). `partial`: some data, with caveats. `degraded`: data from a fallback path, see `degradation_reason`. `error`: could not process, see `error`. `refused`: ran and chose to refuse (PII or policy), see `error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Success,
    Empty,
    Partial,
    Degraded,
    Error,
    Refused,
}

impl Status {
    /// The wire name, identical to the serde form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Empty => "empty",
            Self::Partial => "partial",
            Self::Degraded => "degraded",
            Self::Error => "error",
            Self::Refused => "refused",
        }
    }
}

/// Coarse, transport-level error code (MCP data-provider spec). Clients that do not switch on `kind` can switch on this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum ErrorCode {
    QueryFailed,
    Timeout,
    Unauthorized,
    InvalidInput,
    ResultTruncated,
    NotFound,
    RateLimited,
    Internal,
}

impl ErrorCode {
    /// The wire name, identical to the serde form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::QueryFailed => "QUERY_FAILED",
            Self::Timeout => "TIMEOUT",
            Self::Unauthorized => "UNAUTHORIZED",
            Self::InvalidInput => "INVALID_INPUT",
            Self::ResultTruncated => "RESULT_TRUNCATED",
            Self::NotFound => "NOT_FOUND",
            Self::RateLimited => "RATE_LIMITED",
            Self::Internal => "INTERNAL",
        }
    }
}

/// Why a `degraded` response is degraded. `fan_out_join`: a one-to-many or many-to-many join was crossed, aggregates may be inflated. `missing_order_by_with_limit`: limit with group_by but no order_by, so the slice is non-deterministic. `time_dimension_unavailable`: time_grain was asked for but no reachable timestamp column exists, so results are unbucketed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum DegradationReason {
    FanOutJoin,
    MissingOrderByWithLimit,
    TimeDimensionUnavailable,
}

impl DegradationReason {
    /// The wire name, identical to the serde form.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::FanOutJoin => "fan_out_join",
            Self::MissingOrderByWithLimit => "missing_order_by_with_limit",
            Self::TimeDimensionUnavailable => "time_dimension_unavailable",
        }
    }
}

/// Declares the error-kind registry once, as a table of `Variant = "wire_name" => CODE`.
///
/// From it come the wire enum `ErrorKind` (all 26 kinds, in the charter's
/// registry order) and the two constructor-side subsets: `FailureKind` (kinds
/// that produce status `error`) and `RefusalKind` (kinds that produce status
/// `refused`). The split lets the type system, not a runtime check, keep
/// refusal kinds out of `error` envelopes and vice versa. The registry order
/// interleaves the groups (v1.0 failures, v1.1 refusals, later failures),
/// hence two failure blocks.
macro_rules! error_kinds {
    (
        failures { $($a:ident = $a_name:literal => $a_code:ident,)* }
        refusals { $($r:ident = $r_name:literal => $r_code:ident,)* }
        failures { $($b:ident = $b_name:literal => $b_code:ident,)* }
    ) => {
        /// Machine-readable failure kind: a closed registry of 26 names the agent can switch on. `pii_blocked`, `policy_blocked` and `allowlist_violation` are refusals (status `refused`); every other kind is an error (status `error`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
        pub enum ErrorKind {
            $(#[serde(rename = $a_name)] $a,)*
            $(#[serde(rename = $r_name)] $r,)*
            $(#[serde(rename = $b_name)] $b,)*
        }

        /// The error kinds that are not refusals: the only kinds
        /// [`ToolError::new`](super::ToolError::new) accepts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum FailureKind {
            $($a,)*
            $($b,)*
        }

        /// The three refusal kinds: the only kinds
        /// [`ToolError::refusal`](super::ToolError::refusal) accepts.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum RefusalKind {
            $($r,)*
        }

        impl ErrorKind {
            /// Every kind, in the charter's registry order.
            pub const ALL: [ErrorKind; 26] = [$(Self::$a,)* $(Self::$r,)* $(Self::$b,)*];

            /// The wire name, identical to the serde form.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$a => $a_name,)*
                    $(Self::$r => $r_name,)*
                    $(Self::$b => $b_name,)*
                }
            }

            /// The default transport code of this kind. Two constructors
            /// override it, see [`ToolError::timeout`](super::ToolError::timeout)
            /// and [`ToolError::query_failed`](super::ToolError::query_failed).
            pub const fn code(self) -> ErrorCode {
                match self {
                    $(Self::$a => ErrorCode::$a_code,)*
                    $(Self::$r => ErrorCode::$r_code,)*
                    $(Self::$b => ErrorCode::$b_code,)*
                }
            }

            /// True for the three kinds that belong to status `refused`.
            pub const fn is_refusal(self) -> bool {
                matches!(self, $(Self::$r)|*)
            }
        }

        impl From<FailureKind> for ErrorKind {
            fn from(kind: FailureKind) -> Self {
                match kind {
                    $(FailureKind::$a => Self::$a,)*
                    $(FailureKind::$b => Self::$b,)*
                }
            }
        }

        impl From<RefusalKind> for ErrorKind {
            fn from(kind: RefusalKind) -> Self {
                match kind {
                    $(RefusalKind::$r => Self::$r,)*
                }
            }
        }
    };
}

error_kinds! {
    failures {
        UnknownName = "unknown_name" => NotFound,
        MalformedName = "malformed_name" => InvalidInput,
        MissingCredential = "missing_credential" => Unauthorized,
        IndexNotReady = "index_not_ready" => NotFound,
        SchemaDrift = "schema_drift" => QueryFailed,
        CostCapExceeded = "cost_cap_exceeded" => RateLimited,
        InternalError = "internal_error" => Internal,
    }
    refusals {
        PiiBlocked = "pii_blocked" => Unauthorized,
        PolicyBlocked = "policy_blocked" => Unauthorized,
        AllowlistViolation = "allowlist_violation" => Unauthorized,
    }
    failures {
        NoCanonicalJoin = "no_canonical_join" => NotFound,
        AmbiguousJoin = "ambiguous_join" => InvalidInput,
        UnknownJoinName = "unknown_join_name" => NotFound,
        JoinNameMismatch = "join_name_mismatch" => InvalidInput,
        UnknownMetric = "unknown_metric" => NotFound,
        UnreachableEntity = "unreachable_entity" => NotFound,
        AmbiguousPath = "ambiguous_path" => InvalidInput,
        UnknownViaJoin = "unknown_via_join" => NotFound,
        UnknownOrderByColumn = "unknown_order_by_column" => NotFound,
        UnknownGroupByColumn = "unknown_group_by_column" => NotFound,
        UnknownFilterColumn = "unknown_filter_column" => NotFound,
        UnknownMeasureColumn = "unknown_measure_column" => NotFound,
        InvalidTimeGrain = "invalid_time_grain" => InvalidInput,
        GrainMismatch = "grain_mismatch" => InvalidInput,
        AmbiguousTimeDimension = "ambiguous_time_dimension" => InvalidInput,
        InvalidArgument = "invalid_argument" => InvalidInput,
    }
}
