//! Which of the header's optional items stand in its one row, and which wait in its "More"
//! menu: the title keeps a readable width, and the items take what is left in the order of
//! their importance, each whole; the first that does not fit and all after it go to the
//! menu (so the row never reorders). Pure: the header measures, this decides.

/// The fewest pixels the title keeps, however narrow the header (about 18 characters).
pub const TITLE_MIN_PX: f64 = 160.0;

/// The share of the header's width the title keeps when its text needs that much.
pub const TITLE_SHARE: f64 = 0.4;

/// What the header measured, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Room {
    /// The header's width inside its padding.
    pub width: f64,
    /// What always stands in the row besides the title and the items: the drawer button,
    /// the rename pencil, the connection, the menu button, and the gaps between them.
    pub fixed: f64,
    /// The title's whole text's width (it ellipses below that).
    pub title: f64,
    /// The gap before each item.
    pub gap: f64,
}

impl Room {
    /// What the title keeps: its whole text up to [`TITLE_SHARE`] of the header, never
    /// less than [`TITLE_MIN_PX`] (nor more than its text needs).
    pub fn title_reserve(&self) -> f64 {
        let share = (self.width * TITLE_SHARE).max(TITLE_MIN_PX);
        self.title.min(share)
    }
}

/// How many of the items, in order, stand in the row. `widths` are the items' widths in
/// order: `Some(0.0)` for one with nothing to show (it takes no room nor gap), `None` for
/// one not measured yet (it is tried in the row, and measured there).
pub fn inline_count(room: Room, widths: &[Option<f64>]) -> usize {
    let mut left = room.width - room.fixed - room.title_reserve();
    for (at, width) in widths.iter().enumerate() {
        match width {
            Some(width) if *width <= 0.0 => {}
            Some(width) => {
                left -= width + room.gap;
                if left < 0.0 {
                    return at;
                }
            }
            None => {}
        }
    }
    widths.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DESKTOP: Room = Room {
        width: 960.0,
        fixed: 180.0,
        title: 300.0,
        gap: 14.0,
    };

    #[test]
    fn items_fill_the_row_in_order_and_the_first_that_does_not_fit_ends_it() {
        // 960 - 180 - 300 = 480 for items.
        let widths = [Some(60.0), Some(90.0), Some(70.0), Some(200.0), Some(20.0)];
        // 74 + 104 + 84 = 262; + 214 = 476; + 34 = 510 > 480.
        assert_eq!(inline_count(DESKTOP, &widths), 4);
        let wider = [Some(60.0), Some(420.0), Some(20.0)];
        assert_eq!(
            inline_count(DESKTOP, &wider),
            1,
            "a small item after one that does not fit waits in the menu too"
        );
    }

    #[test]
    fn absent_items_take_no_room_and_unmeasured_ones_are_tried() {
        let widths = [Some(0.0), None, Some(400.0), Some(0.0)];
        assert_eq!(inline_count(DESKTOP, &widths), 4);
        assert_eq!(inline_count(DESKTOP, &[]), 0);
    }

    #[test]
    fn the_title_keeps_a_readable_width_on_a_phone() {
        let phone = Room {
            width: 366.0,
            fixed: 120.0,
            title: 400.0,
            gap: 8.0,
        };
        assert_eq!(phone.title_reserve(), TITLE_MIN_PX);
        // 366 - 120 - 160 = 86: a 60 px button fits, a second does not.
        assert_eq!(inline_count(phone, &[Some(60.0), Some(60.0)]), 1);
        let narrower = Room {
            width: 300.0,
            ..phone
        };
        assert_eq!(inline_count(narrower, &[Some(60.0)]), 0);
    }

    #[test]
    fn a_short_title_leaves_the_rest_to_the_items() {
        let short = Room {
            title: 60.0,
            ..DESKTOP
        };
        assert_eq!(short.title_reserve(), 60.0);
        let long = Room {
            title: 900.0,
            ..DESKTOP
        };
        assert_eq!(long.title_reserve(), 960.0 * TITLE_SHARE);
    }
}
