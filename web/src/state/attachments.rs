//! The files a person attached to the message they are writing, before it is sent: each
//! uploads as soon as there is a session to put it in (a new conversation's wait until its
//! first message creates one), with its progress, and can be removed until the message
//! goes. The message names the uploaded ones by id.

use leptos::prelude::*;
use shared::attachments::{Attachment, MAX_PER_MESSAGE};
use web_sys::File;

use crate::api::upload::upload;
use crate::api::ApiError;

/// Where one attached file stands.
#[derive(Debug, Clone, PartialEq)]
pub enum Upload {
    /// Waits for a session (a new conversation's first message creates it).
    Waiting,
    /// On its way: the percent sent (0–100).
    Sending(u8),
    /// Stored.
    Done(Attachment),
    /// Refused or cut off: why.
    Failed(String),
}

/// One attached file.
#[derive(Debug, Clone)]
pub struct Pending {
    /// Unique in the tray (the `<For>` key).
    pub key: u64,
    pub name: String,
    pub bytes: u64,
    pub upload: Upload,
    file: File,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.upload == other.upload
    }
}

/// The files attached to the message being written.
#[derive(Clone, Copy)]
pub struct Tray {
    files: RwSignal<Vec<Pending>, LocalStorage>,
    next: StoredValue<u64>,
}

impl Default for Tray {
    fn default() -> Self {
        Self {
            files: RwSignal::new_local(Vec::new()),
            next: StoredValue::new(0),
        }
    }
}

impl Tray {
    /// The files, as they stand.
    pub fn files(&self) -> Vec<Pending> {
        self.files.get()
    }

    /// Whether nothing is attached.
    pub fn is_empty(&self) -> bool {
        self.files.with(Vec::is_empty)
    }

    /// Whether a file is still on its way (the message waits for it).
    pub fn uploading(&self) -> bool {
        self.files
            .with(|files| files.iter().any(|f| matches!(f.upload, Upload::Sending(_))))
    }

    /// The ids of the stored files, in the order attached.
    pub fn ids(&self) -> Vec<String> {
        self.files.with(|files| stored_ids(files))
    }

    /// Attaches `files` (at most [`MAX_PER_MESSAGE`] in all; the rest are left out and
    /// `false` returned), uploading them to `session` if there is one.
    pub fn add(&self, files: Vec<File>, session: Option<String>) -> bool {
        let room = MAX_PER_MESSAGE.saturating_sub(self.files.with_untracked(Vec::len));
        let all_fit = files.len() <= room;
        for file in files.into_iter().take(room) {
            let key = self.next.get_value();
            self.next.set_value(key + 1);
            let pending = Pending {
                key,
                name: file.name(),
                bytes: file.size() as u64,
                upload: Upload::Waiting,
                file,
            };
            self.files.update(|files| files.push(pending));
            if let Some(session) = session.clone() {
                self.start(key, session);
            }
        }
        all_fit
    }

    /// Uploads every file still waiting to `session` and waits for all uploads to end;
    /// the stored files' ids, in the order attached, or the first refusal. Whatever it
    /// reads after an upload is read with care: a sign-out may have torn the tray down
    /// meanwhile (then nothing is left to send).
    pub async fn upload_waiting(&self, session: &str) -> Result<Vec<String>, ApiError> {
        let waiting: Vec<u64> = self.files.with_untracked(|files| {
            files
                .iter()
                .filter(|f| f.upload == Upload::Waiting)
                .map(|f| f.key)
                .collect()
        });
        for key in waiting {
            self.send(key, session.to_string()).await;
        }
        let gone = || ApiError::new("signed_out", "The page was signed out.");
        let failed = self
            .files
            .try_with_untracked(|files| {
                files.iter().find_map(|f| match &f.upload {
                    Upload::Failed(why) => Some(why.clone()),
                    _ => None,
                })
            })
            .ok_or_else(gone)?;
        match failed {
            Some(why) => Err(ApiError::new("upload_failed", why)),
            None => self
                .files
                .try_with_untracked(|files| stored_ids(files))
                .ok_or_else(gone),
        }
    }

    /// Removes a file (its upload, if done, stays on the server unreferenced and is freed
    /// with the session).
    pub fn remove(&self, key: u64) {
        self.files.update(|files| files.retain(|f| f.key != key));
    }

    /// Takes the files out, for a message on its way ([`Self::put_back`] if it is refused).
    pub fn take(&self) -> Vec<Pending> {
        self.files.try_update(std::mem::take).unwrap_or_default()
    }

    /// Puts back the files of a message the server refused, ahead of any attached since.
    pub fn put_back(&self, mut files: Vec<Pending>) {
        self.files.update(|now| {
            files.append(now);
            *now = files;
        });
    }

    /// Whether an image or a PDF is attached (what a model without images cannot take).
    pub fn has_visual(&self) -> bool {
        self.files.with(|files| {
            files.iter().any(|f| match &f.upload {
                Upload::Done(stored) => {
                    stored.media_type.starts_with("image/")
                        || stored.media_type == "application/pdf"
                }
                _ => {
                    let kind = f.file.type_();
                    kind.starts_with("image/") || kind == "application/pdf"
                }
            })
        })
    }

    /// Empties the tray (the message went, or another conversation opened).
    pub fn clear(&self) {
        self.files.update(Vec::clear);
    }

    fn start(&self, key: u64, session: String) {
        let tray = *self;
        leptos::task::spawn_local(async move { tray.send(key, session).await });
    }

    async fn send(&self, key: u64, session: String) {
        let Some(file) = self.file(key) else {
            return;
        };
        self.set(key, Upload::Sending(0));
        let tray = *self;
        let progress = move |percent: u8| tray.set(key, Upload::Sending(percent));
        let outcome = match upload(&session, &file, progress).await {
            Ok(stored) => Upload::Done(stored),
            Err(refused) => Upload::Failed(refused.message),
        };
        self.set(key, outcome);
    }

    fn file(&self, key: u64) -> Option<File> {
        self.files
            .try_with_untracked(|files| files.iter().find(|f| f.key == key).map(|f| f.file.clone()))
            .flatten()
    }

    fn set(&self, key: u64, upload: Upload) {
        self.files.update(|files| {
            if let Some(pending) = files.iter_mut().find(|f| f.key == key) {
                pending.upload = upload;
            }
        });
    }
}

/// The ids of the stored files among `files`, in order.
fn stored_ids(files: &[Pending]) -> Vec<String> {
    files
        .iter()
        .filter_map(|f| match &f.upload {
            Upload::Done(stored) => Some(stored.id.clone()),
            _ => None,
        })
        .collect()
}
