//! The compiled schema: a tree of checks, one per keyword, with `$ref`s resolved to nodes.

use regex::Regex;
use serde_json::{Number, Value};

use super::types::Types;

/// A compiled schema: a tree of checks, with `$ref`s resolved to nodes. Compiled once (when the
/// registry is built), used for every call.
#[derive(Debug)]
pub struct Validator {
    pub(super) nodes: Vec<Node>,
}

/// Index of a node in [`Validator::nodes`]; the root is 0.
pub(super) type NodeId = usize;

#[derive(Debug, Default)]
pub(super) struct Node {
    pub(super) checks: Vec<Check>,
}

/// One keyword's check (some keywords, `minContains` or `then`, are folded into another's).
#[derive(Debug)]
pub(super) enum Check {
    False,
    Type(Types),
    /// The `enum` array itself (for the report) and its items.
    Enum(Value),
    Const(Value),
    Properties(Vec<(String, NodeId)>),
    Required(Vec<String>),
    PatternProperties(Vec<(Regex, NodeId)>),
    /// `additionalProperties`: the properties and patterns that cover a property, and the
    /// schema of the rest (`None`: `false`, reported as one problem naming them all).
    Additional {
        known: Vec<String>,
        patterns: Vec<Regex>,
        schema: Option<NodeId>,
    },
    /// `unevaluatedProperties` of the node `owner`: the schema of every property that neither
    /// the owner's own keywords nor its subschemas that accept the value evaluated (`None`:
    /// `false`). serde's `flatten` with `deny_unknown_fields` produces it.
    Unevaluated {
        owner: NodeId,
        known: Vec<String>,
        schema: Option<NodeId>,
    },
    PropertyNames(NodeId),
    MinProperties(u64),
    MaxProperties(u64),
    DependentRequired(Vec<(String, Vec<String>)>),
    PrefixItems(Vec<NodeId>),
    /// `items`: the schema of every item after the first `skip` (`prefixItems`' length).
    Items {
        skip: usize,
        node: NodeId,
    },
    MinItems(u64),
    MaxItems(u64),
    UniqueItems,
    Contains {
        node: NodeId,
        min: u64,
        max: Option<u64>,
    },
    Minimum(Number),
    Maximum(Number),
    ExclusiveMinimum(Number),
    ExclusiveMaximum(Number),
    MultipleOf(Number),
    MinLength(u64),
    MaxLength(u64),
    Pattern(Regex),
    AnyOf(Vec<NodeId>),
    OneOf(Vec<NodeId>),
    AllOf(Vec<NodeId>),
    Not(NodeId),
    If {
        condition: NodeId,
        then: Option<NodeId>,
        otherwise: Option<NodeId>,
    },
    Ref(NodeId),
}
