//! The reasons an error carries: each a `data.reason` string on the wire and a phrase for the
//! message.

use serde::Serialize;

macro_rules! reasons {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $wire:literal, $text:literal;)* }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vdoc])* $variant,)*
        }

        impl $name {
            /// The `data.reason` string sent on the wire.
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$variant => $wire,)* }
            }

            /// A short description for the error message.
            pub fn describe(self) -> &'static str {
                match self { $(Self::$variant => $text,)* }
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
    };
}

reasons! {
    /// Why a message is an invalid request (-32600).
    InvalidRequest {
        /// Valid JSON, but not a request, notification or response.
        NotAMessage => "not_a_message", "not a JSON-RPC 2.0 request or notification";
        /// `jsonrpc` is missing or not `"2.0"`.
        WrongVersion => "wrong_jsonrpc_version", "`jsonrpc` must be \"2.0\"";
        /// The id is not a string or an integer.
        InvalidId => "invalid_id", "`id` must be a string or an integer";
        /// The method is not a string.
        InvalidMethod => "invalid_method", "`method` must be a string";
        /// Params that are neither an object nor an array.
        InvalidParamsType => "invalid_params_type", "`params` must be an object";
        /// A line longer than the configured maximum.
        LineTooLong => "line_too_long", "the line is longer than the server's maximum";
        /// An empty batch.
        EmptyBatch => "empty_batch", "an empty batch";
        /// A batch when the negotiated version does not allow them.
        BatchNotSupported => "batch_not_supported", "batches are accepted only under protocol version 2025-03-26";
        /// An id already in use by a request still in flight.
        DuplicateId => "duplicate_id", "a request with this id is still in flight";
        /// A request before `initialize`.
        NotInitialized => "not_initialized", "the session is not initialized: send `initialize` first";
        /// A second `initialize`.
        AlreadyInitialized => "already_initialized", "the session is already initialized";
        /// `initialize` in a process whose first message chose the modern era.
        ModernEra => "era_modern", "this process serves protocol 2026-07-28, chosen by its first message: there is no `initialize`; start a new process to use the legacy handshake";
        /// More `subscriptions/listen` streams than the server keeps open at once.
        TooManyListeners => "too_many_subscriptions", "too many `subscriptions/listen` streams are open; cancel one first";
        /// Streamable HTTP: a message that belongs to no session and names no modern protocol
        /// version.
        NoSession => "no_session", "send `initialize` first and then the Mcp-Session-Id it answers with (protocol 2025-11-25 and before), or write protocol 2026-07-28 (`_meta` and the MCP-Protocol-Version header on every request)";
        /// Streamable HTTP: a session's messages name another protocol version than it
        /// negotiated.
        SessionVersion => "session_version_mismatch", "the MCP-Protocol-Version header differs from the version this session negotiated";
        /// A modern request in a process whose first message was `initialize`.
        LegacyEra => "era_legacy", "this process serves the version negotiated by `initialize`: a request written in protocol 2026-07-28 (`_meta` naming a protocol version, or `server/discover`) is refused; start a new process for the modern era";
    }
}

reasons! {
    /// Why params are invalid (-32602).
    ParamsProblem {
        /// The params do not have the method's shape.
        Malformed => "invalid_params", "malformed params";
        /// A pagination cursor this server did not issue (or no longer accepts).
        InvalidCursor => "invalid_cursor", "invalid cursor";
        /// Modern era: `_meta` lacks a required key or has a malformed one.
        InvalidMeta => "invalid_meta", "invalid request `_meta`";
        /// Modern era: a `requestState` that is tampered with, expired, already used, or for
        /// another call.
        InvalidRequestState => "invalid_request_state", "invalid `requestState`";
        /// `prompts/get` or `completion/complete` names a prompt the server does not have.
        UnknownPrompt => "unknown_prompt", "unknown prompt";
        /// A prompt's arguments: a required one missing, one that is not a string, or one the
        /// prompt does not take.
        InvalidPromptArguments => "invalid_prompt_arguments", "invalid prompt arguments";
        /// `skills/get` names a URI that is no skill's `SKILL.md` here.
        UnknownSkill => "unknown_skill", "unknown skill";
        /// `resources/directory/read` names a URI that is not a folder of a skill served here.
        NotADirectory => "not_a_directory", "not a directory";
        /// `tasks/get`, `tasks/update` or `tasks/cancel` names a task this server does not have
        /// for this caller (never had, expired, or another caller's).
        UnknownTask => "unknown_task", "unknown task";
    }
}

