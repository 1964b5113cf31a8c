//! Maps given as text are kept for the life of the process, so their number is capped: past
//! [`maps::MAX_GIVEN`] a new name is refused, while a name already kept is still served. (A test
//! binary of its own: it fills this process's list.)

use carcassonne_rules::maps::{self, MapError};

#[test]
fn past_the_cap_a_new_map_is_refused_and_a_kept_one_still_served() {
    let text = |n: usize| {
        format!(
            "name = \"Strip {n}\"\noutline = \"\"\"\n 0 | 1 {}\n\"\"\"\n\n[[start]]\nmark = \"1\"\nname = \"West\"\n",
            "# ".repeat(1 + n % 3).trim_end()
        )
    };
    for n in 0..maps::MAX_GIVEN {
        maps::register(&format!("cap-{n}"), &text(n)).expect("under the cap");
    }
    let refused = maps::register("cap-one-more", &text(0));
    assert!(
        matches!(refused, Err(MapError::TooManyGiven { most }) if most == maps::MAX_GIVEN),
        "{refused:?}"
    );
    let again = maps::register("cap-7", &text(7)).expect("a kept map is served");
    assert!(std::ptr::eq(again, maps::map("cap-7").expect("kept")));
}
