//! The models the server offers (`GET /api/models`), read once per signed-in page and
//! shared by everything that offers a choice of model (the composer's picker, an answer's
//! "Regenerate with…").

use leptos::prelude::*;
use shared::api::ModelList;

/// The server's models, once they arrived (`None` while loading or if they cannot be read).
#[derive(Clone, Copy)]
pub struct Models(LocalResource<Option<ModelList>>);

impl Models {
    /// The list, when it arrived. Reactive.
    pub fn get(self) -> Option<ModelList> {
        self.0.get().flatten()
    }

    /// The models to choose from when there is a choice (more than one). Reactive.
    pub fn choices(self) -> Option<Vec<String>> {
        self.get()
            .map(|list| list.models)
            .filter(|models| models.len() > 1)
    }
}

/// Reads the models and provides them to the subtree.
pub fn provide_models() -> Models {
    let models = Models(LocalResource::new(|| async {
        crate::api::rest::models().await.ok()
    }));
    provide_context(models);
    models
}

/// The models from context, if a signed-in page provided them (a share link's view does
/// not).
pub fn use_models() -> Option<Models> {
    use_context::<Models>()
}