reasons! {
    /// Why an argument mirrored into an `Mcp-Param-*` header was refused (-32020, see
    /// [`crate::schema::headers`]).
    ParamHeaderProblem {
        /// The argument is in the body, its header is not.
        Missing => "missing", "is missing";
        /// The header says something else than the body.
        Differs => "differs", "says something else";
        /// The header is `=?base64?…?=` with a value that is not strict Base64 of UTF-8 text.
        InvalidBase64 => "invalid_base64", "is `=?base64?…?=` around something that is not strict Base64 of UTF-8 text";
        /// The header is sent more than once.
        Repeated => "repeated", "is sent more than once";
        /// The header is longer than the server reads.
        TooLong => "too_long", "is longer than the 8 KiB the server reads";
    }
}

reasons! {
    /// Why a `#[path]` argument was refused (-32602).
    PathRefusal {
        /// It resolves outside the workspace root.
        OutsideWorkspace => "outside_workspace", "is outside the workspace";
        /// A FIFO, socket or device.
        SpecialFile => "special_file", "is not a regular file or directory";
        /// A write to a file with more than one hard link.
        HardLinked => "hard_linked", "has more than one hard link, so writing it could change a file outside the workspace";
        /// A symlink loop or too many symlinks.
        SymlinkLoop => "symlink_loop", "has too many levels of symbolic links";
        /// Not a valid path (empty, NUL byte, not UTF-8).
        InvalidPath => "invalid_path", "is not a valid path";
        /// A write inside a `.git` or `.teaagent` directory (`crate::workspace::UNWRITABLE_DIRS`).
        Unwritable => "unwritable", "is inside a `.git` or `.teaagent` directory, which tools may read but never change (git runs hooks and configuration from `.git` as programs; `.teaagent` holds teaagent's settings)";
        /// teaagent's home, which lies beneath the root.
        TeaagentHome => "teaagent_home", "is in teaagent's home (configuration, trust store, tokens, audit log), which no tool may reach";
    }
}

reasons! {
    /// Why a resource was refused (-32602).
    ResourceRefusal {
        /// No resource at that URI.
        NotFound => "not_found", "no such resource";
        /// The URI resolves outside the workspace.
        OutsideWorkspace => "outside_workspace", "resolves outside the workspace";
        /// The URI is not of the accepted form.
        InvalidUri => "invalid_uri", "not a valid teaagent://workspace/ URI";
        /// Larger than the read cap.
        TooLarge => "too_large", "larger than the resource size cap";
        /// A FIFO, socket, device or directory.
        SpecialFile => "special_file", "not a regular file";
        /// A path the permission policy hides (a deny rule on paths).
        Hidden => "hidden_by_policy", "hidden by the permission policy (a deny rule on its path)";
        /// teaagent's home, which lies beneath the root.
        TeaagentHome => "teaagent_home", "in teaagent's home, which no tool or resource may reach";
    }
}

reasons! {
    /// How a tool failed inside the framework (-32000).
    Failure {
        /// It panicked.
        Panic => "panic", "panicked";
        /// It ran past its timeout.
        Timeout => "timeout", "timed out";
        /// Something in the framework failed around it.
        Internal => "internal", "failed inside the framework";
        /// Too many calls were already waiting for a turn.
        Overloaded => "overloaded", "was refused because the server is overloaded";
        /// Its external server (the gateway's) exited during the call; it is being restarted.
        ExternalExited => "external_server_exited", "failed because its external server exited during the call";
        /// Its external server is not running (starting, restarting, or failed to start).
        ExternalUnavailable => "external_server_unavailable", "is unavailable because its external server is not running";
        /// Its external server's tools are withheld (its tool list changed since the user
        /// allowed it, or it is no longer trusted) until the user allows it again.
        Withheld => "withheld", "is withheld until the user allows its external server again";
        /// The state a fleet shares (Redis, `teaagent_core::fleet`, feature `redis`) could not be reached, and the
        /// call needs it (a rate limit): refused rather than admitted unchecked.
        StoreUnavailable => "state_unavailable", "was refused because the fleet's shared state (Redis) cannot be reached";
    }
}

reasons! {
    /// What one caller holds too much of ([`Error::CallerLimit`]'s `data.limit`).
    ///
    /// [`Error::CallerLimit`]: super::Error::CallerLimit
    CallerShare {
        /// Calls in progress (`tools/call`, `resources/read`, `prompts/get`).
        Calls => "calls", "calls in progress";
        /// Approval questions open: asked, or waiting for their turn to be asked.
        Questions => "questions", "approval questions open";
        /// `subscriptions/listen` streams open.
        Subscriptions => "subscriptions", "`subscriptions/listen` streams open";
        /// Streamable HTTP requests in progress (each holds its connection).
        Requests => "requests", "HTTP requests in progress";
        /// Tasks not over yet (working or waiting for input).
        Tasks => "tasks", "tasks not over yet";
    }
}

impl CallerShare {
    /// What the caller can do about it.
    pub(super) fn advice(self) -> &'static str {
        match self {
            CallerShare::Questions => "answer one first",
            CallerShare::Subscriptions | CallerShare::Tasks => "cancel one first",
            _ => "retry when one has finished",
        }
    }
}
