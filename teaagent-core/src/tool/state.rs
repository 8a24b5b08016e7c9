//! Shared application state, the axum way: a value registered once on the server
//! ([`Server::state`](crate::Server::state)) and taken by a tool as a [`State<T>`] parameter.
//!
//! ```no_run
//! use std::sync::{Arc, Mutex};
//! use teaagent_core::{Registry, Server, State, tool};
//!
//! /// The notes, shared by every call (an `Arc`, so a clone per call is cheap).
//! #[derive(Clone, Default)]
//! struct Notes(Arc<Mutex<Vec<String>>>);
//!
//! /// Adds a note.
//! #[tool]
//! fn add_note(
//!     State(notes): State<Notes>,
//!     /// The note's text.
//!     text: String,
//! ) -> String {
//!     let mut notes = notes.0.lock().unwrap_or_else(|p| p.into_inner());
//!     notes.push(text);
//!     format!("{} notes", notes.len())
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     let registry = Registry::builder().registered().build().expect("valid tools");
//!     Server::new(registry).state(Notes::default()).run_stdio()
//! }
//! ```
//!
//! Compared with axum: the parameter is the same (`State<T>(pub T)`, `Deref`, cloned per call).
//! axum's router has *one* state type, checked by the compiler through `Router<S>`, and
//! substates come out of it with `FromRef`; its `Extension<T>` is keyed by type instead, and a
//! missing one fails each request with a 500. A teaagent registry is collected at link time, so
//! the compiler cannot see which server a tool ends up in: here the values are keyed by type
//! (any number, no `FromRef` needed to take a part) and the check that axum's compiler makes is
//! made once, when the server starts, so a missing one never reaches a call.
//!
//! Design, and why:
//! - **Keyed by type.** A server holds any number of state values, one per type (a second
//!   `.state(...)` of the same type replaces the first). Give each piece its own type (a newtype
//!   such as `Notes` above) rather than registering a bare `Arc<Mutex<Vec<String>>>`, so two
//!   pieces of the same shape cannot be confused.
//! - **Cloned per call**, as axum does: `T: Clone + Send + Sync + 'static`, checked at compile
//!   time on the parameter's type. Put what changes behind an `Arc` (with a `Mutex`/`RwLock`),
//!   or make `T` a struct of `Arc`s, so the clone is a reference-count increment.
//! - **Checked before serving.** The registry knows which state types each tool takes (the
//!   attribute records them; a hand-built [`ToolDef`](crate::ToolDef) declares them with
//!   [`ToolDefBuilder::needs_state`](crate::tool::ToolDefBuilder::needs_state)). Before the server reads its first
//!   message, every need is compared with what the server was given; a missing type refuses to
//!   start with [`MissingState`], which names the tool, the type and the `.state(...)` call to
//!   add. So a call never fails for want of state (axum checks this with types, which a
//!   link-time registry cannot; this is the earliest moment it can be checked).
//! - **Not in the schema.** A `State<T>` parameter is injected like `&ToolContext`; the model
//!   never sees it.
//! - **Hand-written tools** read it with [`ToolContext::state`](crate::ToolContext::state);
//!   tools called directly (unit tests) get it with
//!   [`ToolContext::with_state`](crate::ToolContext::with_state).

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::ops::{Deref, DerefMut};
use std::sync::Arc;

/// A tool parameter that receives the server's state of type `T` (registered with
/// [`Server::state`](crate::Server::state)); a clone of it, for each call. See the
/// [module documentation](self) for the design.
///
/// Take it apart in the parameter list (`State(notes): State<Notes>`) or use it through
/// `Deref` (`notes: State<Notes>`, then `notes.0` or `notes.method()`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct State<T>(pub T);

impl<T> Deref for State<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> DerefMut for State<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// One state type a tool needs: its type id, and its name for messages.
#[derive(Clone, Copy)]
pub struct StateNeed {
    type_id: TypeId,
    type_name: &'static str,
}

