//! An endpoint's `#[utoipa::path]` annotation, as the route table holds it: the handler's
//! own operation (its parameters, body and responses), its tags and the schemas its
//! bodies name. What every operation of a kind shares is not in it ([`super::common`]).

use utoipa::openapi::path::{HttpMethod, Operation};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::RefOr;

/// What `#[utoipa::path]` generates beside a handler: `__path_<handler>`.
///
/// utoipa 5 keeps an annotation's `tag` and the schemas its bodies name out of
/// [`utoipa::Path`]; its own `OpenApi` derive reads them through `utoipa::__dev`, and so
/// does [`Annotation::of`] (Cargo.lock holds the version; a change there fails to build).
pub trait Annotated:
    utoipa::Path + utoipa::__dev::Tags<'static> + utoipa::__dev::SchemaReferences
{
}

impl<T> Annotated for T where
    T: utoipa::Path + utoipa::__dev::Tags<'static> + utoipa::__dev::SchemaReferences
{
}

/// The schemas an annotation's bodies name, by name.
type Schemas = Vec<(String, RefOr<Schema>)>;

/// One handler's annotation, read when the document is built.
#[derive(Clone, Copy)]
pub struct Annotation {
    path: fn() -> String,
    methods: fn() -> Vec<HttpMethod>,
    operation: fn() -> Operation,
    tags: fn() -> Vec<&'static str>,
    schemas: fn(&mut Schemas),
}

impl Annotation {
    /// The annotation a `__path_<handler>` value stands for (only its type counts).
    pub fn of<P: Annotated>(_: P) -> Self {
        Self {
            path: P::path,
            methods: P::methods,
            operation: P::operation,
            tags: <P as utoipa::__dev::Tags>::tags,
            schemas: <P as utoipa::__dev::SchemaReferences>::schemas,
        }
    }

    /// The path it names (the table's entry must name the same).
    pub fn path(&self) -> String {
        (self.path)()
    }

    /// The methods it names (the table's entry must name the one).
    pub fn methods(&self) -> Vec<HttpMethod> {
        (self.methods)()
    }

    /// Its operation, tagged as it says.
    pub fn operation(&self) -> Operation {
        let mut operation = (self.operation)();
        let tags = operation.tags.get_or_insert_with(Vec::new);
        tags.extend((self.tags)().into_iter().map(String::from));
        operation
    }

    /// Adds the schemas its bodies name to `schemas`.
    pub fn schemas(&self, schemas: &mut Schemas) {
        (self.schemas)(schemas);
    }
}
