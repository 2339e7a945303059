//! The provider a session talks to, and switching it (`/model NAME/model`, `--model`,
//! a resumed session's record): the client is rebuilt for the new provider, with that
//! provider's own settings and key only, the window is looked up again for the new
//! model (and learnt from the new endpoint when nothing knows it), and the switch is
//! recorded with the model written `NAME/model`. Learning the window from the
//! endpoint, once the first answer has begun, is here too (`start_learning`). It must
//! not know how switches are shown.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::agent::AgentSetup;
use crate::agent::turn::{SessionState, TurnContext};
use crate::config::providers::{Endpoint, ProviderId};
use crate::cost::PriceTable;
use crate::llm::window::{self, ContextWindow, WindowCache};
use crate::llm::{Client, ProviderConfig};
use crate::protocol::WindowSource;
use crate::protocol::{Event, Usage};

/// The provider in use now.
#[derive(Clone)]
struct Current {
    id: ProviderId,
    client: Arc<Client>,
    prices: PriceTable,
}

/// The session's client, shared by the dispatcher, every turn and sub-agent; replaced
/// whole by a switch (between turns only, so a request never sees half of one).
#[derive(Clone)]
pub struct SharedClient {
    current: Arc<Mutex<Current>>,
    /// Counts switches, so an answer learnt for an earlier model is not taken for the
    /// new one.
    generation: Arc<AtomicU64>,
}

impl std::fmt::Debug for SharedClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedClient")
            .field("provider", &self.id())
            .finish()
    }
}