impl StateNeed {
    /// The need of a `T`.
    pub fn of<T: Clone + Send + Sync + 'static>() -> Self {
        Self { type_id: TypeId::of::<T>(), type_name: std::any::type_name::<T>() }
    }

    /// The type's id.
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The type's name (as [`std::any::type_name`] spells it).
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl fmt::Debug for StateNeed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.type_name)
    }
}

impl PartialEq for StateNeed {
    fn eq(&self, other: &Self) -> bool {
        self.type_id == other.type_id
    }
}

impl Eq for StateNeed {}

/// The state values of a server, one per type. Cheap to clone (shared until changed); while
/// empty it holds no allocation (every call's context starts empty).
#[derive(Clone, Default)]
pub(crate) struct States(Option<Arc<HashMap<TypeId, Given>>>);

/// One value given: its type's name (for messages) and the value.
type Given = (&'static str, Arc<dyn Any + Send + Sync>);

impl States {
    /// Adds (or replaces) the value of type `T`.
    pub(crate) fn insert<T: Clone + Send + Sync + 'static>(&mut self, value: T) {
        Arc::make_mut(self.0.get_or_insert_default())
            .insert(TypeId::of::<T>(), (std::any::type_name::<T>(), Arc::new(value)));
    }

    fn values(&self) -> Option<&HashMap<TypeId, Given>> {
        self.0.as_deref()
    }

    /// The value of type `T`, if there is one.
    pub(crate) fn get<T: 'static>(&self) -> Option<&T> {
        self.values()?.get(&TypeId::of::<T>()).and_then(|(_, v)| v.downcast_ref::<T>())
    }

    /// A value given that is not of the needed type but close to it, as it is spelled: the type
    /// wrapped (`Arc<Notes>` for `Notes`), or unwrapped (`Notes` for `Arc<Notes>`), or another
    /// type of the same name.
    fn near(&self, need: &str) -> Option<&'static str> {
        let short = |name: &str| name.rsplit("::").next().unwrap_or(name).to_owned();
        let wraps = |outer: &str, inner: &str| {
            outer.contains(&format!("<{inner}>")) || outer.contains(&format!("<{inner},"))
        };
        let given: Vec<&'static str> =
            self.values().into_iter().flat_map(|v| v.values()).map(|(name, _)| *name).collect();
        given
            .iter()
            .find(|g| wraps(g, need) || wraps(need, g))
            .or_else(|| given.iter().find(|g| short(g) == short(need)))
            .copied()
    }

    /// Whether a value of the needed type is there.
    pub(crate) fn has(&self, need: StateNeed) -> bool {
        self.values().is_some_and(|v| v.contains_key(&need.type_id))
    }

    /// Every need of `tools` that is not met, in their order.
    pub(crate) fn check<'a>(
        &self,
        tools: impl IntoIterator<Item = &'a super::ToolDef>,
    ) -> Result<(), MissingState> {
        let missing: Vec<(String, &'static str, Option<&'static str>)> = tools
            .into_iter()
            .flat_map(|tool| {
                tool.state_needs()
                    .filter(|need| !self.has(*need))
                    .map(|need| (tool.name().to_owned(), need.type_name(), self.near(need.type_name())))
            })
            .collect();
        if missing.is_empty() { Ok(()) } else { Err(MissingState { missing }) }
    }
}

impl fmt::Debug for States {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "States({} values)", self.values().map_or(0, HashMap::len))
    }
}

/// A server whose tools take state it was not given ([`Server::state`](crate::Server::state)):
/// it refuses to start. The message names each tool, the type and the call to add.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct MissingState {
    /// `(tool, type name, a close type that was given instead)` for every need not met.
    missing: Vec<(String, &'static str, Option<&'static str>)>,
}

impl MissingState {
    /// `(tool, type name)` for every need not met, in registry order.
    pub fn missing(&self) -> impl Iterator<Item = (&str, &'static str)> {
        self.missing.iter().map(|(tool, ty, _)| (tool.as_str(), *ty))
    }
}

