//! The fleet's shared state, when one is configured (`[state]`, `TEAAGENT_REDIS_URL`): Redis
//! answers, and takes the store's scripts.

use teaagent_core::config::ENV_REDIS_URL;
use teaagent_core::config::Settings;
use teaagent_core::fleet::{RedisOptions, RedisStore};
use teaagent_core::visible::escape;

use super::Finding;

pub(super) fn check(settings: &Settings, findings: &mut Vec<Finding>) {
    let Some(state) = &settings.state else { return };
    let options = RedisOptions {
        prefix: state.prefix.clone(),
        timeout: state.timeout,
        per_principal: state.per_principal,
        fallback_local: state.fallback_local,
    };
    let fix = format!("start Redis, or correct `[state] redis_url` (or {ENV_REDIS_URL})");
    let store = match RedisStore::new(&state.redis_url, options) {
        Ok(store) => store,
        Err(why) => {
            findings.push(Finding::error("fleet", "Redis", escape(&why)).fix(fix));
            return;
        }
    };
    let subject = escape(store.address());
    let answered = tokio::runtime::Builder::new_current_thread().enable_all().build().map(|runtime| {
        runtime.block_on(async {
            store.ping().await?;
            store.load_scripts().await
        })
    });
    match answered {
        Ok(Ok(scripts)) => findings.push(Finding::ok(
            "fleet",
            subject,
            format!(
                "answers, and took the store's {scripts} scripts (keys prefixed `{}`)",
                escape(&state.prefix)
            ),
        )),
        Ok(Err(e)) => findings.push(Finding::error("fleet", subject, escape(&e.to_string())).fix(fix)),
        Err(e) => findings.push(Finding::error("fleet", subject, format!("cannot start a runtime: {e}"))),
    }
}
