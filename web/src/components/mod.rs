//! The page's building blocks. Each component reads what it shows from the state in context
//! ([`crate::state`]) and writes only through it; none of them talks to the network itself.

pub mod approval;
pub mod attach;
pub mod branch_switcher;
pub mod budget;
pub mod composer;
pub mod copy_code;
pub mod deadline;
pub mod focus_return;
pub mod form;
pub mod header;
pub mod header_items;
pub mod image_viewer;
pub mod info_dialog;
pub mod instructions_dialog;
pub mod interrupt;
pub mod message;
pub mod more_menu;
pub mod needs_you;
pub mod notice;
pub mod on_first_use;
pub mod queued_messages;
pub mod rating;
pub mod responder;
pub mod session_title;
pub mod share_dialog;
pub mod shortcuts;
pub mod sidebar;
pub mod sign_in;
pub mod state_panel;
pub mod text_box;
pub mod theme_picker;
pub mod tool_call;
pub mod transcript;
pub mod undo;

pub use branch_switcher::BranchSwitcher;
pub use composer::Composer;
pub use header::Header;
pub use needs_you::{NeedsYou, NotificationToggle};
pub use notice::Notice;
pub use shortcuts::Shortcuts;
pub use sidebar::Sidebar;
pub use sign_in::SignIn;
pub use state_panel::{StateButton, StatePanel};
pub use transcript::Transcript;
pub use undo::UndoDelete;