impl SharedClient {
    /// The client of provider `id`, pricing with `prices`.
    pub fn new(id: ProviderId, client: Client, prices: PriceTable) -> Self {
        SharedClient {
            current: Arc::new(Mutex::new(Current {
                id,
                client: Arc::new(client),
                prices,
            })),
            generation: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Current> {
        // The value is replaced whole: a poisoned lock still holds a valid one.
        self.current
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The client requests go through now.
    pub fn client(&self) -> Arc<Client> {
        self.lock().client.clone()
    }

    /// The provider settings in use now.
    pub fn config(&self) -> ProviderConfig {
        self.lock().client.config().clone()
    }

    /// Which provider is in use.
    pub fn id(&self) -> ProviderId {
        self.lock().id.clone()
    }

    /// `usage` with its cost at the current provider's price for `model`.
    pub fn priced(&self, model: &str, usage: Usage) -> Usage {
        self.lock().prices.priced(model, usage)
    }

    /// Adds prices the provider published for models the user did not price.
    pub fn add_listed_prices(&self, listed: &[crate::llm::models::ListedModel]) {
        let mut current = self.lock();
        for model in listed {
            if let Some(price) = model.price
                && !current.prices.has(&model.id)
            {
                current.prices.insert(model.id.clone(), price);
            }
        }
    }

    /// The number of switches so far.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    fn replace(&self, current: Option<Current>) {
        if let Some(current) = current {
            *self.lock() = current;
        }
        self.generation.fetch_add(1, Ordering::AcqRel);
    }
}

/// What a switch did, for the frontends.
#[derive(Debug, Clone, PartialEq)]
pub struct Switched {
    /// The model as shown and recorded: `NAME/model` on a named provider.
    pub shown: String,
    /// The window known for it now, if any.
    pub window: Option<ContextWindow>,
}

/// The model in use, written as it is shown and recorded.
pub fn shown_model(setup: &AgentSetup, state: &SessionState) -> String {
    setup.client.id().qualify(&state.model)
}

/// `/model SPEC`: the provider and model read from `spec`; refused (with the reason)
/// when the provider is not configured, its client cannot be built, or its `/models`
/// list does not have the model.
pub async fn switch(
    setup: &AgentSetup,
    state: &mut SessionState,
    spec: &str,
) -> Result<Switched, String> {
    let (endpoint, model) = chosen(setup, spec)?;
    match crate::llm::models::list(&endpoint.provider).await {
        Ok(listed) => {
            if let Some(refusal) = super::models::refusal_for(&endpoint.id, &listed, &model) {
                return Err(refusal);
            }
            apply(setup, state, &endpoint, model, Some(&listed))
        }
        // An endpoint that cannot be asked is taken at its word.
        Err(_) => apply(setup, state, &endpoint, model, None),
    }
}

/// A resumed session's model (`NAME/model` or a bare id on the provider in use), taken
/// without asking the endpoint.
pub fn adopt(setup: &AgentSetup, state: &mut SessionState, spec: &str) -> Result<Switched, String> {
    let (endpoint, model) = chosen(setup, spec)?;
    apply(setup, state, &endpoint, model, None)
}

/// The endpoint and model `spec` names.
fn chosen(setup: &AgentSetup, spec: &str) -> Result<(Endpoint, String), String> {
    let choice = setup.providers.choose(spec.trim(), &setup.client.id());
    if choice.model.trim().is_empty() {
        return Err(format!(
            "no model after `{}/`; the model is unchanged (write /model NAME/MODEL)",
            choice.provider.name()
        ));
    }
    let Some(endpoint) = setup.providers.endpoint(&choice.provider) else {
        return Err(format!(
            "no provider `{}` is configured; the model is unchanged",
            choice.provider.name()
        ));
    };
    Ok((endpoint.clone(), choice.model))
}

/// Makes the switch: a new client when the provider changes, the model, the window.
fn apply(
    setup: &AgentSetup,
    state: &mut SessionState,
    endpoint: &Endpoint,
    model: String,
    listed: Option<&[crate::llm::models::ListedModel]>,
) -> Result<Switched, String> {
    let current = if endpoint.id == setup.client.id() {
        None
    } else {
        let client = Client::new(endpoint.provider.clone())
            .map_err(|e| format!("cannot use provider `{}`: {e}", endpoint.id.name()))?;
        Some(Current {
            id: endpoint.id.clone(),
            client: Arc::new(client),
            prices: endpoint.prices.clone(),
        })
    };
    setup.client.replace(current);
    if let Some(listed) = listed {
        setup.client.add_listed_prices(listed);
    }
    state.model = model;
    let window = window::initial(
        endpoint.context_window,
        setup.window_learning.cache(),
        &endpoint.provider.base_url,
        &state.model,
    );
    setup.context_window.replace(window);
    let settled = matches!(
        window.map(|w| w.source),
        Some(WindowSource::Config | WindowSource::Cache)
    );
    setup.window_learning.rearm(!settled);
    Ok(Switched {
        shown: endpoint.id.qualify(&state.model),
        window,
    })
}

/// Starts learning the window from the endpoint, the first time only: called once the
/// first answer has begun to arrive, so the questions never compete with the first
/// request, and a `-p` run has the rest of the answer's time for them.
pub(super) fn start_learning(ctx: &TurnContext, model: &str) {
    if let Some(cache) = ctx.setup.window_learning.start() {
        let task = tokio::spawn(learn_window(ctx.clone(), cache, model.to_string()));
        ctx.setup.window_learning.track(task);
    }
}

/// Asks the endpoint for the model's window; remembers and announces what it learns.
async fn learn_window(ctx: TurnContext, cache: WindowCache, model: String) {
    let generation = ctx.setup.client.generation();
    let provider = ctx.setup.client.config();
    let Some(window) = crate::llm::window::learn(&provider, &model).await else {
        return;
    };
    // A switch while the endpoint was asked: this answer is another model's.
    if ctx.setup.client.generation() != generation {
        return;
    }
    if let Err(e) = cache.put(&provider.base_url, &model, window) {
        tracing::warn!("cannot cache the context window: {e}");
    }
    if ctx.setup.context_window.set(window) {
        ctx.emit(Event::ContextWindow {
            tokens: window.tokens,
            source: window.source,
        });
    }
}