impl fmt::Display for MissingState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the server was not given the state its tools take, so it does not start:")?;
        for (tool, ty, near) in &self.missing {
            match near {
                Some(given) => write!(
                    f,
                    "\n  tool `{tool}` takes `State<{ty}>`, but the server was given a `{given}`, which is another type: give it a `{ty}` (`.state(value)` with the value of exactly that type), or have the tool take `State<{given}>`"
                )?,
                None => write!(
                    f,
                    "\n  tool `{tool}` takes `State<{ty}>`, but the server has no `{ty}`: add one with `.state(...)`, as in `Server::new(registry).state(value)`"
                )?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    struct Counter(u32);

    #[test]
    fn values_are_keyed_by_type_and_replaced() {
        let mut states = States::default();
        assert_eq!(states.get::<Counter>(), None);
        states.insert(Counter(1));
        states.insert(String::from("x"));
        let shared = states.clone();
        states.insert(Counter(2));
        assert_eq!(states.get::<Counter>(), Some(&Counter(2)));
        assert_eq!(states.get::<String>().map(String::as_str), Some("x"));
        // A clone taken before is not changed by a later insert.
        assert_eq!(shared.get::<Counter>(), Some(&Counter(1)));
        assert!(states.has(StateNeed::of::<Counter>()));
        assert!(!states.has(StateNeed::of::<u8>()));
    }

    #[test]
    fn every_need_of_hand_built_and_attribute_tools_is_checked() {
        use crate::DefineTool;
        let hand_built = crate::ToolDef::builder("greet")
            .description("Greets.")
            .input_schema(serde_json::json!({"type": "object", "properties": {}}))
            .needs_state::<Counter>()
            .needs_state::<Counter>()
            .handler(crate::Handler::new(|_, _| async { Ok(crate::CallToolResult::text("hi")) }))
            .build();
        assert_eq!(hand_built.state_needs().count(), 1, "declared twice is once");
        let tools = [hand_built, crate::tool::tests::bump::tool_def()];
        let mut states = States::default();
        let missing = states.check(&tools).expect_err("nothing given");
        let names: Vec<_> = missing.missing().map(|(tool, _)| tool.to_owned()).collect();
        assert_eq!(names, ["greet", "bump"]);
        states.insert(Counter(0));
        let missing = states.check(&tools).expect_err("one given");
        assert_eq!(missing.missing().map(|(tool, _)| tool).collect::<Vec<_>>(), ["bump"]);
        states.insert(Arc::new(std::sync::atomic::AtomicU32::new(0)));
        assert_eq!(states.check(&tools), Ok(()));
    }

    #[test]
    fn missing_state_names_tool_type_and_the_call() {
        let missing = MissingState { missing: vec![("add_note".into(), "notes::Notes", None)] };
        let text = missing.to_string();
        assert!(
            text.contains(
                "tool `add_note` takes `State<notes::Notes>`, but the server has no `notes::Notes`"
            ),
            "{text}"
        );
        assert!(text.contains("`Server::new(registry).state(value)`"), "{text}");
    }

    #[test]
    fn a_close_type_given_instead_is_named() {
        let mut states = States::default();
        states.insert(Arc::new(Counter(0)));
        let need = std::any::type_name::<Counter>();
        let given = std::any::type_name::<Arc<Counter>>();
        assert_eq!(states.near(need), Some(given));
        let mut unwrapped = States::default();
        unwrapped.insert(Counter(0));
        assert_eq!(unwrapped.near(given), Some(need));
        let missing = MissingState { missing: vec![("bump".into(), need, states.near(need))] };
        let text = missing.to_string();
        assert!(
            text.contains(&format!("but the server was given a `{given}`, which is another type")),
            "{text}"
        );
        assert!(text.contains(&format!("have the tool take `State<{given}>`")), "{text}");
    }
}
