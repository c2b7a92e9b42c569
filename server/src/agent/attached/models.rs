//! Which models take images (and PDFs, which both providers read through their vision
//! models): every model but those `--models-without-images` names, or, when it is not
//! set, the text-only models Tandem knows. A model without gets a short note in place of
//! each image or PDF, and the page says so (`GET /api/models` lists them).

/// The models known to take no images, by name (`*`: a prefix).
pub const KNOWN_WITHOUT_IMAGES: [&str; 6] = [
    "gpt-3.5*",
    "o1-mini*",
    "o3-mini*",
    "deepseek*",
    "claude-2*",
    "claude-instant*",
];

/// The models that take no images.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageModels {
    without: Vec<String>,
}

impl Default for ImageModels {
    fn default() -> Self {
        Self::configured(None)
    }
}

impl ImageModels {
    /// The setting: names (a trailing `*` matches a prefix; `none` alone: every model takes
    /// images), or the known ones when `None`.
    pub fn configured(without: Option<&[String]>) -> Self {
        let without = match without {
            None => KNOWN_WITHOUT_IMAGES.iter().map(|s| s.to_string()).collect(),
            Some([only]) if only.trim() == "none" => Vec::new(),
            Some(names) => names
                .iter()
                .map(|name| name.trim().to_string())
                .filter(|name| !name.is_empty())
                .collect(),
        };
        Self { without }
    }

    /// Whether `model` takes images.
    pub fn takes_images(&self, model: &str) -> bool {
        !self
            .without
            .iter()
            .any(|name| match name.strip_suffix('*') {
                Some(prefix) => model.starts_with(prefix),
                None => name == model,
            })
    }

    /// The names and patterns of the models that take none, as set.
    pub fn without(&self) -> &[String] {
        &self.without
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_text_only_models_take_no_images_unless_the_setting_says_otherwise() {
        let known = ImageModels::default();
        assert!(!known.takes_images("gpt-3.5-turbo"));
        assert!(!known.takes_images("o3-mini"));
        assert!(known.takes_images("gpt-4.1-mini"));
        assert!(known.takes_images("claude-sonnet-4-5"));
        let set = ImageModels::configured(Some(&["llava".into(), "local-*".into()]));
        assert!(!set.takes_images("llava"));
        assert!(!set.takes_images("local-7b"));
        assert!(
            set.takes_images("gpt-3.5-turbo"),
            "the setting replaces the known list"
        );
        assert!(ImageModels::configured(Some(&["none".into()])).takes_images("gpt-3.5-turbo"));
    }
}
